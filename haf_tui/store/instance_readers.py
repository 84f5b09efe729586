"""Typed reads of some instances of a run, as the explorer shows them: their generations,
reasons, reason metrics and tokens (small reads of several instances at once: one join of them
all is slower on a large store), the one pivot of them into the rows of the ``instance_detail``
query (:func:`detail_rows`), and an instance's rows of a method's own table, metrics and raw
answers (and every answer of a run, for the explorer's search)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from haf_tui.store.db import Store
from haf_tui.store.derived_runs import generation_source
from haf_tui.store.method_tables import owns, registered_method_migrations
from haf_tui.store.records import InstanceRecord

_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
REASON_METRICS: Final = ("sos", "rs", "rn", "c_y", "decision_weight", "i_s", "i_n", "uii", "uei")
"""The reason-level metrics a detail row has a column for."""
STAGE_ORDER: Final = {"justify": 1, "internal": 2, "external": 3, "individual": 4}
"""The order of the detail rows: HAF's stages, then the other suites' (5)."""

_GENERATIONS_SQL = """
SELECT instance_id, stage, sub_index, test, decision, decision_confidence, decision_sentence,
       finish_reason, output_tokens, prompt_text
FROM generations WHERE run_id = $run_id AND instance_id = ANY($ids)
"""
_REASONS_SQL = """
SELECT instance_id, stage, sub_index, reason_index, text, confidence, token_count,
       token_first, relevance
FROM reasons WHERE run_id = $run_id AND instance_id = ANY($ids)
"""
_REASON_METRICS_SQL = """
SELECT instance_id, stage, sub_index, reason_index, metric, value FROM reason_metrics
WHERE run_id = $run_id AND instance_id = ANY($ids)
"""
_PROMPTS_SQL = """
SELECT instance_id, stage, sub_index, prompt_text
FROM generations WHERE run_id = $run_id AND instance_id = ANY($ids)
"""
_TOKENS_SQL = """
SELECT instance_id, stage, sub_index, text, logprob, top_texts, top_logprobs FROM tokens
WHERE run_id = $run_id AND instance_id = ANY($ids)
ORDER BY instance_id, stage, sub_index, position
"""


@dataclass(frozen=True)
class GenerationRow:
    """One stored generation of an instance (its decision, how it ended, its prompt)."""

    instance_id: str
    stage: str
    sub_index: int
    test: str | None
    decision: str
    decision_confidence: float | None
    decision_sentence: str | None
    finish_reason: str
    output_tokens: int
    prompt_text: str


@dataclass(frozen=True)
class ReasonRow:
    """One parsed reason of a generation, with its TokenSAR confidence and span."""

    instance_id: str
    stage: str
    sub_index: int
    reason_index: int
    text: str
    confidence: float | None
    token_count: int
    token_first: int | None
    relevance: list[float] | None


@dataclass(frozen=True)
class ReasonMetricRow:
    """One reason-level metric value."""

    instance_id: str
    stage: str
    sub_index: int
    reason_index: int
    metric: str
    value: float | None


@dataclass(frozen=True)
class TokenRow:
    """One output token of a generation with its logprob and the top alternatives."""

    instance_id: str
    stage: str
    sub_index: int
    text: str
    logprob: float
    top_texts: list[str] | None
    top_logprobs: list[float] | None


@dataclass(frozen=True)
class InstanceParts:
    """The stored rows of some instances of a run."""

    generations: list[GenerationRow]
    reasons: list[ReasonRow]
    reason_metrics: list[ReasonMetricRow]


@dataclass(frozen=True)
class DetailRow:
    """One row of ``queries/instance_detail.sql`` (same columns, same order): a generation
    with one of its reasons (``reason_index`` None: a generation without reasons) and that
    reason's metrics."""

    stage: str
    sub_index: int
    test: str | None
    decision: str
    decision_confidence: float | None
    decision_sentence: str | None
    finish_reason: str
    output_tokens: int
    reason_index: int | None
    reason_text: str | None
    reason_confidence: float | None
    reason_tokens: int | None
    sos: float | None = None
    rs: float | None = None
    rn: float | None = None
    c_y: float | None = None
    decision_weight: float | None = None
    i_s: float | None = None
    i_n: float | None = None
    uii: float | None = None
    uei: float | None = None

    def metric(self, name: str) -> float | None:
        """The reason metric ``name`` (one of :data:`REASON_METRICS`)."""
        value: float | None = getattr(self, name)
        return value


