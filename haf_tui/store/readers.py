"""Typed reads of the store for the faces: the runs list, one run's progress, the defined
values of instance metrics, a run's explanations, the schema, stopped
instances and a run's tables for export (an instance's parts: ``instance_readers``). Every
reader returns named rows; the SQL the faces need lives here (and in ``queries/``), not in
their commands and screens."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from haf_tui.config import RunConfig
from haf_tui.store.annotations import run_tables
from haf_tui.store.db import Store
from haf_tui.store.method_tables import owns, registered_method_migrations

_PROGRESS_SQL = """
SELECT r.status, r.n_planned, r.model_file,
       (SELECT count(*) FROM instance_results i WHERE i.run_id = r.run_id) AS done,
       (SELECT list(stage) FROM generations g WHERE g.run_id = r.run_id) AS stages,
       CAST(r.config AS VARCHAR) AS config,
       r.seconds_running,
       epoch(CAST(current_timestamp AS TIMESTAMP)) - epoch(r.updated_at) AS since_update
FROM runs r WHERE r.run_id = $run_id
"""
_STAGE_TOKENS_SQL = """
SELECT stage, sum(output_tokens) FROM generations WHERE run_id = $run_id GROUP BY stage
"""
_METRIC_VALUES_SQL = """
SELECT run_id, metric,
       list(value) FILTER (WHERE value IS NOT NULL AND NOT isnan(value)) AS defined_values
FROM instance_metrics
WHERE list_contains($metrics::VARCHAR[], metric)
GROUP BY ALL
"""


STORED_BEFORE_SUITES: Final = ("haf",)
"""The suites of a run whose stored config names none (stored before suites existed)."""


@dataclass(frozen=True)
class RunOverview:
    """A run as the runs list shows it (``status``: interrupted when its writer is gone)."""

    run_id: str
    status: str
    model_file: str
    dataset_id: str
    done: int
    planned: int
    created_at: datetime
    sos: float | None
    rs: float | None
    label: str | None = None
    tags: tuple[str, ...] = ()
    suites: tuple[str, ...] = STORED_BEFORE_SUITES

    @property
    def title(self) -> str:
        """How the runs list names it (:func:`run_title`)."""
        return run_title(self.run_id, self.label, self.tags)


def stored_suites(stored: Sequence[object] | None) -> tuple[str, ...]:
    """The suites a run's stored config lists (:data:`STORED_BEFORE_SUITES` when none)."""
    return tuple(str(name) for name in stored) if stored else STORED_BEFORE_SUITES


def suites_text(suites: Sequence[str]) -> str:
    """A run's suites as the listings show them: ``haf+classify``."""
    return "+".join(suites) or "—"


def run_title(run_id: str, label: str | None, tags: Sequence[str], *, stacked: bool = False) -> str:
    """A run as the runs lists name it: ``label (id) #tag …``, or the id (and tags);
    ``stacked``: the id, then the label and tags on a line of their own (``haf runs``)."""
    marks = [f"#{tag}" for tag in tags]
    if stacked:
        return "\n".join([run_id, " ".join([label, *marks] if label else marks)]).strip()
    return " ".join([f"{label} ({run_id})" if label else run_id, *marks])


@dataclass(frozen=True)
class RunProgress:
    """How far a run is: status, instances done of planned, its generations' stages, and
    what it was asked to do."""

    status: str
    planned: int
    model_file: str
    done: int
    stages: list[str]
    config: RunConfig
    seconds_running: float = 0.0
    """The running time its writers stored (every few seconds while one runs)."""
    since_update: float = 0.0
    """Seconds since its row was last written (a running writer's time not stored yet)."""
    stage_tokens: dict[str, int] = field(default_factory=dict)
    """Output tokens generated per stage."""


