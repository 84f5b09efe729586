"""The judge's reads of the store: a judge run's label codes, the judge runs over a run's
explanations and their judgements of its instances (``judge_*`` instance metrics). The judge's
rows are the store's common runs and instance metrics, read by the named queries
``judge_codes``, ``judge_runs`` and ``judge_judgements`` (``queries/``, each with its header)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from haf_tui.config import RunConfig
from haf_tui.reports.query_running import run_named

if TYPE_CHECKING:
    from haf_tui.store.db import Store


def judge_codes(store: Store, run_id: str, criteria: Sequence[str]) -> dict[str, dict[str, int]]:
    """A judge run's label code per instance and criterion (instance metric ``judge_<id>``)."""
    wanted = {f"judge_{c}": c for c in criteria}
    codes: dict[str, dict[str, int]] = {}
    for instance_id, metric, value in run_named(store, "judge_codes", {"judge_run": run_id})[1]:
        if metric in wanted and value is not None:
            codes.setdefault(str(instance_id), {})[wanted[metric]] = int(value)
    return codes


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


def _judge_runs(store: Store, params: dict[str, Any]) -> list[JudgeRun]:
    found = []
    for run_id, status, model, dataset, created, config_json in run_named(
        store, "judge_runs", params
    )[1]:
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
    return _judge_runs(store, {"datasets": datasets})


def judge_run(store: Store, run_id: str) -> JudgeRun | None:
    """Run ``run_id`` as a judge run (None: no such run, or it has no judge suite)."""
    found = _judge_runs(store, {"judge_run": run_id})
    return found[0] if found else None


@dataclass(frozen=True)
class InstanceJudgement:
    """One judge run's ``judge_*`` metrics of one instance (metric name → value)."""

    run_id: str
    instance_id: str
    metrics: dict[str, float | None]


def instance_judgements(
    store: Store, run_ids: Sequence[str], instance_ids: Sequence[str]
) -> list[InstanceJudgement]:
    """The ``judge_*`` metrics of the instances ``instance_ids`` in the judge runs
    ``run_ids``, one row per (run, instance) that has any."""
    params = {"judge_runs": list(run_ids), "ids": list(instance_ids)}
    found: dict[tuple[str, str], dict[str, float | None]] = {}
    for run_id, instance_id, metric, value in run_named(store, "judge_judgements", params)[1]:
        found.setdefault((str(run_id), str(instance_id)), {})[str(metric)] = value
    return [InstanceJudgement(run, instance, metrics) for (run, instance), metrics in found.items()]
