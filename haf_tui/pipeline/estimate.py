"""Honest time before a run starts: from what this machine measured, as a range.

In order: the last finished runs of the same model file with the same settings (seconds per
instance), else those with the same suites and batch but other settings (their output tokens per
second, how many of their instances went past JUSTIFY, with how many reasons, and how long their
answers were, put through this run's stages and size), and for a run without
HAF the seconds per generation of those runs times the generations its methods' plans give;
else, for a run with HAF, "measuring…": how many instances go on past JUSTIFY decides most of
its time (a small model often lets none go on, a larger one every one, each with several more
answers), and nothing measured here says it yet; a short calibration decode of the model
(:func:`probe_speed`) then gives JUSTIFY's time alone, said in the sentence. A run without HAF
(rationales, a judge) has its generations from its methods' plans, so the calibration decode's
speeds put a range on it. A known answer is always a range (``3 min – 6 min``) within a small
factor, never one false-precise figure, with a sentence that says where it comes from.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from haf_tui.config import RunConfig
from haf_tui.datasets import Dataset
from haf_tui.methods.registry import run_stages
from haf_tui.pipeline.planning import ProbeResult, RunPlan, plan_run, planned_instances
from haf_tui.store.paces import PastRun
from haf_tui.vocabulary import FOLLOWUP_STAGES, STAGES

SPREAD = 1.25
"""How far a range reaches past the fastest and slowest pace measured (runs vary)."""
LEAST_RATIO = 1.5
"""The upper end is at least this many times the lower (one figure would be false precision)."""
SHAPE_SPREAD = 1.5
"""How far a range predicted from other runs' measured shares, answers and rates reaches either
way (the upper end is ``SHAPE_SPREAD ** 2`` = 2.25 times the lower)."""


@dataclass(frozen=True)
class TimeEstimate:
    """From ``low`` to ``high`` seconds (None: unknown), and where that comes from."""

    low: float | None
    high: float | None
    basis: str
    measuring: bool = False
    """Not known before the run: the monitor measures it from the first instances."""

    def text(self) -> str:
        """``3 min – 6 min``, ``measuring…`` or ``unknown``."""
        if self.low is None or self.high is None:
            return "measuring…" if self.measuring else "unknown"
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
        tuple(json.dumps(config.settings.get(name), sort_keys=True) for name in config.suites),
        config.decoding.max_new_tokens,
        config.model.n_parallel,
    )


def _same_suites_and_batch(run: PastRun, config: RunConfig) -> bool:
    """A finished run with ``config``'s suites and sequences at once (its pace per answer
    applies)."""
    return (
        run.config.suites == config.suites
        and run.config.model.n_parallel == config.model.n_parallel
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
    alike = [
        run
        for run in mine
        if _same_suites_and_batch(run, config) and run.output_tokens > 0 and run.answers > 0
    ]
    with_haf = any(stage in STAGES for stage in run_stages(config))
    if not with_haf:
        return _without_haf(config, dataset, model_file, mine, probe)
    if alike:
        return _from_alike_runs(config, instances, model_file, alike)
    if probe is not None and probe.decode_tokens_per_second > 0:
        justify = plan_run(config.model_copy(update={"stages": ("justify",)}), dataset, probe)
        alone = f"{rough_duration(justify.least_seconds)}" if justify.least_seconds else "?"
        basis = (
            f"a calibration decode of {model_file} ({probe.batch} at once): generation "
            f"{probe.decode_tokens_per_second:.1f} tok/s, JUSTIFY alone about {alone}; how many "
            f"instances go on past it (each with {_followups(config)}) decides the "
            f"rest, and no run of {model_file} like this one finished here: the monitor measures "
            "it from the first instances"
        )
        return TimeEstimate(None, None, basis, measuring=True)
    return TimeEstimate(None, None, f"{model_file}: no run measured here and no calibration yet")


def _generations(plan: RunPlan) -> str:
    """``46 generations`` or ``120 to 400 generations``, from the methods' plans."""
    least = sum(count.least for count in plan.counts.values())
    most = plan.total_generations
    if any(count.most is None for count in plan.counts.values()):
        return f"at least {least} generations"
    return f"{most} generations" if least == most else f"{least} to {most} generations"


