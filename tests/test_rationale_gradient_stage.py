"""The rationale_gradient stage in the rationales plan (no torch: a scripted attribution):
each gradient method's top-k rationale is perturbed and scored like occlusion's, its word
scores are the soft scores, the quantisation gap is stored beside llama.cpp's log-probability,
and a model the stage cannot load leaves the rest of the run whole."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from haf_tui.config import RunConfig
from haf_tui.methods.rationales.core.attribution import GRADIENT_METHODS
from haf_tui.methods.rationales.core.metrics import top_k
from haf_tui.methods.rationales.settings import RationaleSettings, rationale_settings
from haf_tui.methods.rationales.suite.gradient_stage import Gradients
from haf_tui.methods.rationales.suite.plan import (
    GRADIENT_SLOTS,
    OCCLUSION,
    PERTURB,
    RationalePlan,
)
from haf_tui.methods.registry import settle_config
from tests.test_rationales_suite import TOKENS, by_source, drive, finish, instance, text_of

# the scripted model reads idiot (11), illegal (4), globalists (15); each method here
# favours other words, so its rationale is its own
FAVOURED = {"attention": (0, 1), "saliency": (11, 16), "input_x_gradient": (4, 11)}
TORCH_LOGPROB = -0.4


def scores_of(method: str) -> list[float]:
    raw = [0.01 * (i + 1) for i in range(len(TOKENS))]
    for rank, index in enumerate(FAVOURED[method]):
        raw[index] = 5.0 - rank
    return [v / sum(raw) for v in raw]


class ScriptedAttribution:
    """Word scores by :data:`FAVOURED`; counts its calls."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def __call__(self, text: str, words: Sequence[str], spelling: str) -> Gradients | None:
        assert list(words) == list(TOKENS) and text == " ".join(TOKENS)
        self.calls.append((text, spelling))
        return Gradients({m: scores_of(m) for m in GRADIENT_METHODS}, TORCH_LOGPROB, 0.25)


def config(**settings: Any) -> RunConfig:
    base = {"strategy": "top_k", "k": 2, "random_seeds": 3, **settings}
    return RunConfig(suites=("rationales",), rationales=RationaleSettings(**base))


def test_each_method_s_top_k_is_perturbed_and_scored_like_occlusion() -> None:
    cfg = config(attributions=("occlusion", *GRADIENT_METHODS))
    attribution = ScriptedAttribution()
    plan = RationalePlan(instance(), cfg, attribution)
    made = drive(plan)
    assert attribution.calls == [(" ".join(TOKENS), "toxic")]  # (once ŷ is known)
    perturbed = {text_of(t) for t, _ in made if t.stage == PERTURB}
    for method in GRADIENT_METHODS:
        mask = top_k(scores_of(method), 2)
        assert [i for i, m in enumerate(mask) if m] == sorted(FAVOURED[method])
        assert plan.slot_texts[GRADIENT_SLOTS[method][0]] in perturbed
        assert plan.slot_texts[GRADIENT_SLOTS[method][1]] in perturbed
    outcome = _finish(made, cfg, attribution)
    rows = by_source(outcome.rationales)
    for method in GRADIENT_METHODS:
        row = rows[method]
        assert row.k == 2 and row.scores == pytest.approx(scores_of(method))
        assert [i for i, m in enumerate(row.mask) if m] == sorted(FAVOURED[method])
        assert row.comp is not None and row.suff is not None and row.flip is not None
        assert row.token_f1 is not None and row.soft_auprc is not None
        assert row.cpx_entropy is not None and row.cpx_entropy != pytest.approx(
            rows["human"].cpx_entropy
        )  # (complexity of the soft scores, not of the mask)
    # removing idiot and illegal (input_x_gradient) drops p(toxic) more than attention's words
    assert rows["input_x_gradient"].comp > rows["attention"].comp  # type: ignore[operator]
    metrics = {name: value for name, value, _ in outcome.instance_metrics}
    for method in GRADIENT_METHODS:
        assert f"rationale_alignment_f1_{method}" in metrics
        assert f"rationale_skew_{method}" in metrics
    assert "rationale_skew_occlusion" in metrics
    llama = plan.scored[plan.text].logprobs[0]  # (ŷ = toxic: its first spelling)
    assert metrics["rationale_quant_gap"] == pytest.approx(TORCH_LOGPROB - llama)
    (row,) = outcome.rows["rationales_gradient"]
    assert row["spelling"] == "toxic" and row["gap"] == pytest.approx(TORCH_LOGPROB - llama)
    assert row["llama_logprob"] == pytest.approx(llama)
    assert row["saliency"] == pytest.approx(scores_of("saliency"))


def _finish(made: Any, cfg: RunConfig, attribution: Any) -> Any:
    from haf_tui.methods.rationales.suite import suite as suite_module

    original = suite_module.run_attribute
    suite_module.run_attribute = lambda config: attribution  # type: ignore[assignment]
    try:
        return finish(made, instance(), cfg)
    finally:
        suite_module.run_attribute = original


def test_a_model_the_stage_cannot_load_leaves_the_rest_whole() -> None:
    cfg = config(attributions=("occlusion", *GRADIENT_METHODS))

    def refused(text: str, words: Sequence[str], spelling: str) -> Gradients | None:
        return None

    plan = RationalePlan(instance(), cfg, refused)
    made = drive(plan)
    assert not set(plan.slot_texts) & {s for pair in GRADIENT_SLOTS.values() for s in pair}
    assert plan.planned() is not None
    outcome = _finish(made, cfg, refused)
    sources = {r.source for r in outcome.rationales}
    assert {"occlusion", "human", "everything", "prompt_predicted"} <= sources
    assert not sources & set(GRADIENT_METHODS)


def test_occlusion_left_out_asks_no_leave_one_out_text() -> None:
    cfg = config(attributions=("saliency",))
    plan = RationalePlan(instance(), cfg, ScriptedAttribution())
    made = drive(plan)
    assert not [t for t, _ in made if t.stage == OCCLUSION]
    outcome = _finish(made, cfg, ScriptedAttribution())
    sources = {r.source for r in outcome.rationales}
    assert "saliency" in sources and "occlusion" not in sources and "attention" not in sources


def test_a_new_run_computes_all_four_and_an_old_one_occlusion_only() -> None:
    settled = settle_config(config(), [instance()])
    assert rationale_settings(settled).attributions == (
        "occlusion",
        "attention",
        "saliency",
        "input_x_gradient",
    )
    old = RationalePlan(instance(), config(), ScriptedAttribution())
    assert old.occluding and old.attribute is None
    # given in any order, each once, in the reports' order
    picked = RationaleSettings(attributions=("saliency", "occlusion", "saliency"))
    assert picked.attributions == ("occlusion", "saliency")
    with pytest.raises(ValueError, match="attributions"):
        RationaleSettings(attributions=("gradcam",))  # type: ignore[arg-type]
