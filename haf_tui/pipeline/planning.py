"""What a run will cost before it starts: generations per stage, and time from a short probe.

The generations come from each method's own plan over the run's instances: its declared
``forecast`` (the least and the most one instance may need: HAF's follow-ups none up to an
assumed number of reasons' worth, the rationales' prompts and perturbed texts), else its
plan's first tasks (``planned()`` once known; the judge's and classify's are exact at once).
The probe decodes the first instances' first prompts (HAF: JUSTIFY) with the batch the run will
use (``n_parallel`` sequences at once, the same llama.cpp engine the run reuses), so the speeds
it measures are the run's, not a single sequence's. Nothing here writes to the store.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from haf_tui.config import RunConfig
from haf_tui.datasets import Dataset
from haf_tui.inference.base import GenerationRequest, ListSource
from haf_tui.messages import ChatMessage
from haf_tui.methods.base import open_stages
from haf_tui.methods.registry import first_tasks, methods_of, run_stages, stage_units
from haf_tui.pipeline.models import LoadedModels
from haf_tui.store.records import InstanceRecord
from haf_tui.vocabulary import FOLLOWUP_STAGES, HafError

ASSUMED_OUTPUT_TOKENS = 200
"""Tokens an answer is assumed to take when ``max_new_tokens`` allows more."""
FOLLOWUP_EXTRA_PROMPT_TOKENS = 120
"""What an UPHOLD prompt adds to the JUSTIFY prompt (the reasons and the question)."""
PROBE_TOKENS = 16


@dataclass(frozen=True)
class ProbeResult:
    """Speeds measured on the first instances' JUSTIFY prompts, ``batch`` of them at once
    (rates are for the whole batch together)."""

    prompt_tokens: int
    """Tokens of a JUSTIFY prompt (the mean over the probed instances)."""
    prompt_tokens_per_second: float
    decode_tokens_per_second: float
    batch: int = 1


@dataclass(frozen=True)
class StageCount:
    """A stage's generations before the run: from ``least`` to ``most`` (None: no bound is
    known before the answers)."""

    least: int
    most: int | None

    def text(self) -> str:
        """``12``, ``0–12`` or ``≥12``."""
        if self.most is None:
            return f"≥{self.least}"
        return str(self.least) if self.most == self.least else f"{self.least}–{self.most}"


class NoInstancesError(HafError, ValueError):
    """The dataset has no instance to plan or probe."""


@dataclass(frozen=True)
class RunPlan:
    """Generations a run needs (per stage, from the least to the most) and the time it may
    take."""

    instances: int
    generations: dict[str, int]
    """Per stage, the most (the least where no bound is known)."""
    estimated_seconds: float | None
    """Every stage at its most, every answer to the token limit."""
    assumptions: str
    least_seconds: float | None = None
    """Every stage at its least (HAF: every instance stopping after JUSTIFY)."""
    counts: dict[str, StageCount] = field(default_factory=dict)

    def time_range(self) -> str:
        """``12 s – 1 min 40 s``, one figure when both ends agree, or ``?``."""
        high, low = self.estimated_seconds, self.least_seconds
        if high is None or low is None or format_duration(low) == format_duration(high):
            return format_duration(high)
        return f"{format_duration(low)} – {format_duration(high)}"

    @property
    def total_generations(self) -> int:
        """All generations of the plan."""
        return sum(self.generations.values())


def planned_instances(config: RunConfig, dataset: Dataset) -> int:
    """How many instances the run evaluates."""
    available = len(dataset.instances)
    return min(available, config.limit) if config.limit else available


def instance_forecast(config: RunConfig, instance: InstanceRecord) -> dict[str, StageCount]:
    """One instance's generations per stage of the run, by each method's own plan: its
    ``forecast``, else its plan (exact once ``planned()`` knows, else the first tasks, its
    open stages unbounded)."""
    stages = run_stages(config)
    counts: dict[str, StageCount] = {}
    for method in methods_of(config):
        if method.forecast is not None:
            for stage, (least, most) in method.forecast(instance, config).items():
                counts[stage] = StageCount(least, most)
            continue
        plan = method.suite.plan(instance, config)
        asked = Counter(task.stage for task in plan.start())
        known = plan.planned()
        still_open = open_stages(plan, method.suite.run_stages(config))
        for stage in method.suite.run_stages(config):
            least = known.get(stage, 0) if known is not None else asked[stage]
            counts[stage] = StageCount(least, None if stage in still_open else least)
    return {stage: counts.get(stage, StageCount(0, 0)) for stage in stages}


def plan_counts(config: RunConfig, instances: Sequence[InstanceRecord]) -> dict[str, StageCount]:
    """The run's generations per stage over ``instances``: the sum of their forecasts."""
    least: Counter[str] = Counter()
    most: Counter[str] = Counter()
    unbounded: set[str] = set()
    for instance in instances:
        for stage, count in instance_forecast(config, instance).items():
            least[stage] += count.least
            if count.most is None:
                unbounded.add(stage)
            else:
                most[stage] += count.most
    return {
        stage: StageCount(least[stage], None if stage in unbounded else most[stage])
        for stage in run_stages(config)
    }


