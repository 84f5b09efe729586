"""Typed reads of the store for the faces: the runs list, one run's progress, the parts of
some instances the explorer shows, and the defined values of instance metrics. The SQL the
workbench needs lives here (and in ``queries/``), not in its screens."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from haf_tui.config import RunConfig
from haf_tui.store.db import Store
from haf_tui.store.records import InstanceRecord, RationaleRecord

Rows = list[tuple[Any, ...]]

_PROGRESS_SQL = """
SELECT r.status, r.n_planned, r.model_file,
       (SELECT count(*) FROM instance_results i WHERE i.run_id = r.run_id) AS done,
       (SELECT list(stage) FROM generations g WHERE g.run_id = r.run_id) AS stages,
       CAST(r.config AS VARCHAR) AS config
FROM runs r WHERE r.run_id = $run_id
"""
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
_TOKENS_SQL = """
SELECT instance_id, stage, sub_index, text, logprob, top_texts, top_logprobs FROM tokens
WHERE run_id = $run_id AND instance_id = ANY($ids)
ORDER BY instance_id, stage, sub_index, position
"""
_METRIC_VALUES_SQL = """
SELECT run_id, metric,
       list(value) FILTER (WHERE value IS NOT NULL AND NOT isnan(value)) AS defined_values
FROM instance_metrics
WHERE list_contains($metrics::VARCHAR[], metric)
GROUP BY ALL
"""


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

    @property
    def title(self) -> str:
        """How the runs list names it (:func:`run_title`)."""
        return run_title(self.run_id, self.label, self.tags)


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


def run_overviews(store: Store) -> list[RunOverview]:
    """Every run, newest first, with its progress and mean SoS and RS."""
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
        )
        for run in store.list_runs()
    ]


def run_progress(store: Store, run_id: str) -> RunProgress | None:
    """One run's progress (None: no such run)."""
    rows = store.query(_PROGRESS_SQL, {"run_id": run_id})[1]
    if not rows:
        return None
    status, planned, model, done, stages, config = rows[0]
    return RunProgress(
        store.shown_status(run_id, str(status)), int(planned), str(model), int(done),
        list(stages or []), RunConfig.model_validate_json(config),
    )  # fmt: skip


@dataclass(frozen=True)
class InstanceParts:
    """The stored rows of some instances of a run, each row led by its instance id."""

    generations: Rows
    reasons: Rows
    reason_metrics: Rows


def instance_parts(store: Store, run_id: str, ids: Sequence[str]) -> InstanceParts:
    """Generations, reasons and reason metrics of the instances ``ids`` of a run: small reads
    (one join of them all is slower on a large store); tokens: :func:`instance_tokens`."""
    params = {"run_id": run_id, "ids": list(ids)}
    return InstanceParts(
        store.query(_GENERATIONS_SQL, params)[1],
        store.query(_REASONS_SQL, params)[1],
        store.query(_REASON_METRICS_SQL, params)[1],
    )


def instance_tokens(store: Store, run_id: str, ids: Sequence[str]) -> Rows:
    """Every token of the instances ``ids`` of a run, in order (instance id first)."""
    return store.query(_TOKENS_SQL, {"run_id": run_id, "ids": list(ids)})[1]


def defined_metric_values(
    store: Store, metrics: Sequence[str]
) -> dict[tuple[str, str], list[float]]:
    """(run id, metric) → the instance values of that metric that are defined."""
    rows = store.query(_METRIC_VALUES_SQL, {"metrics": list(metrics)})[1]
    return {(str(run_id), str(metric)): list(found or []) for run_id, metric, found in rows}


_RATIONALES_SQL = f"""
SELECT {", ".join(RationaleRecord.columns())} FROM rationales
WHERE run_id = $run_id AND instance_id = $instance_id
ORDER BY source, seed
"""
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


