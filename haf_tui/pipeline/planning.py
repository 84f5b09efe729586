"""What a run will cost before it starts: generations per stage, and time from a short probe.

The probe decodes the first instances' JUSTIFY prompts with the batch the run will use
(``n_parallel`` sequences at once, the same llama.cpp engine the run reuses), so the speeds it
measures are the run's, not a single sequence's. The wizard's review step shows the plan as a
range: every instance stopping after JUSTIFY, up to every instance going on with
:data:`ASSUMED_REASONS` reasons. Nothing here writes to the store.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from haf_tui.config import RunConfig
from haf_tui.datasets import Dataset
from haf_tui.inference.base import GenerationRequest, ListSource
from haf_tui.messages import ChatMessage
from haf_tui.methods.registry import first_tasks, run_stages
from haf_tui.pipeline.models import LoadedModels
from haf_tui.store.records import InstanceRecord
from haf_tui.vocabulary import STAGES

ASSUMED_REASONS = 3
"""Reasons per instance assumed before any is known (the paper's models give 2 to 5)."""
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
class RunPlan:
    """Generations a run needs at most (``individual``: estimated) and the time it may take."""

    instances: int
    generations: dict[str, int]
    estimated_seconds: float | None
    """Every instance going on after JUSTIFY with :data:`ASSUMED_REASONS` reasons."""
    assumptions: str
    least_seconds: float | None = None
    """Every instance stopping after JUSTIFY (an unclear stance or no reasons)."""

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


def plan_generations(config: RunConfig, instances: int) -> dict[str, int]:
    """Upper bounds per stage: every instance goes on after JUSTIFY with
    :data:`ASSUMED_REASONS` reasons (unclear stances or no reasons stop earlier); the other
    suites' first prompts once per instance each."""
    counts: dict[str, int] = {}
    for haf_stage in (s for s in run_stages(config) if s in STAGES):
        per_instance = ASSUMED_REASONS if haf_stage == "individual" else 1
        counts[haf_stage] = instances * per_instance
    for stage, per_instance in _other_suites_tasks(config).items():
        counts[stage] = counts.get(stage, 0) + instances * per_instance
    return counts


def _other_suites_tasks(config: RunConfig) -> Counter[str]:
    """Per stage, how many tasks the run's suites other than HAF ask of one instance first."""
    return Counter(task.stage for suite, task in first_tasks(config) if suite.name != "haf")


def _forced_prompts(config: RunConfig) -> int:
    """Distinct prompts of the forced replies one instance needs (their prompt is evaluated
    once; the replies themselves are a few tokens)."""
    return len({task.messages for _, task in first_tasks(config) if task.forced is not None})


def _first_prompt(config: RunConfig, text: str) -> tuple[ChatMessage, ...]:
    """The first prompt the run's first suite asks of a text (HAF: its JUSTIFY prompt)."""
    instance = InstanceRecord(instance_id="", position=0, text=text)
    return first_tasks(config, instance)[0][1].messages


def probe_speed(models: LoadedModels, config: RunConfig, dataset: Dataset) -> ProbeResult:
    """Generate :data:`PROBE_TOKENS` tokens for the first prompts (HAF: JUSTIFY) of the first
    instances, as many at once as the run will decode (``n_parallel``, at most the instances
    planned)."""
    if not dataset.instances:
        raise ValueError(f"dataset {dataset.name} has no instances")
    backend = models.backend
    settings = config.decoding.model_copy(update={"max_new_tokens": PROBE_TOKENS})
    batch = max(1, min(config.model.n_parallel, planned_instances(config, dataset)))
    requests = [
        GenerationRequest(_first_prompt(config, i.text), settings, tag=n)
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
    """Generations per stage and, with a probe, the time of the whole run: at most (every
    instance goes on with :data:`ASSUMED_REASONS` reasons) and at least (all stop after
    JUSTIFY)."""
    instances = planned_instances(config, dataset)
    generations = plan_generations(config, instances)
    max_new = config.decoding.max_new_tokens
    typical = min(max_new, ASSUMED_OUTPUT_TOKENS)
    assumptions = (
        f"Generations per stage are the most the run can need ({ASSUMED_REASONS} reasons per "
        f"instance assumed). The time goes from every instance stopping after JUSTIFY with "
        f"answers of {typical} tokens to every one going on with answers of {max_new} tokens "
        "(the limit: small models often run to it)."
    )
    if probe is None or probe.decode_tokens_per_second <= 0:
        return RunPlan(instances, generations, None, assumptions)

    def seconds_of(stage: str, count: int, output_tokens: int) -> float:
        prompt = probe.prompt_tokens + (0 if stage == "justify" else FOLLOWUP_EXTRA_PROMPT_TOKENS)
        seconds = count * output_tokens / probe.decode_tokens_per_second
        if probe.prompt_tokens_per_second > 0:
            seconds += count * prompt / probe.prompt_tokens_per_second
        return seconds

    # forced replies (the classify suite): one evaluation of their prompt per instance
    forced = instances * _forced_prompts(config) * probe.prompt_tokens
    forced_seconds = (
        forced / probe.prompt_tokens_per_second if probe.prompt_tokens_per_second else 0
    )
    sampled = {stage: count for stage, count in generations.items() if stage in STAGES}
    # at the end of a run the last answers decode nearly alone, at about one sequence's rate
    tail = max_new / (probe.decode_tokens_per_second / max(probe.batch, 1)) if sampled else 0.0
    most = sum(seconds_of(stage, count, max_new) for stage, count in sampled.items()) + tail
    least = seconds_of("justify", sampled.get("justify", 0), typical)
    return RunPlan(
        instances, generations, most + forced_seconds, assumptions, least + forced_seconds
    )


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