def _without_haf(
    config: RunConfig,
    dataset: Dataset,
    model_file: str,
    mine: Sequence[PastRun],
    probe: ProbeResult | None,
) -> TimeEstimate:
    """A run whose methods' plans say its generations (no JUSTIFY deciding what follows):
    the seconds per generation of finished runs of ``model_file`` with the same suites and
    batch, else the calibration decode's speeds."""
    measured = [run for run in mine if _same_suites_and_batch(run, config) and run.generations > 0]
    if measured:
        plan = plan_run(config, dataset)
        least = sum(count.least for count in plan.counts.values())
        pace = sum(run.seconds for run in measured) / sum(run.generations for run in measured)
        basis = (
            f"measured here: {_runs(len(measured))} of {model_file} with these methods took "
            f"{pace:.2f} s per generation; this run plans {_generations(plan)}"
        )
        return _ranged(
            least * pace / SHAPE_SPREAD, plan.total_generations * pace * SHAPE_SPREAD, basis
        )
    if probe is None or probe.decode_tokens_per_second <= 0:
        return TimeEstimate(
            None, None, f"{model_file}: no run measured here and no calibration yet"
        )
    plan = plan_run(config, dataset, probe)
    low, high = plan.least_seconds or 0.0, plan.estimated_seconds or 0.0
    basis = (
        f"a calibration decode of {model_file} ({probe.batch} at once): prompts "
        f"{probe.prompt_tokens_per_second:.0f} tok/s, generation "
        f"{probe.decode_tokens_per_second:.1f} tok/s, for the {_generations(plan)} its methods "
        "plan; no run like it finished here"
    )
    return _ranged(low / SHAPE_SPREAD, high * SHAPE_SPREAD, basis)


def _followups(config: RunConfig) -> str:
    """The follow-up answers of one instance that goes on, in words."""
    stages = [stage for stage in run_stages(config) if stage in FOLLOWUP_STAGES]
    fixed = sum(1 for stage in stages if stage != "individual")
    answers = f"{fixed} more answer{'s' if fixed != 1 else ''}"
    if "individual" in stages:
        return f"{answers} and one per reason" if fixed else "one more answer per reason"
    return answers


def _from_alike_runs(
    config: RunConfig, instances: int, model_file: str, runs: Sequence[PastRun]
) -> TimeEstimate:
    """The run's output tokens predicted from what ``runs`` (same suites and batch) measured,
    at their pace in output tokens per second, within :data:`SHAPE_SPREAD` either way."""
    done = sum(run.instances for run in runs)
    on = sum(run.instances_on for run in runs)
    share = on / done
    reasons = sum(run.reasons_on for run in runs) / on if on else 0.0
    per_answer = min(
        sum(run.answer_tokens for run in runs) / sum(run.answers for run in runs),
        config.decoding.max_new_tokens,
    )
    other_tokens = sum(run.output_tokens - run.answer_tokens for run in runs) / done
    followups = sum(
        reasons if stage == "individual" else 1.0
        for stage in run_stages(config)
        if stage in FOLLOWUP_STAGES
    )
    answers = (1.0 + share * followups) if "haf" in config.suites else 0.0
    tokens = instances * (answers * per_answer + other_tokens)
    rate = sum(run.output_tokens for run in runs) / sum(run.seconds for run in runs)
    basis = (
        f"measured here: {_runs(len(runs))} of {model_file} with other settings: {on} of {done} "
        f"instances went on past JUSTIFY ({reasons:.1f} reasons each), answers of "
        f"{per_answer:.0f} tokens, {rate:.1f} tok/s"
    )
    seconds = tokens / rate
    return _ranged(seconds / SHAPE_SPREAD, seconds * SHAPE_SPREAD, basis)


def _runs(count: int) -> str:
    return "1 earlier run" if count == 1 else f"{count} earlier runs"
