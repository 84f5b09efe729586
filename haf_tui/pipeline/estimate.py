"""Honest time before a run starts: from what this machine measured, as a range.

In order: the last finished runs of the same model file with the same settings (seconds per
instance), else those with other settings (their output tokens per second, put through the
run's plan), else a short calibration decode of the model (:func:`probe_speed`). The answer is
always a range (``3 min – 6 min``), never one false-precise figure, with a sentence that says
where it comes from.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from haf_tui.config import RunConfig
from haf_tui.datasets import Dataset
from haf_tui.pipeline.planning import ProbeResult, plan_run, planned_instances
from haf_tui.store.paces import PastRun

SPREAD = 1.25
"""How far a range reaches past the fastest and slowest pace measured (runs vary)."""
LEAST_RATIO = 1.5
"""The upper end is at least this many times the lower (one figure would be false precision)."""


@dataclass(frozen=True)
class TimeEstimate:
    """From ``low`` to ``high`` seconds (None: unknown), and where that comes from."""

    low: float | None
    high: float | None
    basis: str

    def text(self) -> str:
        """``3 min – 6 min``, or ``unknown``."""
        if self.low is None or self.high is None:
            return "unknown"
        return f"{rough_duration(self.low)} – {rough_duration(self.high)}"


def rough_duration(seconds: float) -> str:
    """``40 s``, ``12 min``, ``2 h 05 min``: as precise as an estimate can be."""
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    minutes = round(seconds / 60)
    if minutes < 90:
        return f"{minutes} min"
    hours, rest = divmod(minutes, 60)
    return f"{hours} h {rest:02d} min"


def settings_shape(config: RunConfig) -> tuple[object, ...]:
    """What decides a run's pace per instance (not its seed, limit or dataset)."""
    return (
        config.suites,
        config.stages,
        config.prompting,
        config.decoding.max_new_tokens,
        config.model.n_parallel,
        config.rationales.model_dump_json() if "rationales" in config.suites else None,
        config.judge.model_dump_json() if "judge" in config.suites else None,
    )


def _ranged(low: float, high: float, basis: str) -> TimeEstimate:
    return TimeEstimate(low, max(high, low * LEAST_RATIO), basis)


def estimate_time(
    config: RunConfig,
    dataset: Dataset,
    model_file: str,
    past: Sequence[PastRun] = (),
    probe: ProbeResult | None = None,
) -> TimeEstimate:
    """The run's time as a range: from the store's runs of ``model_file``, else ``probe``."""
    instances = planned_instances(config, dataset)
    mine = [run for run in past if run.model_file == model_file and run.instances > 0]
    same = [run for run in mine if settings_shape(run.config) == settings_shape(config)]
    if same:
        paces = [run.seconds / run.instances for run in same]
        basis = (
            f"measured here: {_runs(len(same))} of {model_file} with these settings took "
            f"{min(paces):.1f} to {max(paces):.1f} s per instance"
        )
        return _ranged(instances * min(paces) / SPREAD, instances * max(paces) * SPREAD, basis)
    rated = [run for run in mine if run.output_tokens > 0]
    if rated:
        rates = [run.output_tokens / run.seconds for run in rated]
        batch = config.model.n_parallel
        fast = plan_run(config, dataset, ProbeResult(0, 0.0, max(rates), batch))
        slow = plan_run(config, dataset, ProbeResult(0, 0.0, min(rates), batch))
        basis = (
            f"measured here: {_runs(len(rated))} of {model_file} with other settings produced "
            f"{min(rates):.1f} to {max(rates):.1f} tok/s"
        )
        if fast.least_seconds is not None and slow.estimated_seconds is not None:
            return _ranged(fast.least_seconds / SPREAD, slow.estimated_seconds * SPREAD, basis)
    if probe is not None and probe.decode_tokens_per_second > 0:
        plan = plan_run(config, dataset, probe)
        basis = (
            f"a calibration decode of {model_file} ({probe.batch} at once): prompt "
            f"{probe.prompt_tokens_per_second:.0f} tok/s, generation "
            f"{probe.decode_tokens_per_second:.1f} tok/s"
        )
        if plan.least_seconds is not None and plan.estimated_seconds is not None:
            return _ranged(plan.least_seconds, plan.estimated_seconds, basis)
    return TimeEstimate(None, None, f"{model_file}: no run measured here and no calibration yet")


def _runs(count: int) -> str:
    return "1 earlier run" if count == 1 else f"{count} earlier runs"
