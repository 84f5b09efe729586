"""What a run produced, stored and read back by the pipeline: each finished generation with
its tokens, reasons and diagnostics in one transaction, an instance's results (which mark it
finished), and what a resumed run asks of them (a part of :class:`~haf_tui.store.db.Store`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from haf_tui.store.method_schema import insert_method_rows
from haf_tui.store.records import GenerationRecord, InstanceResult
from haf_tui.store.store_base import StoreBase
from haf_tui.vocabulary import null_for_nan


class ResultRows(StoreBase):
    """Generations and instance results."""

    def generation_keys(self, run_id: str) -> set[tuple[str, str, int]]:
        """(instance, stage, sub_index) of every generation already stored for a run."""
        rows = self.connection.execute(
            "SELECT instance_id, stage, sub_index FROM generations WHERE run_id = ?", [run_id]
        ).fetchall()
        return {(r[0], r[1], int(r[2])) for r in rows}

    def finished_instances(self, run_id: str) -> set[str]:
        """Instances whose results (metrics) are stored: a resumed run skips them."""
        rows = self.connection.execute(
            "SELECT instance_id FROM instance_results WHERE run_id = ?", [run_id]
        ).fetchall()
        return {r[0] for r in rows}

    def instance_generations(self, run_id: str, instance_id: str) -> list[dict[str, Any]]:
        """An instance's stored generations with their reasons' texts and confidences and the
        sum of their tokens' logprobs."""
        cursor = self.connection.execute(
            "SELECT g.stage, g.sub_index, g.test, g.decision, g.decision_confidence, "
            "g.output_text, coalesce(list(r.text ORDER BY r.reason_index) "
            "FILTER (WHERE r.text IS NOT NULL), []) AS reason_texts, "
            "coalesce(list(r.confidence ORDER BY r.reason_index) "
            "FILTER (WHERE r.text IS NOT NULL), []) AS reason_confidences, "
            "(SELECT sum(t.logprob) FROM tokens t WHERE t.run_id = g.run_id AND "
            "t.instance_id = g.instance_id AND t.stage = g.stage AND t.sub_index = g.sub_index) "
            "AS logprob_sum "
            "FROM generations g LEFT JOIN reasons r USING (run_id, instance_id, stage, sub_index) "
            "WHERE g.run_id = ? AND g.instance_id = ? "
            "GROUP BY ALL ORDER BY g.stage, g.sub_index",
            [run_id, instance_id],
        )
        columns = [d[0] for d in cursor.description]
        return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]

    def save_generation(self, record: GenerationRecord) -> None:
        """One generation with its tokens, reasons and diagnostics, atomically."""
        g = record
        key = [g.run_id, g.instance_id, g.stage, g.sub_index]
        tokens = g.tokens
        with self.transaction() as con:
            con.execute(
                "INSERT INTO generations VALUES "
                "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, current_timestamp)",
                [
                    *key,
                    g.test,
                    g.seed,
                    g.prompt_text,
                    g.prompt_tokens,
                    g.output_text,
                    len(tokens),
                    g.finish_reason,
                    g.decision,
                    g.decision_source,
                    g.decision_sentence,
                    g.decision_start,
                    g.decision_end,
                    null_for_nan(g.decision_confidence),
                    g.seconds,
                ],
            )
            if tokens:
                con.execute(
                    "INSERT INTO tokens SELECT ?, ?, ?, ?, unnest(?::INTEGER[]), "
                    "unnest(?::INTEGER[]), unnest(?::BLOB[]), unnest(?::VARCHAR[]), "
                    "unnest(?::INTEGER[]), unnest(?::INTEGER[]), unnest(?::DOUBLE[]), "
                    "unnest(?::INTEGER[][]), unnest(?::DOUBLE[][]), unnest(?::VARCHAR[][])",
                    [
                        *key,
                        list(range(len(tokens))),
                        [t.token_id for t in tokens],
                        [t.piece for t in tokens],
                        [t.text for t in tokens],
                        [t.byte_offset for t in tokens],
                        [t.char_offset for t in tokens],
                        [t.logprob for t in tokens],
                        [list(t.top_ids) for t in tokens],
                        [list(t.top_logprobs) for t in tokens],
                        [list(t.top_texts) for t in tokens],
                    ],
                )
            insert_reasons_and_diagnostics(con, key, g)

    def save_instance_result(self, result: InstanceResult) -> None:
        """An instance's stance, metrics and its suites' rows in their methods'
        tables (``result.rows``), atomically: marks the instance finished."""
        with self.transaction() as con:
            insert_instance_results(con, [result])


