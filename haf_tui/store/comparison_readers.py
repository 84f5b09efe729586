"""Typed reads for comparing runs (the workbench's comparison view, ``compare-ci``): the runs
with their model, quantisation, dataset, size and suites, some instance metrics (HAF's six
unless told others) of every finished instance of some runs, and one instance across runs
(stance, reasons, per-reason SoS / RS / RN)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

from haf_tui.vocabulary import METRIC_LABELS

if TYPE_CHECKING:
    from haf_tui.store.db import Store

HAF_METRICS: Final[tuple[str, ...]] = tuple(METRIC_LABELS)
"""HAF's six metrics, in the paper's order: what is read when no metrics are named."""
DEFAULT_SUITES: Final = ("haf",)
"""The suites of a run whose stored config names none (stored before suites existed)."""
REASON_METRICS: Final = ("sos", "rs", "rn")
"""The metrics a JUSTIFY reason has (RS on SUF tests, RN on NEC tests)."""

_RUNS_SQL = """
SELECT r.run_id, r.model_file, r.model_quant, r.dataset_id, r.n_planned,
       (SELECT count(*) FROM instance_results i WHERE i.run_id = r.run_id) AS n_done,
       r.created_at, r.status, CAST(json_extract(r.config, '$.suites') AS VARCHAR[]) AS suites,
       r.label
FROM runs r ORDER BY r.created_at DESC, r.run_id
"""
_SUITES_SQL = """
SELECT run_id, CAST(json_extract(config, '$.suites') AS VARCHAR[]) FROM runs
WHERE list_contains($run_ids::VARCHAR[], run_id)
"""
_VALUES_SQL = """
SELECT f.run_id, f.instance_id, m.metric, m.value
FROM instance_results f
JOIN runs u ON u.run_id = f.run_id
LEFT JOIN instances i ON i.dataset_id = u.dataset_id AND i.instance_id = f.instance_id
LEFT JOIN instance_metrics m ON m.run_id = f.run_id AND m.instance_id = f.instance_id
     AND list_contains($metrics::VARCHAR[], m.metric)
WHERE list_contains($run_ids::VARCHAR[], f.run_id)
ORDER BY f.run_id, i.position, f.instance_id
"""
_DEFINED_SQL = """
SELECT list_position($run_ids::VARCHAR[], f.run_id) AS run_index,
       list_position($metrics::VARCHAR[], m.metric) AS metric_index, m.value
FROM instance_results f
JOIN runs u ON u.run_id = f.run_id
LEFT JOIN instances i ON i.dataset_id = u.dataset_id AND i.instance_id = f.instance_id
JOIN instance_metrics m ON m.run_id = f.run_id AND m.instance_id = f.instance_id
     AND list_contains($metrics::VARCHAR[], m.metric)
WHERE list_contains($run_ids::VARCHAR[], f.run_id) AND m.value IS NOT NULL
      AND NOT isnan(m.value)
ORDER BY run_index, metric_index, i.position, f.instance_id
"""
_VERSIONS_SQL = """
SELECT r.run_id, r.status, CAST(r.updated_at AS VARCHAR),
       (SELECT count(*) FROM instance_results f WHERE f.run_id = r.run_id),
       (SELECT count(*) FROM instance_metrics m WHERE m.run_id = r.run_id)
FROM runs r
"""
_ANSWERS_SQL = """
SELECT u.run_id, f.instance_id IS NOT NULL AS finished, coalesce(f.stance, g.decision) AS stance,
       f.stopped, g.decision_confidence, i.text, i.label, i.instance_id IS NOT NULL AS in_dataset
FROM runs u
LEFT JOIN instance_results f ON f.run_id = u.run_id AND f.instance_id = $instance_id
LEFT JOIN generations g ON g.run_id = u.run_id AND g.instance_id = $instance_id
     AND g.stage = 'justify' AND g.sub_index = -1
LEFT JOIN instances i ON i.dataset_id = u.dataset_id AND i.instance_id = $instance_id
WHERE list_contains($run_ids::VARCHAR[], u.run_id)
"""
_INSTANCE_VALUES_SQL = """
SELECT run_id, metric, value FROM instance_metrics
WHERE list_contains($run_ids::VARCHAR[], run_id) AND instance_id = $instance_id
  AND list_contains($metrics::VARCHAR[], metric)