def run_overviews(store: Store) -> list[RunOverview]:
    """Every run, newest first, with its progress, suites and mean SoS and RS."""
    return [
        RunOverview(
            str(run["run_id"]),
            str(run["status"]),
            str(run["model_file"]),
            str(run["dataset_id"]),
            int(run["n_done"]),
            int(run["n_planned"]),
            run["created_at"],
            run["sos"],
            run["rs"],
            run.get("label"),
            tuple(run.get("tags") or ()),
            stored_suites(run.get("suites")),
        )
        for run in store.list_runs()
    ]


def run_progress(store: Store, run_id: str) -> RunProgress | None:
    """One run's progress (None: no such run)."""
    rows = store.query(_PROGRESS_SQL, {"run_id": run_id})[1]
    if not rows:
        return None
    status, planned, model, done, stages, config, seconds, since_update = rows[0]
    tokens = store.query(_STAGE_TOKENS_SQL, {"run_id": run_id})[1]
    return RunProgress(
        store.shown_status(run_id, str(status)), int(planned), str(model), int(done),
        list(stages or []), RunConfig.model_validate_json(config), float(seconds or 0.0),
        max(float(since_update or 0.0), 0.0),
        {str(stage): int(n or 0) for stage, n in tokens},
    )  # fmt: skip


@dataclass(frozen=True)
class MetricValues:
    """The defined instance values of one metric in one run."""

    run_id: str
    metric: str
    values: tuple[float, ...]


def defined_metric_values(store: Store, metrics: Sequence[str]) -> list[MetricValues]:
    """The instance values of the ``metrics`` that are defined, per run and metric (a run
    and metric with none are absent)."""
    rows = store.query(_METRIC_VALUES_SQL, {"metrics": list(metrics)})[1]
    return [
        MetricValues(str(run_id), str(metric), tuple(found or ())) for run_id, metric, found in rows
    ]


_EXPLANATIONS_SQL = """
SELECT i.instance_id, i.text, i.label, g.decision AS stance,
       coalesce(list(r.text ORDER BY r.reason_index) FILTER (WHERE r.text IS NOT NULL), [])
           AS reasons
FROM runs u
JOIN instances i ON i.dataset_id = u.dataset_id
JOIN generations g ON g.run_id = u.run_id AND g.instance_id = i.instance_id
     AND g.stage = 'justify'
LEFT JOIN reasons r ON r.run_id = g.run_id AND r.instance_id = g.instance_id
     AND r.stage = g.stage AND r.sub_index = g.sub_index
WHERE u.run_id = $run_id
GROUP BY ALL
ORDER BY min(i.position)
"""


@dataclass(frozen=True)
class Explanation:
    """One JUSTIFY answer of a run: the text, its gold label, the stance and the reasons."""

    instance_id: str
    text: str
    label: str | None
    stance: str
    reasons: tuple[str, ...]


def run_explanations(store: Store, run_id: str) -> list[Explanation]:
    """The JUSTIFY explanations of a run, in dataset order (a judge run rates them)."""
    rows = store.query(_EXPLANATIONS_SQL, {"run_id": run_id})[1]
    return [
        Explanation(str(i), str(text), None if label is None else str(label), str(stance),
                    tuple(str(r) for r in reasons or []))
        for i, text, label, stance, reasons in rows
    ]  # fmt: skip


_EXPLAINED_RUNS_SQL = """
SELECT DISTINCT g.run_id FROM generations g
JOIN reasons r ON r.run_id = g.run_id AND r.instance_id = g.instance_id
     AND r.stage = g.stage AND r.sub_index = g.sub_index
WHERE g.stage = 'justify'
"""


def explained_runs(store: Store) -> set[str]:
    """The runs with at least one JUSTIFY explanation that lists reasons (what a judge run of
    ``run:ID`` rates; a rationales-only or judge run has none)."""
    return {str(row[0]) for row in store.query(_EXPLAINED_RUNS_SQL)[1]}