def insert_instance_results(con: Any, results: Sequence[InstanceResult]) -> None:
    """Instances' stances, metrics and their suites' rows (``result.rows``), inside the
    caller's transaction, each table's rows of them all in one statement: a run's instance
    and a re-score's batch of instances store them alike (a statement each was most of a
    re-score's writes' time)."""
    insert_columns(
        con,
        "instance_results",
        RESULT_COLUMNS,
        [[r.run_id, r.instance_id, r.stance, r.n_reasons, r.stopped] for r in results],
    )
    insert_columns(
        con,
        "reason_metrics",
        REASON_METRIC_COLUMNS,
        [
            [r.run_id, r.instance_id, *m[:4], null_for_nan(m[4])]
            for r in results
            for m in r.reason_metrics
        ],
    )
    insert_columns(
        con,
        "instance_metrics",
        INSTANCE_METRIC_COLUMNS,
        [
            [r.run_id, r.instance_id, m[0], null_for_nan(m[1]), m[2]]
            for r in results
            for m in r.instance_metrics
        ],
    )
    for r in results:
        insert_method_rows(con, r.run_id, r.instance_id, r.rows)


def insert_reasons_and_diagnostics(con: Any, key: list[Any], g: GenerationRecord) -> None:
    """A generation's reasons (spans, token scores, confidence) and parse diagnostics under
    ``key`` (run, instance, stage, sub-index), inside the caller's transaction, a statement a
    table: their rows are those a re-score's batch stores (:func:`reason_rows`,
    :func:`diagnostic_rows`, :func:`insert_columns`)."""
    insert_columns(con, "reasons", REASON_COLUMNS, reason_rows(key, g))
    insert_columns(con, "parse_diagnostics", DIAGNOSTIC_COLUMNS, diagnostic_rows(key, g))


_KEY = ("VARCHAR", "VARCHAR", "VARCHAR", "INTEGER")
"""A generation's key columns' types: run, instance, stage, sub-index."""
REASON_COLUMNS = (
    *_KEY, "INTEGER", "VARCHAR", "INTEGER", "INTEGER", "INTEGER", "INTEGER",
    "DOUBLE[]", "DOUBLE[]", "DOUBLE",
)  # fmt: skip
"""A ``reasons`` row's columns (:func:`reason_rows`, :func:`insert_columns`)."""
DIAGNOSTIC_COLUMNS = (*_KEY, "VARCHAR", "VARCHAR")
"""A ``parse_diagnostics`` row's columns (:func:`diagnostic_rows`)."""
RESULT_COLUMNS = ("VARCHAR", "VARCHAR", "VARCHAR", "INTEGER", "VARCHAR", "=current_timestamp")
"""An ``instance_results`` row's columns."""
REASON_METRIC_COLUMNS = ("VARCHAR", "VARCHAR", "VARCHAR", "INTEGER", "INTEGER", "VARCHAR", "DOUBLE")
"""A ``reason_metrics`` row's columns."""
INSTANCE_METRIC_COLUMNS = ("VARCHAR", "VARCHAR", "VARCHAR", "DOUBLE", "INTEGER")
"""An ``instance_metrics`` row's columns."""


def reason_rows(key: list[Any], g: GenerationRecord) -> list[list[Any]]:
    """A generation's ``reasons`` rows under ``key``."""
    return [
        [
            *key,
            r.reason_index,
            r.text,
            r.span_start,
            r.span_end,
            r.token_first,
            r.token_count,
            list(r.nll),
            list(r.relevance),
            null_for_nan(r.confidence),
        ]
        for r in g.reasons
    ]


def diagnostic_rows(key: list[Any], g: GenerationRecord) -> list[list[Any]]:
    """A generation's ``parse_diagnostics`` rows under ``key``."""
    return [[*key, kind, detail] for kind, detail in g.diagnostics]


def insert_columns(
    con: Any, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]
) -> None:
    """``rows`` into ``table`` (one of this module's fixed names) in one statement, a list a
    column: ``columns`` names each column's SQL type (its values a parameter: a list of the
    rows' values, unnested) or, after ``=``, a SQL expression every row takes (``=NULL``).
    A row's values are stored as an ``INSERT`` of that row alone stores them (to the type and
    the last bit); any number of rows binds one parameter a column (a statement a row, or a
    parameter a value, was about half a re-scored instance's writes' time). A run's generation
    and instance and a re-score's batch store their reasons, diagnostics and metrics here."""
    if not rows:
        return
    values = [list(column) for column in zip(*rows, strict=True)]
    if len(values) != sum(1 for c in columns if not c.startswith("=")):
        raise ValueError(f"rows for {table}: {len(values)} values a row, columns {columns}")
    select = ", ".join(c[1:] if c.startswith("=") else f"unnest(?::{c}[])" for c in columns)
    con.execute(f"INSERT INTO {table} SELECT {select}", values)
