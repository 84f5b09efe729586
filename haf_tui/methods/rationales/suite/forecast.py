"""How many generations one instance of a rationales run may need, before its answers: the
full text's and the leave-one-out texts' spellings are asked at the start (exact); the
rationale prompts are one (ŷ equals the gold label, or no gold) or two; the perturbed texts
are the baselines' at least, and at most also the prompted and the occlusion rationales' texts
and every RANDOM seed an adaptive run may still ask."""

from __future__ import annotations

from haf_tui.config import RunConfig
from haf_tui.methods.rationales.suite.plan import (
    CLASSIFY,
    OCCLUSION,
    PERTURB,
    PROMPT,
    SPELLS,
    RationalePlan,
)
from haf_tui.store.records import InstanceRecord

FORECAST_NOTE = (
    "rationales: one rationale prompt, two when ŷ differs from the gold label; the perturbed "
    "texts grow with the rationales the answers give (and an adaptive RANDOM's rounds)."
)


def rationale_forecast(
    instance: InstanceRecord, config: RunConfig
) -> dict[str, tuple[int, int | None]]:
    """Per stage: (least, most) generations of one instance."""
    plan = RationalePlan(instance, config)
    plan.start()
    asked = plan.asked
    prompts = (1, 1) if plan.gold_label is None else (1, 2)  # (two: ŷ ≠ gold)
    if not plan.prompting:
        prompts = (0, 0)
    more_texts = 2 if plan.prompting else 0  # the prompted rationale: without and only
    if plan.occlusion_k is not None and plan.tokens:
        more_texts += 2 * plan.occluding  # the occlusion rationale: without and only
        more_texts += 2 * len(plan.gradient_methods)  # each gradient method's, the same
    if plan.has_random:
        more_texts += plan.settings.random_seeds - plan.random_asked
    return {
        CLASSIFY: (asked[CLASSIFY], asked[CLASSIFY]),
        PROMPT: prompts,
        OCCLUSION: (asked[OCCLUSION], asked[OCCLUSION]),
        PERTURB: (asked[PERTURB], asked[PERTURB] + more_texts * SPELLS),
    }