def instance_parts(store: Store, run_id: str, ids: Sequence[str]) -> InstanceParts:
    """Generations, reasons and reason metrics of the instances ``ids`` of a run (tokens:
    :func:`instance_tokens`)."""
    params = {"run_id": run_id, "ids": list(ids)}
    generations = [GenerationRow(*row) for row in store.query(_GENERATIONS_SQL, params)[1]]
    source = generation_source(store, run_id)
    if source != run_id:  # a derived run: its prompts are its parent's
        prompts = store.query(_PROMPTS_SQL, {"run_id": source, "ids": list(ids)})[1]
        by_key = {(str(i), str(st), int(sub)): str(text) for i, st, sub, text in prompts}
        generations = [
            replace(g, prompt_text=by_key.get((g.instance_id, g.stage, g.sub_index), ""))
            for g in generations
        ]
    return InstanceParts(
        generations,
        [ReasonRow(*row) for row in store.query(_REASONS_SQL, params)[1]],
        [ReasonMetricRow(*row) for row in store.query(_REASON_METRICS_SQL, params)[1]],
    )


def instance_tokens(store: Store, run_id: str, ids: Sequence[str]) -> list[TokenRow]:
    """Every token of the instances ``ids`` of a run (a derived run: its parent's), in order."""
    source = generation_source(store, run_id)
    rows = store.query(_TOKENS_SQL, {"run_id": source, "ids": list(ids)})[1]
    return [TokenRow(*row) for row in rows]


def _max(values: list[float | None]) -> float | None:
    """SQL's ``max``: NULLs ignored, NaN above every number."""
    found = [v for v in values if v is not None]
    if any(math.isnan(v) for v in found):
        return math.nan
    return max(found) if found else None


def detail_rows(
    generations: Iterable[GenerationRow],
    reasons: Iterable[ReasonRow],
    metrics: Iterable[ReasonMetricRow],
) -> list[DetailRow]:
    """The rows of ``instance_detail`` for one instance's parts (one per reason of every
    generation, a generation without reasons once; stage order, then sub_index and
    reason_index): the explorer's pivot; the query is the same one for users, in SQL."""
    by_generation: dict[tuple[str, int], list[ReasonRow]] = {}
    for reason in reasons:
        by_generation.setdefault((reason.stage, reason.sub_index), []).append(reason)
    values: dict[tuple[str, int, int], dict[str, list[float | None]]] = {}
    for value in metrics:
        if value.metric in REASON_METRICS:
            key = (value.stage, value.sub_index, value.reason_index)
            values.setdefault(key, {}).setdefault(value.metric, []).append(value.value)
    rows: list[DetailRow] = []
    for g in sorted(generations, key=lambda g: (STAGE_ORDER.get(g.stage, 5), g.sub_index)):
        row = DetailRow(
            g.stage, g.sub_index, g.test, g.decision, g.decision_confidence,
            g.decision_sentence, g.finish_reason, g.output_tokens, None, None, None, None,
        )  # fmt: skip
        own = sorted(by_generation.get((g.stage, g.sub_index), []), key=lambda r: r.reason_index)
        if not own:
            rows.append(row)
        for r in own:
            found = values.get((g.stage, g.sub_index, r.reason_index), {})
            m = {name: _max(found.get(name, [])) for name in REASON_METRICS}
            rows.append(
                replace(
                    row,
                    reason_index=r.reason_index,
                    reason_text=r.text,
                    reason_confidence=r.confidence,
                    reason_tokens=r.token_count,
                    sos=m["sos"],
                    rs=m["rs"],
                    rn=m["rn"],
                    c_y=m["c_y"],
                    decision_weight=m["decision_weight"],
                    i_s=m["i_s"],
                    i_n=m["i_n"],
                    uii=m["uii"],
                    uei=m["uei"],
                )
            )
    return rows