def plan_generations(config: RunConfig, instances: Sequence[InstanceRecord]) -> dict[str, int]:
    """The most generations per stage (the least where no bound is known)."""
    return {
        stage: count.least if count.most is None else count.most
        for stage, count in plan_counts(config, instances).items()
    }


def run_instances(config: RunConfig, dataset: Dataset) -> list[InstanceRecord]:
    """The instances the run evaluates."""
    return list(dataset.instances[: planned_instances(config, dataset)])


def _prompt_share(config: RunConfig, instances: Sequence[InstanceRecord]) -> float:
    """Prompts evaluated per forced reply: forced replies to one prompt (and reply prefix)
    share its evaluation (classify's four spellings: one prompt)."""
    forced = prompts = 0
    for instance in instances:
        tasks = [task for _, task in first_tasks(config, instance) if task.forced is not None]
        forced += len(tasks)
        prompts += len({(task.messages, task.reply_prefix) for task in tasks})
    return prompts / forced if forced else 1.0


def _first_prompt(config: RunConfig, instance: InstanceRecord) -> tuple[ChatMessage, ...]:
    """The first prompt the run's first suite asks of an instance (HAF: its JUSTIFY prompt);
    a one-line error when its suites ask nothing of it."""
    tasks = first_tasks(config, instance)
    if not tasks:
        needs = "".join(f" ({m.needs})" for m in methods_of(config) if m.needs)
        raise NoInstancesError(
            f"the run's suites ask nothing of instance {instance.instance_id or instance.position}"
            + needs
        )
    return tasks[0][1].messages


def probe_speed(models: LoadedModels, config: RunConfig, dataset: Dataset) -> ProbeResult:
    """Generate :data:`PROBE_TOKENS` tokens for the first prompts (HAF: JUSTIFY) of the first
    instances, as many at once as the run will decode (``n_parallel``, at most the instances
    planned)."""
    if not dataset.instances:
        raise NoInstancesError(f"dataset {dataset.name} has no instances")
    backend = models.backend
    settings = config.decoding.model_copy(update={"max_new_tokens": PROBE_TOKENS})
    batch = max(1, min(config.model.n_parallel, planned_instances(config, dataset)))
    requests = [
        GenerationRequest(_first_prompt(config, i), settings, tag=n)
        for n, i in enumerate(dataset.instances[:batch])
    ]
    source = ListSource(requests)
    backend.engine(config.model.n_parallel).serve(source)
    generations = list(source.results.values())
    prompt_tokens = sum(g.prompt_token_count for g in generations)
    prompt_seconds = max(g.prompt_seconds for g in generations)
    prompt_rate = prompt_tokens / prompt_seconds if prompt_seconds > 0 else 0.0
    # the sequences decode side by side: the batch's rate is the sum of theirs
    decode_rate = sum(g.tokens_per_second for g in generations)
    return ProbeResult(
        round(prompt_tokens / len(generations)), prompt_rate, decode_rate, len(generations)
    )


def plan_run(config: RunConfig, dataset: Dataset, probe: ProbeResult | None = None) -> RunPlan:
    """Generations per stage from each method's plan and, with a probe, the time of the whole
    run: at most (every stage at its most, answers to the token limit) and at least."""
    instances = run_instances(config, dataset)
    counts = plan_counts(config, instances)
    generations = {s: c.least if c.most is None else c.most for s, c in counts.items()}
    max_new = config.decoding.max_new_tokens
    typical = min(max_new, ASSUMED_OUTPUT_TOKENS)
    assumptions = (
        f"The time goes from every stage at its least with answers of {typical} tokens to "
        f"every one at its most with answers of {max_new} tokens (the limit: small models "
        "often run to it)."
    )
    if probe is None or probe.decode_tokens_per_second <= 0:
        return RunPlan(len(instances), generations, None, assumptions, counts=counts)
    units = stage_units(config)

    def prompt_seconds(stage: str, count: int) -> float:
        if probe.prompt_tokens_per_second <= 0:
            return 0.0
        extra = FOLLOWUP_EXTRA_PROMPT_TOKENS if stage in FOLLOWUP_STAGES else 0
        return count * (probe.prompt_tokens + extra) / probe.prompt_tokens_per_second

    share = _prompt_share(config, instances)

    def seconds(count_of: dict[str, int], output_tokens: int, tail: bool) -> float:
        total = 0.0
        sampled = False
        for stage, count in count_of.items():
            if units.get(stage, "tokens") == "texts":  # forced replies: their prompts
                total += prompt_seconds(stage, round(count * share))
            elif count:
                sampled = True
                total += prompt_seconds(stage, count)
                total += count * output_tokens / probe.decode_tokens_per_second
        if tail and sampled:  # the last answers decode nearly alone, at one sequence's rate
            total += max_new / (probe.decode_tokens_per_second / max(probe.batch, 1))
        return total

    most = seconds(generations, max_new, tail=True)
    least = seconds({s: c.least for s, c in counts.items()}, typical, tail=False)
    return RunPlan(len(instances), generations, most, assumptions, least, counts)


def format_duration(seconds: float | None) -> str:
    """``1 h 05 min``, ``4 min 10 s``, ``12 s`` or ``?``."""
    if seconds is None:
        return "?"
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes:02d} min"
    if minutes:
        return f"{minutes} min {secs:02d} s"
    return f"{secs} s"