def instance_rationales(store: Store, run_id: str, instance_id: str) -> list[RationaleRecord]:
    """The rationales of one instance of a run (the rationales suite), ordered by source,
    then seed (RANDOM has one per seed); none when the run has no rationales for it."""
    params = {"run_id": run_id, "instance_id": instance_id}
    columns, rows = store.query(_RATIONALES_SQL, params)
    return [
        RationaleRecord(**{c: _listed(v) for c, v in zip(columns, row, strict=True)})
        for row in rows
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
    """The instance metrics of one instance of a run whose names start with ``prefix``."""
    params = {"run_id": run_id, "instance_id": instance_id, "prefix": prefix}
    rows = store.query(_INSTANCE_METRICS_SQL, params)[1]
    return {str(metric): value for metric, value in rows}


_ANSWERS_SQL = """
SELECT sub_index, output_text FROM generations
WHERE run_id = $run_id AND instance_id = $instance_id AND stage = $stage
ORDER BY sub_index
"""


def stage_answers(store: Store, run_id: str, instance_id: str, stage: str) -> dict[int, str]:
    """The raw answers of one stage of an instance of a run, by sub-index (the rationale
    prompts' answers, to show how they were read)."""
    params = {"run_id": run_id, "instance_id": instance_id, "stage": stage}
    return {int(sub): str(text) for sub, text in store.query(_ANSWERS_SQL, params)[1]}


def _listed(value: Any) -> Any:
    """A list column as a list (DuckDB may give a tuple), anything else as it is."""
    return list(value) if isinstance(value, tuple) else value


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


_JUDGE_CODES_SQL = """
SELECT instance_id, metric, value FROM instance_metrics
WHERE run_id = $run_id AND metric LIKE 'judge\\_%' ESCAPE '\\'
"""


def judge_codes(store: Store, run_id: str, criteria: Sequence[str]) -> dict[str, dict[str, int]]:
    """A judge run's label code per instance and criterion (instance metric ``judge_<id>``)."""
    wanted = {f"judge_{c}": c for c in criteria}
    codes: dict[str, dict[str, int]] = {}
    for instance_id, metric, value in store.query(_JUDGE_CODES_SQL, {"run_id": run_id})[1]:
        if metric in wanted and value is not None:
            codes.setdefault(str(instance_id), {})[wanted[metric]] = int(value)
    return codes


_JUDGE_RUN_COLUMNS = """
SELECT run_id, status, model_file, dataset_id, created_at, CAST(config AS VARCHAR) FROM runs
"""
_JUDGE_RUNS_OF_SQL = (
    _JUDGE_RUN_COLUMNS
    + "WHERE dataset_id = ANY($datasets) ORDER BY (status = 'finished') DESC, created_at DESC"
)
_JUDGE_RUN_SQL = _JUDGE_RUN_COLUMNS + "WHERE run_id = $run_id"
_JUDGEMENTS_SQL = """
SELECT run_id, instance_id, metric, value FROM instance_metrics
WHERE run_id = ANY($runs) AND instance_id = ANY($ids) AND starts_with(metric, 'judge_')
"""
_DATASET_EXTRAS_SQL = """
SELECT instance_id, CAST(extra AS VARCHAR) FROM instances
WHERE dataset_id = $dataset_id AND instance_id = ANY($ids)
"""
JUDGED_DATASET_KINDS = ("explanations", "explanation-edits")
"""The kinds of dataset whose instances are a run's explanations (``<kind>-<run id>``, the
instance ids of the run): a judge run over one judges that run."""


@dataclass(frozen=True)
class JudgeRun:
    """A run of the judge suite: its model, how it judged (``prompt``, ``mode``), its
    dataset and, when that dataset is a run's explanations, that run (``source_run``)."""

    run_id: str
    status: str
    model_file: str
    dataset_id: str
    created_at: datetime
    prompt: str
    mode: str

    @property
    def source_run(self) -> str | None:
        """The run whose explanations it judged (None: another dataset, e.g. ACORN)."""
        for kind in JUDGED_DATASET_KINDS:
            if self.dataset_id.startswith(f"{kind}-"):
                return self.dataset_id.removeprefix(f"{kind}-")
        return None


def _judge_runs(store: Store, rows: Rows) -> list[JudgeRun]:
    found = []
    for run_id, status, model, dataset, created, config_json in rows:
        config = RunConfig.model_validate_json(config_json)
        if "judge" in config.suites:
            judge = config.settings.get("judge") or {}
            found.append(
                JudgeRun(
                    str(run_id), store.shown_status(str(run_id), str(status)), str(model),
                    str(dataset), created, str(judge.get("prompt", "verbatim")),
                    str(judge.get("mode", "constrained")),
                )
            )  # fmt: skip
    return found


def judge_runs_of(store: Store, source_run_id: str) -> list[JudgeRun]:
    """The judge runs over the explanations of run ``source_run_id`` (or their edits):
    finished ones first, then newest first."""
    datasets = [f"{kind}-{source_run_id}" for kind in JUDGED_DATASET_KINDS]
    return _judge_runs(store, store.query(_JUDGE_RUNS_OF_SQL, {"datasets": datasets})[1])


def judge_run(store: Store, run_id: str) -> JudgeRun | None:
    """Run ``run_id`` as a judge run (None: no such run, or it has no judge suite)."""
    found = _judge_runs(store, store.query(_JUDGE_RUN_SQL, {"run_id": run_id})[1])
    return found[0] if found else None


def instance_judgements(
    store: Store, run_ids: Sequence[str], instance_ids: Sequence[str]
) -> dict[tuple[str, str], dict[str, float | None]]:
    """(judge run id, instance id) → that instance's ``judge_*`` metrics in that run (the
    pairs with none are absent)."""
    params = {"runs": list(run_ids), "ids": list(instance_ids)}
    found: dict[tuple[str, str], dict[str, float | None]] = {}
    for run_id, instance_id, metric, value in store.query(_JUDGEMENTS_SQL, params)[1]:
        found.setdefault((str(run_id), str(instance_id)), {})[str(metric)] = value
    return found


def dataset_extras(
    store: Store, dataset_id: str, instance_ids: Sequence[str]
) -> dict[str, dict[str, Any]]:
    """Instance id → the stored ``extra`` of those instances of a dataset."""
    params = {"dataset_id": dataset_id, "ids": list(instance_ids)}
    found: dict[str, dict[str, Any]] = {}
    for instance_id, extra in store.query(_DATASET_EXTRAS_SQL, params)[1]:
        loaded = json.loads(extra) if extra else {}
        found[str(instance_id)] = loaded if isinstance(loaded, dict) else {}
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
