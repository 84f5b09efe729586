"""What a run will cost before it starts: generations per stage, and time from a short probe.

The wizard's review step shows this; nothing here writes to the store.
"""

from __future__ import annotations

from dataclasses import dataclass

from haf_tui.config import RunConfig
from haf_tui.datasets import Dataset
from haf_tui.pipeline.service import LoadedModels
from haf_tui.prompts import justify_messages

ASSUMED_REASONS = 3
"""Reasons per instance assumed before any is known (the paper's models give 2 to 5)."""
ASSUMED_OUTPUT_TOKENS = 200
"""Tokens an answer is assumed to take when ``max_new_tokens`` allows more."""
FOLLOWUP_EXTRA_PROMPT_TOKENS = 120
"""What an UPHOLD prompt adds to the JUSTIFY prompt (the reasons and the question)."""
PROBE_TOKENS = 16


@dataclass(frozen=True)
class ProbeResult:
    """Speeds measured on the first instance's JUSTIFY prompt."""

    prompt_tokens: int
    prompt_tokens_per_second: float
    decode_tokens_per_second: float


@dataclass(frozen=True)
class RunPlan:
    """Generations a run needs at most (``individual``: estimated) and the time it may take."""

    instances: int
    generations: dict[str, int]
    estimated_seconds: float | None
    assumptions: str

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
    :data:`ASSUMED_REASONS` reasons (unclear stances or no reasons stop earlier)."""
    counts = {}
    for stage in config.stages:
        per_instance = ASSUMED_REASONS if stage == "individual" else 1
        counts[stage] = instances * per_instance
    return counts


def probe_speed(models: LoadedModels, config: RunConfig, dataset: Dataset) -> ProbeResult:
    """Generate :data:`PROBE_TOKENS` tokens for the first instance's JUSTIFY prompt."""
    if not dataset.instances:
        raise ValueError(f"dataset {dataset.name} has no instances")
    backend = models.backend
    messages = justify_messages(dataset.instances[0].text, explicit=config.prompting == "explicit")
    settings = config.decoding.model_copy(update={"max_new_tokens": PROBE_TOKENS})
    generation = backend.generate(messages, settings)
    prompt_rate = (
        generation.prompt_token_count / generation.prompt_seconds
        if generation.prompt_seconds > 0
        else 0.0
    )
    return ProbeResult(generation.prompt_token_count, prompt_rate, generation.tokens_per_second)


def plan_run(config: RunConfig, dataset: Dataset, probe: ProbeResult | None = None) -> RunPlan:
    """Generations per stage and, with a probe, the estimated time of the whole run."""
    instances = planned_instances(config, dataset)
    generations = plan_generations(config, instances)
    output_tokens = min(config.decoding.max_new_tokens, ASSUMED_OUTPUT_TOKENS)
    assumptions = (
        f"at most; {ASSUMED_REASONS} reasons per instance assumed, answers of "
        f"{output_tokens} tokens"
    )
    if probe is None or probe.decode_tokens_per_second <= 0:
        return RunPlan(instances, generations, None, assumptions)
    seconds = 0.0
    for stage, count in generations.items():
        prompt = probe.prompt_tokens + (0 if stage == "justify" else FOLLOWUP_EXTRA_PROMPT_TOKENS)
        per_generation = output_tokens / probe.decode_tokens_per_second
        if probe.prompt_tokens_per_second > 0:
            per_generation += prompt / probe.prompt_tokens_per_second
        seconds += count * per_generation
    return RunPlan(instances, generations, seconds, assumptions)


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
