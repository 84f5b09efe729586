"""The rationale_gradient stage in the rationales plan (no torch: a scripted attribution):
each gradient method's top-k rationale is perturbed and scored like occlusion's, its word
scores are the soft scores, the quantisation gap is stored beside llama.cpp's log-probability,
and a model the stage cannot load leaves the rest of the run whole."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from haf_tui.config import RunConfig
from haf_tui.methods.declare import PanelInput
from haf_tui.methods.rationales.core.attribution import GRADIENT_METHODS
from haf_tui.methods.rationales.core.metrics import entropy, top_k
from haf_tui.methods.rationales.settings import RationaleSettings, rationale_settings
from haf_tui.methods.rationales.suite.gradient_stage import Gradients
from haf_tui.methods.rationales.suite.plan import (
    GRADIENT_SLOTS,
    OCCLUSION,
    PERTURB,
    RationalePlan,
)
from haf_tui.methods.rationales.suite.records import rows_of
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
    rows = by_source(rows_of(outcome))
    for method in GRADIENT_METHODS:
        row = rows[method]
        assert row.k == 2 and row.scores == pytest.approx(scores_of(method))
        assert [i for i, m in enumerate(row.mask) if m] == sorted(FAVOURED[method])
        assert row.comp is not None and row.suff is not None and row.flip is not None
        assert row.token_f1 is not None and row.soft_auprc is not None
        # complexity of the soft scores, not of the mask
        assert row.cpx_entropy == pytest.approx(entropy(scores_of(method)))
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
    sources = {r.source for r in rows_of(outcome)}
    assert {"occlusion", "human", "everything", "prompt_predicted"} <= sources
    assert not sources & set(GRADIENT_METHODS)


def test_occlusion_left_out_asks_no_leave_one_out_text() -> None:
    cfg = config(attributions=("saliency",))
    plan = RationalePlan(instance(), cfg, ScriptedAttribution())
    made = drive(plan)
    assert not [t for t, _ in made if t.stage == OCCLUSION]
    outcome = _finish(made, cfg, ScriptedAttribution())
    sources = {r.source for r in rows_of(outcome)}
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


class ScriptedModel:
    """The stage's model, scripted: :func:`scores_of` on whatever text."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def attribute(
        self, text: str, words: Sequence[str], spelling: str, methods: Sequence[str]
    ) -> Any:
        self.texts.append(text)
        raw = {
            m: [1.0 + (i * (3 + n)) % 7 for i in range(len(words))] for n, m in enumerate(methods)
        }
        scores = {m: [v / sum(r) for v in r] for m, r in raw.items()}
        return SimpleNamespace(scores=scores, torch_logprob=-0.3, prompt_ids=prompt_ids_of(text))


def prompt_ids_of(text: str) -> tuple[int, ...]:
    """The scripted model's prompt ids of ``text``: a BOS, then each character's code."""
    return (1, *(ord(c) for c in text))