"""
_REASONS_SQL = """
SELECT run_id, reason_index, text FROM reasons
WHERE list_contains($run_ids::VARCHAR[], run_id) AND instance_id = $instance_id
  AND stage = 'justify' AND sub_index = -1
ORDER BY run_id, reason_index
"""
_REASON_VALUES_SQL = """
SELECT run_id, reason_index, metric, value FROM reason_metrics
WHERE list_contains($run_ids::VARCHAR[], run_id) AND instance_id = $instance_id
  AND stage = 'justify' AND sub_index = -1 AND list_contains($metrics::VARCHAR[], metric)
"""


@dataclass(frozen=True)
class ComparedRun:
    """A run as the comparison lists it (``status``: interrupted when its writer is gone;
    ``suites``: the suites its config holds; ``label``: the one ``L`` gave it)."""

    run_id: str
    model_file: str
    model_quant: str | None
    dataset_id: str
    n_planned: int
    n_done: int
    created_at: datetime
    status: str
    suites: tuple[str, ...] = DEFAULT_SUITES
    label: str | None = None


@dataclass(frozen=True)
class ReasonValues:
    """One JUSTIFY reason of an instance in a run, with its SoS, RS and RN (None: undefined)."""

    index: int
    text: str
    values: dict[str, float | None] = field(default_factory=dict)


@dataclass(frozen=True)
class RunAnswer:
    """What one run said about an instance: the stance, why it stopped (if it did), the
    JUSTIFY decision confidence, the instance metrics and the reasons (``in_dataset`` False:
    the instance is not in the run's dataset, so the run never had it to finish)."""

    run_id: str
    finished: bool
    stance: str | None
    stopped: str | None
    confidence: float | None
    metrics: dict[str, float | None]
    reasons: list[ReasonValues]
    in_dataset: bool = True


@dataclass(frozen=True)
class InstanceAcross:
    """One instance across runs: its text and gold label (None: in no run's dataset) and
    each run's answer, in the order the runs were asked for."""

    instance_id: str
    text: str | None
    label: str | None
    answers: list[RunAnswer]


RunVersion = tuple[str, str, int, int]
"""What tells one state of a run's stored results from another: its status, when its row last
changed, its instance results and its instance metric rows (a resumed or re-scored run only
adds rows, so a run's values change only with this)."""

RunValues = dict[str, dict[str, dict[str, float | None]]]
"""Run id → instance id (finished, dataset order) → metric → value (None: undefined)."""


DefinedValues = dict[str, dict[str, Any]]
"""Run id → metric → its defined values (not NULL, not NaN) over the run's finished
instances, as a float array in the order of :data:`RunValues` (dataset order)."""


def _suites(stored: Sequence[object] | None) -> tuple[str, ...]:
    return tuple(str(name) for name in stored) if stored else DEFAULT_SUITES


def compared_runs(store: Store) -> list[ComparedRun]:
    """Every run, newest first."""
    return [
        ComparedRun(
            str(run_id), str(model), None if quant is None else str(quant), str(dataset),
            int(planned), int(done), created, store.shown_status(str(run_id), str(status)),
            _suites(suites), None if label is None else str(label),
        )
        for run_id, model, quant, dataset, planned, done, created, status, suites, label
        in store.query(_RUNS_SQL)[1]
    ]  # fmt: skip


def run_versions(store: Store) -> dict[str, RunVersion]:
    """Every run's :data:`RunVersion`, by run id (read before its values: values read after it
    are at least as new)."""
    return {
        str(run_id): (str(status), str(updated), int(results), int(metric_rows))
        for run_id, status, updated, results, metric_rows in store.query(_VERSIONS_SQL)[1]
    }


def run_suites(store: Store, run_ids: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """The suites each of ``run_ids`` holds (a run not stored is left out)."""
    rows = store.query(_SUITES_SQL, {"run_ids": list(run_ids)})[1]
    return {str(run_id): _suites(suites) for run_id, suites in rows}


def run_metric_values(
    store: Store, run_ids: Sequence[str], metrics: Sequence[str] = HAF_METRICS
) -> RunValues:
    """The instance ``metrics`` (stored names; HAF's six unless told) of every finished
    instance of ``run_ids`` (see :data:`RunValues`; a run with no finished instance maps to an
    empty dict)."""
    params = {"run_ids": list(run_ids), "metrics": list(metrics)}
    found: RunValues = {run_id: {} for run_id in run_ids}
    for run_id, instance_id, metric, value in store.query(_VALUES_SQL, params)[1]:
        of_instance = found.setdefault(str(run_id), {}).setdefault(str(instance_id), {})
        if metric is not None:
            of_instance[str(metric)] = value
    return found


def defined_metric_values(
    store: Store, run_ids: Sequence[str], metrics: Sequence[str]
) -> DefinedValues:
    """The defined values of ``metrics`` in each of ``run_ids`` (see :data:`DefinedValues`;
    a metric a run has no defined value of is left out): read as arrays, a moment where
    :func:`run_metric_values` takes a while (88k values: 60 ms, not 150–300 ms). Each row
    names its run and metric by their place in ``run_ids`` and ``metrics`` (1-based), not by
    their text: numbers come back as one array each, where 137k strings were each a Python
    object made while holding the interpreter's lock (a first comparison's read, beside the
    event loop drawing the screen)."""
    import numpy as np  # (here: ``haf --help`` imports no numpy)

    asked_runs, asked_metrics = list(run_ids), list(metrics)
    params = {"run_ids": asked_runs, "metrics": asked_metrics}
    columns = store.query_columns(_DEFINED_SQL, params)
    runs = np.asarray(columns["run_index"], dtype=np.int64)
    names = np.asarray(columns["metric_index"], dtype=np.int64)
    values = np.asarray(columns["value"], dtype=float)
    found: DefinedValues = {run_id: {} for run_id in asked_runs}
    if not len(values):
        return found
    cuts = np.flatnonzero((runs[1:] != runs[:-1]) | (names[1:] != names[:-1])) + 1
    starts, ends = [0, *cuts.tolist()], [*cuts.tolist(), len(values)]
    for start, end in zip(starts, ends, strict=True):
        run_id, metric = asked_runs[runs[start] - 1], asked_metrics[names[start] - 1]
        found.setdefault(run_id, {})[metric] = values[start:end]
    return found


def instance_across(
    store: Store, run_ids: Sequence[str], instance_id: str, metrics: Sequence[str] = HAF_METRICS
) -> InstanceAcross:
    """One instance in each of ``run_ids`` with its instance ``metrics`` (HAF's six unless
    told; a run that did not finish it: ``finished`` False, no metrics, no reasons)."""
    runs = list(run_ids)
    params = {"run_ids": runs, "instance_id": instance_id}
    metric_params = {**params, "metrics": list(metrics)}
    reason_params = {**params, "metrics": list(REASON_METRICS)}
    answers = {str(row[0]): row for row in store.query(_ANSWERS_SQL, params)[1]}
    values: dict[str, dict[str, float | None]] = {}
    for run_id, metric, value in store.query(_INSTANCE_VALUES_SQL, metric_params)[1]:
        values.setdefault(str(run_id), {})[str(metric)] = value
    reasons: dict[str, dict[int, ReasonValues]] = {}
    for run_id, index, text in store.query(_REASONS_SQL, params)[1]:
        reasons.setdefault(str(run_id), {})[int(index)] = ReasonValues(int(index), str(text))
    for run_id, index, metric, value in store.query(_REASON_VALUES_SQL, reason_params)[1]:
        reason = reasons.get(str(run_id), {}).get(int(index))
        if reason is not None:
            reason.values[str(metric)] = value
    text = label = None
    shown: list[RunAnswer] = []
    for run_id in runs:
        row = answers.get(run_id)
        if row is None:
            continue
        _, finished, stance, stopped, confidence, found_text, found_label, in_dataset = row
        if text is None and found_text is not None:
            text, label = str(found_text), None if found_label is None else str(found_label)
        shown.append(
            RunAnswer(
                run_id, bool(finished), None if stance is None else str(stance),
                None if stopped is None else str(stopped), confidence,
                values.get(run_id, {}), list(reasons.get(run_id, {}).values()),
                bool(in_dataset),
            )
        )  # fmt: skip
    return InstanceAcross(instance_id, text, label, shown)
