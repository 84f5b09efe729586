"""The rationale_gradient stage on the embedded SmolLM2 135M: a rationales run on
HateXplain-format posts through the real path (llama.cpp scores, the same GGUF opened in torch
for Attention, Saliency and Input×Gradient) stores all four attribution sources for every
instance, the quantisation gap beside llama.cpp's log-probability, and the P2 report has a
number, with its n, for each method."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from haf_tui.config import RunConfig
from haf_tui.methods.rationales.settings import RationaleSettings, rationale_settings
from tests.hatexplain_files import two_posts

pytestmark = [pytest.mark.real_model, pytest.mark.real_similarity]

CONFIG = RunConfig(
    suites=("rationales",),
    rationales=RationaleSettings(strategy="top_k", k=3, random_seeds=2, max_new_tokens=32),
)
SOURCES = ("occlusion", "attention", "saliency", "input_x_gradient")


def test_a_run_on_the_embedded_model_stores_all_four_sources_and_reports_them(
    tmp_path: Path, embedded_backend: Any, minilm: Any
) -> None:
    from haf_tui.datasets import load_paper_dataset
    from haf_tui.pipeline.models import LoadedModels
    from haf_tui.pipeline.runs import RunRequest, execute_run, start_or_resume
    from haf_tui.reports import run_named
    from haf_tui.store import open_store

    dataset = load_paper_dataset("hate_explain", files=[two_posts(tmp_path / "Data")])
    models = LoadedModels(embedded_backend, minilm)
    with open_store(tmp_path / "haf.duckdb") as store:
        started = start_or_resume(
            store, RunRequest(config=CONFIG, dataset=dataset, preloaded=models)
        )
        assert rationale_settings(started.config).attributions == SOURCES  # (a new run: all four)
        run_id = started.run_id
        assert execute_run(store, run_id, started.config, models).status == "finished"
        columns, rows = store.query(
            "SELECT instance_id, source, scores, k, comp, flip, token_f1 FROM rationales "
            "WHERE source IN ('occlusion', 'attention', 'saliency', 'input_x_gradient')"
        )
        found = [dict(zip(columns, row, strict=True)) for row in rows]
        assert sorted((r["instance_id"], r["source"]) for r in found) == sorted(
            (i.instance_id, s) for i in dataset.instances for s in SOURCES
        )
        for row in found:
            assert row["k"] == 3 and row["comp"] is not None and row["flip"] is not None
            if row["source"] != "occlusion":
                assert sum(row["scores"]) == pytest.approx(1.0)
        _, gaps = store.query(
            "SELECT spelling, torch_logprob, llama_logprob, gap FROM rationales_gradient"
        )
        assert len(gaps) == len(dataset.instances)
        for spelling, torch_lp, llama_lp, gap in gaps:
            assert spelling in ("toxic", "non-toxic") and torch_lp < 0 and llama_lp < 0
            assert gap == pytest.approx(torch_lp - llama_lp)
            assert abs(gap) < 1.0  # (Q4_1 against float32: close, not equal)
        _check_prompt_ids(store, run_id)
        columns, report = run_named(store, "rationale_attribution", {"run_ids": [run_id]})
        by = {r["rationale"]: r for r in (dict(zip(columns, row, strict=True)) for row in report)}
        for name in ("occlusion", "attention", "saliency", "input×gradient"):
            assert by[name]["alignment_n"] == 2 and by[name]["flip_n"] == 2
            assert not math.isnan(by[name]["alignment_f1_x100"])
            assert by[name]["skewness_n"] == 2
        assert by["random"]["n_seeds"] == 2 and by["everything"]["flip_n"] == 2
        assert by["attention"]["quant_gap_n"] == 2
        print({name: (row["alignment_f1_x100"], row["flip_rate"]) for name, row in by.items()})


def _check_prompt_ids(store: Any, run_id: str) -> None:
    """The classification prompt's token ids stored with each instance's attribution are
    those the GGUF's tokenizer gives the prompt today, and they spell the instance's text."""
    from haf_tui.defaults import embedded_model_path
    from haf_tui.inference.llama import LlamaCppBackend
    from haf_tui.methods.rationales.suite.attribution_model import prompt_tokens

    _, rows = store.query(
        "SELECT i.text, g.prompt_ids FROM rationales_gradient g JOIN runs r USING (run_id) "
        "JOIN instances i ON i.dataset_id = r.dataset_id AND i.instance_id = g.instance_id "
        "WHERE g.run_id = ?",
        [run_id],
    )
    assert len(rows) == 2
    vocab = LlamaCppBackend(embedded_model_path(), vocab_only=True)
    try:
        for text, ids in rows:
            assert ids and all(isinstance(i, int) for i in ids)
            assert tuple(ids) == prompt_tokens(vocab, text).ids
            spelled = vocab.llm.detokenize(ids).decode("utf-8", errors="replace")
            assert f"```{text}```" in spelled
    finally:
        vocab.close()


def test_the_stored_scores_are_within_1e_4_of_a_float64_autograd_recompute(
    opened: list[Any],
) -> None:
    """What docs/methods/rationales.md claims on the embedded model: each method's word scores
    within 1e-4 relative of a direct autograd computation in float64 (tests/
    test_rationale_attributions.py's, which shares no code with the stage), the float32 pass's
    rounding over 30 layers being the difference (measured up to 8.6e-5 on HateXplain posts)."""
    import copy

    from haf_tui.defaults import embedded_model_path
    from haf_tui.methods.rationales.core.attribution import word_scores, word_spans
    from haf_tui.methods.rationales.suite.attribution_model import GgufAttributor, prompt_tokens
    from tests.hatexplain_files import P1_TEXT
    from tests.test_rationale_attributions import METHODS, _direct

    attributor = GgufAttributor(embedded_model_path())
    opened.append(attributor)
    in_float64 = copy.deepcopy(attributor.model).double()
    words = P1_TEXT.split()
    tokens = prompt_tokens(attributor.vocab, P1_TEXT)
    in_text = [(i, span) for i, span in enumerate(tokens.spans) if span is not None]
    spans = word_spans(P1_TEXT, words)
    target = attributor.vocab.forced_tokens("toxic")
    found = attributor.attribute(P1_TEXT, words, "toxic", METHODS)
    direct = _direct(in_float64, list(tokens.ids), target)
    assert found.torch_logprob == pytest.approx(direct["T"][0], rel=1e-4)
    for method in METHODS:
        expected = word_scores(
            [direct[method][i] for i, _ in in_text], [span for _, span in in_text], spans
        )
        assert found.scores[method] == pytest.approx(expected, rel=1e-4), method