def test_a_run_stores_every_source_and_the_report_sets_them_side_by_side(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from haf_tui.methods.rationales.suite import gradient_stage
    from haf_tui.reports import run_named
    from haf_tui.store import open_store
    from tests.support.rationale_runs import (
        RATIONALE_CONFIG,
        rationale_instances,
        store_rationale_run,
    )

    model = ScriptedModel()
    monkeypatch.setattr(gradient_stage, "_attributor", lambda key: model)
    gradient_stage.release()
    cfg = RATIONALE_CONFIG.with_settings(
        "rationales", attributions=("occlusion", *GRADIENT_METHODS)
    )
    with open_store(tmp_path / "h.duckdb") as store:
        run_id = store_rationale_run(store, cfg)
        n = len(rationale_instances())
        assert len(model.texts) == n  # (one pass an instance: finish reuses it)
        _, rows = store.query(
            "SELECT source, count(*) FROM rationales WHERE run_id = ? AND source IN "
            "('attention', 'saliency', 'input_x_gradient') GROUP BY source",
            [run_id],
        )
        assert dict(rows) == {m: n for m in GRADIENT_METHODS}
        _, gaps = store.query(
            "SELECT count(*), avg(abs(gap)), max(abs(gap)), count(llama_logprob) "
            "FROM rationales_gradient"
        )
        assert gaps[0][0] == n and gaps[0][3] == n
        _, stored_ids = store.query(
            "SELECT i.text, g.prompt_ids FROM rationales_gradient g JOIN runs r USING (run_id) "
            "JOIN instances i ON i.dataset_id = r.dataset_id AND i.instance_id = g.instance_id "
            "WHERE g.run_id = ?",
            [run_id],
        )  # (each instance's prompt ids, read back as the pass had them)
        assert len(stored_ids) == n
        assert all(list(ids) == list(prompt_ids_of(text)) for text, ids in stored_ids)
        columns, result = run_named(store, "rationale_attribution", {"run_ids": [run_id]})
        table = [dict(zip(columns, row, strict=True)) for row in result]
        by = {row["rationale"]: row for row in table}
        assert list(by) == [
            "prompted", "occlusion", "attention", "saliency", "input×gradient",
            "human", "random", "everything",
        ]  # fmt: skip
        for name in ("occlusion", "attention", "saliency", "input×gradient"):
            row = by[name]
            assert row["alignment_f1_x100"] is not None and row["alignment_n"] == 2
            assert row["flip_rate"] is not None and row["flip_n"] == n
            assert row["skewness"] is not None and row["skewness_n"] >= 2
        assert by["random"]["alignment_f1_x100_sd"] is not None and by["random"]["n_seeds"] == 4
        _, means = store.query(
            "SELECT 100 * avg(token_f1), 100 * avg(flip), avg(size) FROM rationales "
            "WHERE source = 'saliency' AND run_id = ?",
            [run_id],
        )
        assert by["saliency"]["alignment_f1_x100"] == pytest.approx(means[0][0])
        assert by["saliency"]["flip_rate"] == pytest.approx(means[0][1])
        assert by["saliency"]["words_removed"] == pytest.approx(means[0][2])
        # the metrics screen's rationales panel shows the comparison under P1's table
        from rich.console import Console

        from haf_tui.methods.rationales.views import rationales_panel
        from haf_tui.reports.registry import run_report

        reports = {
            name: run_report(store, name) for name in ("rationales", "rationale-attribution")
        }
        shown = SimpleNamespace(run_id=run_id, label="the run")
        drawn = rationales_panel(PanelInput(runs=[shown], reports=reports, width=240))  # type: ignore[list-item]
        console = Console(width=240, record=True)
        console.print(drawn)
        text = console.export_text()
        assert "prompting vs attribution" in text and "input×gradient" in text
        assert by["everything"]["words_removed"] is not None
        assert by["attention"]["quant_gap_mean"] == pytest.approx(gaps[0][1])
        assert by["attention"]["quant_gap_max"] == pytest.approx(gaps[0][2])
        assert by["attention"]["quant_gap_n"] == n


def test_the_explorer_draws_each_method_s_scores_beside_the_prompted_and_human_words() -> None:
    from haf_tui.methods.rationales.core.truth import gold_rationale
    from haf_tui.methods.rationales.suite.records import RationaleRecord
    from haf_tui.methods.rationales.tui.attribution_lines import attribution_lines
    from haf_tui.methods.rationales.tui.data import RationaleData
    from haf_tui.tui.widgets.text_layout import DEFAULT_PALETTE

    record = instance()
    gold = gold_rationale(record.text, record.extra)
    prompted = [1 if token in ("illegal", "idiot") else 0 for token in TOKENS]
    rows = [
        RationaleRecord("r", "p1", "prompt_predicted", mask=prompted),
        RationaleRecord("r", "p1", "saliency", mask=top_k(scores_of("saliency"), 2),
                        scores=scores_of("saliency")),
        RationaleRecord("r", "p1", "attention", mask=top_k(scores_of("attention"), 2),
                        scores=scores_of("attention")),
    ]  # fmt: skip
    data = RationaleData(
        "p1", tuple(TOKENS), tuple(rows), gold=gold if not isinstance(gold, str) else None,
        metrics={"rationale_skew_saliency": 1.5, "rationale_quant_gap": -0.012},
    )  # fmt: skip
    lines = attribution_lines(data, 300, DEFAULT_PALETTE)
    text = [line.plain for line in lines]
    word_lines = [lines[k] for k in (1, 2, 3, 5)]  # (a scored line has its values under it)
    labels = [line.plain.split(":")[0] for line in word_lines]
    assert labels == ["prompted", "HUMAN", "attention", "saliency"]  # (in the methods' order)
    for line in word_lines:
        assert line.plain.split()[1:] == list(TOKENS)  # every word, in order, on one line
    for values in (text[4], text[6]):
        assert len(values.split()) == len(TOKENS)  # (a value under each word)
    saliency = lines[5]
    # the heat follows the scores: the favoured words are drawn stronger than the others
    styles = {span.style for span in saliency.spans}
    assert len(styles) > 2
    start = saliency.plain.index(" idiot ") + 1
    underlined = [s for s in saliency.spans if s.start == start]
    assert underlined and "underline" in str(underlined[0].style)  # (its top-2)
    assert "saliency 1.50" in text[7] and "-0.012" in text[8]
    assert attribution_lines(RationaleData("p1", tuple(TOKENS), tuple(rows[:1])), 80,
                             DEFAULT_PALETTE) == []  # fmt: skip
    narrow = attribution_lines(data, 40, DEFAULT_PALETTE)
    word_lines = [line.plain for line in narrow[1:-2]]  # (not the prose around them)
    assert all(len(line) <= 40 for line in word_lines) and len(narrow) > len(lines)
    assert " ".join(" ".join(line.split()) for line in word_lines).count("idiot") == 4


def test_a_server_run_attributes_with_its_model_s_gguf_locally(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from haf_tui.config import ModelSettings
    from haf_tui.methods.rationales.suite import gradient_stage

    asked: list[tuple[str, str | None]] = []

    def loaded(key: tuple[str, str | None]) -> ScriptedModel:
        asked.append(key)
        return ScriptedModel()

    monkeypatch.setattr(gradient_stage, "_attributor", loaded)
    gradient_stage.release()
    gguf = tmp_path / "model.gguf"
    served = RunConfig(
        suites=("rationales",),
        model=ModelSettings(path=str(gguf), servers=("http://127.0.0.1:8080",)),
        rationales=RationaleSettings(attributions=("attention",)),
    )
    attribute = gradient_stage.run_attribute(served)
    assert attribute is not None
    found = attribute(" ".join(TOKENS), TOKENS, "toxic")
    assert found is not None and set(found.scores) == {"attention"}
    assert asked == [(str(gguf), None)]
    gradient_stage.release()