_RUN_INSTANCE_SQL = """
SELECT i.instance_id, i.position, i.text, i.label, CAST(i.extra AS VARCHAR)
FROM runs r JOIN instances i USING (dataset_id)
WHERE r.run_id = $run_id AND i.instance_id = $instance_id
"""
_INSTANCE_METRICS_SQL = """
SELECT metric, value FROM instance_metrics
WHERE run_id = $run_id AND instance_id = $instance_id AND starts_with(metric, $prefix)
ORDER BY metric
"""
_METRIC_VALUES_SQL = """
SELECT instance_id, metric, value FROM instance_metrics
WHERE run_id = $run_id AND metric = ANY($metrics)"""
_ANSWERS_SQL = """
SELECT sub_index, output_text FROM generations
WHERE run_id = $run_id AND instance_id = $instance_id AND stage = $stage
ORDER BY sub_index
"""
_RUN_ANSWERS_SQL = """
SELECT instance_id, string_agg(output_text, chr(10) ORDER BY stage, sub_index)
FROM generations WHERE run_id = $run_id AND output_text IS NOT NULL
GROUP BY instance_id
"""


def _listed(value: Any) -> Any:
    """A list column as a list (DuckDB may give a tuple), anything else as it is."""
    return list(value) if isinstance(value, tuple) else value


@dataclass(frozen=True)
class MethodTableRow:
    """A row of a method's own table: its columns' values by name (lists as lists)."""

    values: dict[str, Any]


def method_table_rows(
    store: Store, table: str, run_id: str, instance_id: str
) -> list[MethodTableRow]:
    """One instance's rows of a method's own table (a registered method's, with ``run_id`` and
    ``instance_id``: what its suite stored through ``SuiteOutcome.rows``); none when the table
    is no registered method's or the run has none."""
    owners = [m for m in registered_method_migrations() if owns(m, table)]
    if not _NAME.fullmatch(table) or not owners:
        return []
    params = {"run_id": run_id, "instance_id": instance_id}
    sql = f'SELECT * FROM "{table}" WHERE run_id = $run_id AND instance_id = $instance_id'
    columns, rows = store.query(sql, params)
    return [
        MethodTableRow({c: _listed(v) for c, v in zip(columns, row, strict=True)}) for row in rows
    ]


def run_instance(store: Store, run_id: str, instance_id: str) -> InstanceRecord | None:
    """One instance of a run's dataset as stored (its text, label and ``extra``), or None."""
    params = {"run_id": run_id, "instance_id": instance_id}
    rows = store.query(_RUN_INSTANCE_SQL, params)[1]
    if not rows:
        return None
    found, position, text, label, extra = rows[0]
    loaded = json.loads(extra) if extra else {}
    return InstanceRecord(
        instance_id=str(found),
        position=int(position),
        text=str(text),
        label=label,
        extra=loaded if isinstance(loaded, dict) else {},
    )


def instance_metric_values(
    store: Store, run_id: str, instance_id: str, prefix: str = ""
) -> dict[str, float | None]:
    """Metric name → value: the instance metrics of one instance of a run whose names start
    with ``prefix``."""
    params = {"run_id": run_id, "instance_id": instance_id, "prefix": prefix}
    rows = store.query(_INSTANCE_METRICS_SQL, params)[1]
    return {str(metric): value for metric, value in rows}


def metric_values_of(
    store: Store, run_id: str, metrics: Sequence[str], ids: Sequence[str] | None = None
) -> dict[str, dict[str, float | None]]:
    """Instance id → metric → value: the instance metrics ``metrics`` of a run's instances
    ``ids`` (None: all of them); an instance without any of them is left out."""
    if not metrics:
        return {}
    params: dict[str, Any] = {"run_id": run_id, "metrics": list(metrics)}
    sql = _METRIC_VALUES_SQL
    if ids is not None:
        sql += " AND instance_id = ANY($ids)"
        params["ids"] = list(ids)
    found: dict[str, dict[str, float | None]] = {}
    for instance_id, metric, value in store.query(sql, params)[1]:
        found.setdefault(str(instance_id), {})[str(metric)] = value
    return found


def stage_answers(store: Store, run_id: str, instance_id: str, stage: str) -> dict[int, str]:
    """Sub-index → raw answer: one stage's answers of an instance of a run (the rationale
    prompts' answers, to show how they were read)."""
    source = generation_source(store, run_id)
    params = {"run_id": source, "instance_id": instance_id, "stage": stage}
    return {int(sub): str(text) for sub, text in store.query(_ANSWERS_SQL, params)[1]}


def run_answers(store: Store, run_id: str) -> dict[str, str]:
    """Instance id → the model's answers to it in a run (every stored generation's output,
    one a line): what the explorer's search reads besides the input texts."""
    rows = store.query(_RUN_ANSWERS_SQL, {"run_id": generation_source(store, run_id)})[1]
    return {str(instance_id): str(text or "") for instance_id, text in rows}