_DATASET_EXTRAS_SQL = """
SELECT instance_id, CAST(extra AS VARCHAR) FROM instances
WHERE dataset_id = $dataset_id AND instance_id = ANY($ids)
"""


@dataclass(frozen=True)
class InstanceExtra:
    """The stored ``extra`` of one instance of a dataset (its JSON object)."""

    instance_id: str
    extra: dict[str, Any]


def dataset_extras(
    store: Store, dataset_id: str, instance_ids: Sequence[str]
) -> list[InstanceExtra]:
    """The stored ``extra`` of those instances of a dataset that it holds."""
    params = {"dataset_id": dataset_id, "ids": list(instance_ids)}
    found = []
    for instance_id, extra in store.query(_DATASET_EXTRAS_SQL, params)[1]:
        loaded = json.loads(extra) if extra else {}
        found.append(InstanceExtra(str(instance_id), loaded if isinstance(loaded, dict) else {}))
    return found


_SCHEMA_COLUMNS_SQL = """
SELECT c.table_name, t.table_type, c.column_name, c.data_type
FROM information_schema.columns c
JOIN information_schema.tables t USING (table_catalog, table_schema, table_name)
WHERE c.table_catalog = current_database() AND c.table_schema = 'main'
ORDER BY t.table_type, c.table_name, c.ordinal_position
"""


@dataclass(frozen=True)
class SchemaColumn:
    """One column of a table or view of the haf schema (``kind``: table or view)."""

    table: str
    kind: str
    column: str
    data_type: str


def schema_columns(store: Store) -> list[SchemaColumn]:
    """Every column of the haf schema's tables, then views, in table and column order."""
    return [
        SchemaColumn(str(table), "view" if kind == "VIEW" else "table", str(column), str(dtype))
        for table, kind, column, dtype in store.query(_SCHEMA_COLUMNS_SQL)[1]
    ]


_STOPS_SQL = """
SELECT count(*) FILTER (WHERE stopped IS NOT NULL), count(*),
       string_agg(DISTINCT stopped, ', ')
FROM instance_results
WHERE len($run_ids) = 0 OR list_contains($run_ids, run_id)
"""


@dataclass(frozen=True)
class Stops:
    """How many instances of some runs stopped after JUSTIFY, of how many, and why."""

    stopped: int
    total: int
    reasons: str | None


def run_stops(store: Store, run_ids: Sequence[str]) -> Stops:
    """The instances of runs ``run_ids`` (none: every run) that stopped after JUSTIFY."""
    stopped, total, reasons = store.query(_STOPS_SQL, {"run_ids": list(run_ids)})[1][0]
    return Stops(int(stopped), int(total), None if reasons is None else str(reasons))


RUN_TABLES = (
    "generations",
    "tokens",
    "reasons",
    "reason_metrics",
    "instance_metrics",
    "instance_results",
    "parse_diagnostics",
)
"""haf's own tables holding a run's rows (``run_id``), besides ``runs``: what ``haf export``
writes, with the methods' own (:func:`export_tables`)."""


def export_tables(store: Store) -> list[str]:
    """What ``haf export`` writes of a run besides ``runs``: :data:`RUN_TABLES`, then each
    registered method's own table with a ``run_id`` column in this file, by name."""
    owned = [
        table
        for table in run_tables(store)
        if any(owns(method, table) for method in registered_method_migrations())
    ]
    return [*RUN_TABLES, *owned]


def export_run_table(
    store: Store, table: str, run_id: str, target: Path, fmt: str, *, overwrite: bool = False
) -> int:
    """Write one run's rows of ``table`` (``runs`` or one of :func:`export_tables`) to
    ``target`` through the sandboxed export; returns the number of rows."""
    if table not in (*export_tables(store), "runs"):
        raise ValueError(f"not a table of a run: {table!r}")
    select = f"SELECT * FROM {table} WHERE run_id = $run_id"
    return store.export_user(select, {"run_id": run_id}, target, fmt, overwrite=overwrite)
