"""P2's Attention, Saliency and Input×Gradient on a GGUF opened in torch (the
``rationale_gradient`` stage): a tiny random Llama GGUF written here, opened by llama.cpp and
by transformers; the stage's word scores against a direct autograd computation written in
this file (no captum) and against captum's own Saliency and InputXGradient."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from haf_tui.methods.rationales.core.attribution import (
    gap_summary,
    skewness,
    word_scores,
    word_spans,
)
from tests.support.tiny_gguf import write_tiny_llama

TEXT = "you hate the text , toxic non people"
WORDS = TEXT.split()
METHODS = ("attention", "saliency", "input_x_gradient")


def test_word_scores_take_the_largest_token_and_sum_to_one() -> None:
    # words "ab" (0, 2) and "cd" (3, 5); tokens "a" "b" " c" "d" and one outside (None spans
    # are dropped by the caller)
    scores = word_scores([0.1, -0.5, 0.2, 0.3], [(0, 1), (1, 2), (2, 4), (4, 5)], [(0, 2), (3, 5)])
    assert scores == pytest.approx([0.5 / 0.8, 0.3 / 0.8])
    assert word_scores([0.0, 0.0], [(0, 1), (2, 3)], [(0, 1), (2, 3)]) == [0.0, 0.0]
    assert word_scores([1.0], [(0, 1)], [(0, 1), (5, 6)]) == [1.0, 0.0]  # (no token: 0)
    assert word_spans("a bb a", ["a", "bb", "a"]) == [(0, 1), (2, 4), (5, 6)]
    with pytest.raises(ValueError, match="not in the text"):
        word_spans("a b", ["a", "c"])
    # a word met again, or inside an earlier one, is searched after the words before it
    assert word_spans("hate hat hat", ["hate", "hat", "hat"]) == [(0, 4), (5, 8), (9, 12)]


def test_skewness_and_gap_summary() -> None:
    # scipy.stats.skew([1, 2, 3, 10]) = 1.01823...
    assert skewness([1.0, 2.0, 3.0, 10.0]) == pytest.approx(1.0182338, rel=1e-6)
    assert skewness([1.0, 2.0, 3.0]) == pytest.approx(0.0)
    assert skewness([2.0, 2.0, 2.0]) is None and skewness([1.0, 2.0]) is None
    assert gap_summary([0.1, -0.3]) == pytest.approx((0.2, 0.3))
    assert gap_summary([]) is None


@pytest.fixture(scope="module")
def tiny_gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tiny_llama(tmp_path_factory.mktemp("tiny") / "tiny-llama.gguf")


@pytest.fixture(scope="module")
def attributor(tiny_gguf: Path) -> Iterator[Any]:
    from haf_tui.methods.rationales.suite.attribution_model import GgufAttributor

    loaded = GgufAttributor(tiny_gguf)
    yield loaded
    loaded.close()


def test_prompt_tokens_locate_the_text(attributor: Any) -> None:
    from haf_tui.methods.rationales.suite.attribution_model import prompt_tokens

    tokens = prompt_tokens(attributor.vocab, TEXT)
    in_text = [(i, span) for i, span in enumerate(tokens.spans) if span is not None]
    pieces = [attributor.vocab.token_piece(tokens.ids[i]).decode() for i, _ in in_text]
    assert "".join(pieces) == TEXT  # (the text's tokens, and nothing of the template)
    for (_, (start, end)), piece in zip(in_text, pieces, strict=True):
        assert TEXT[start:end] == piece
    assert tokens.spans[0] is None and tokens.spans[-1] is None


def _direct(model: Any, ids: list[int], target: list[int]) -> dict[str, list[float]]:
    """Each method by hand: the embedding matrix indexed, T's gradient by backward(), the
    attention of a second forward pass averaged by loops."""
    import torch

    n = len(ids)
    full = torch.tensor([ids + target[:-1]])
    embeds = model.get_input_embeddings().weight[full].detach().clone().requires_grad_(True)
    logits = model(inputs_embeds=embeds, use_cache=False).logits[0].double()
    total = sum(
        logits[n - 1 + j, token] - torch.logsumexp(logits[n - 1 + j], dim=-1)
        for j, token in enumerate(target)
    )
    assert isinstance(total, torch.Tensor)
    total.backward()
    assert embeds.grad is not None
    grad, emb = embeds.grad[0, :n].double(), embeds[0, :n].detach().double()
    with torch.no_grad():
        attentions = model(full, output_attentions=True, use_cache=False).attentions
    attention = [0.0] * n
    count = 0
    for layer in attentions:
        for head in range(layer.shape[1]):
            count += 1
            for t in range(n):
                attention[t] += float(layer[0, head, n - 1, t])
    return {
        "saliency": [math.sqrt(float((grad[t] ** 2).sum())) for t in range(n)],
        "input_x_gradient": [math.sqrt(float(((emb[t] * grad[t]) ** 2).sum())) for t in range(n)],
        "attention": [a / count for a in attention],
        "T": [float(total.detach())],
    }


def _by_hand(tokens: Any, token_scores: list[float]) -> list[float]:
    """Word scores by hand: the largest of the overlapping tokens, normalised."""
    spans, cursor = [], 0
    for word in WORDS:
        start = TEXT.index(word, cursor)
        spans.append((start, start + len(word)))
        cursor = start + len(word)
    raw = []
    for start, end in spans:
        raw.append(
            max(
                abs(s)
                for s, span in zip(token_scores, tokens.spans, strict=True)
                if span is not None and span[0] < end and start < span[1]
            )
        )
    return [r / sum(raw) for r in raw]


@pytest.mark.parametrize("spelling", ["toxic", "non-toxic"])
def test_word_scores_match_direct_autograd(attributor: Any, spelling: str) -> None:
    from haf_tui.methods.rationales.suite.attribution_model import prompt_tokens

    tokens = prompt_tokens(attributor.vocab, TEXT)
    target = attributor.vocab.forced_tokens(spelling)
    direct = _direct(attributor.model, list(tokens.ids), target)
    found = attributor.attribute(TEXT, WORDS, spelling, METHODS)
    assert found.prompt_ids == tokens.ids  # (the ids the pass read: stored with the row)
    assert found.torch_logprob == pytest.approx(direct["T"][0], rel=1e-5)
    for method in METHODS:
        expected = _by_hand(tokens, direct[method])
        assert found.scores[method] == pytest.approx(expected, rel=1e-5), method
        assert len(set(expected)) > 1  # (a method that scored nothing would not be checked)


def test_word_scores_match_captum(attributor: Any) -> None:
    import torch
    from captum.attr import InputXGradient, Saliency

    from haf_tui.methods.rationales.suite.attribution_model import prompt_tokens

    tokens = prompt_tokens(attributor.vocab, TEXT)
    target = attributor.vocab.forced_tokens("toxic")
    model, n = attributor.model, len(tokens.ids)
    embeds = model.get_input_embeddings()(torch.tensor([[*tokens.ids, *target[:-1]]]))
    embeds = embeds.detach().requires_grad_(True)

    def label_logprob(inputs: torch.Tensor) -> torch.Tensor:
        logp = torch.log_softmax(model(inputs_embeds=inputs, use_cache=False).logits, dim=-1)
        return torch.stack([logp[:, n - 1 + j, tok] for j, tok in enumerate(target)]).sum(0)

    saliency = Saliency(label_logprob).attribute(embeds, abs=True)[0, :n].norm(dim=-1)
    ixg = InputXGradient(label_logprob).attribute(embeds)[0, :n].norm(dim=-1)
    found = attributor.attribute(TEXT, WORDS, "toxic", METHODS)
    assert found.scores["saliency"] == pytest.approx(_by_hand(tokens, saliency.tolist()), rel=1e-5)
    assert found.scores["input_x_gradient"] == pytest.approx(
        _by_hand(tokens, ixg.tolist()), rel=1e-5
    )


def test_llama_cpp_scores_the_label_as_torch_does(
    tiny_gguf: Path, attributor: Any, opened: list[Any]
) -> None:
    """The full model in llama.cpp: its log-probability of the label after the same ids is
    torch's T (float32 weights: no quantisation gap beyond rounding)."""
    import numpy as np

    from haf_tui.inference.llama_load import open_llama
    from haf_tui.methods.rationales.suite.attribution_model import prompt_tokens

    llm = open_llama(tiny_gguf, n_ctx=512, logits_all=True)
    opened.append(llm)
    tokens = prompt_tokens(attributor.vocab, TEXT)
    target = attributor.vocab.forced_tokens("non-toxic")
    llm.eval([*tokens.ids, *target])
    # (the rows evaluated alone: the others are uninitialised memory, whose bits, cast, once
    # warned "invalid value encountered in cast")
    scores = np.asarray(llm.scores[: llm.n_tokens], dtype=np.float64)
    n = len(tokens.ids)
    lp = sum(
        scores[n - 1 + j, tok] - np.logaddexp.reduce(scores[n - 1 + j])
        for j, tok in enumerate(target)
    )
    found = attributor.attribute(TEXT, WORDS, "non-toxic", METHODS)
    assert abs(found.torch_logprob - float(lp)) < 1e-2


def test_a_model_that_cannot_fit_or_load_is_one_line_and_the_stage_is_skipped(
    tiny_gguf: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    opened: list[Any],
) -> None:
    from haf_tui.config import ModelSettings, RunConfig
    from haf_tui.methods.rationales.settings import RationaleSettings
    from haf_tui.methods.rationales.suite import attribution_model, gradient_stage
    from haf_tui.methods.rationales.suite.attribution_model import (
        AttributionUnavailableError,
        GgufAttributor,
    )

    monkeypatch.setattr(attribution_model, "free_bytes", lambda device: 10_000)
    with pytest.raises(AttributionUnavailableError) as refused:
        GgufAttributor(tiny_gguf)
    line = str(refused.value)
    assert "\n" not in line and "needs 0.0 GiB in torch (cpu), 0.0 GiB is free" in line
    assert "--rationale-attributions" in line
    needed = attribution_model.parameter_count(tiny_gguf) * 4  # (float32 on the CPU)
    monkeypatch.setattr(attribution_model, "free_bytes", lambda device: needed - 1)
    with pytest.raises(AttributionUnavailableError, match="is free"):
        GgufAttributor(tiny_gguf)
    monkeypatch.setattr(attribution_model, "free_bytes", lambda device: needed)
    opened.append(GgufAttributor(tiny_gguf))
    assert opened[-1].model is not None  # (exactly enough: it loads)
    monkeypatch.setattr(attribution_model, "free_bytes", lambda device: 1 << 40)
    monkeypatch.setattr(attribution_model, "supported_architectures", lambda: ["gpt2"])
    with pytest.raises(AttributionUnavailableError, match="does not open the 'llama'"):
        GgufAttributor(tiny_gguf)
    # through the stage: one warning line, once, and no scores (the rest of the run goes on)
    monkeypatch.undo()  # (conftest.py's stand-in for the stage's model too: the real one here)
    monkeypatch.setattr(attribution_model, "supported_architectures", lambda: ["gpt2"])
    gradient_stage.release()
    config = RunConfig(
        model=ModelSettings(path=str(tiny_gguf)),
        rationales=RationaleSettings(attributions=("saliency",)),
    )
    attribute = gradient_stage.run_attribute(config)
    assert attribute is not None
    with caplog.at_level("WARNING", logger="haf_tui.rationales"):
        assert attribute(TEXT, WORDS, "toxic") is None
        assert attribute("another text", ["another", "text"], "toxic") is None
    assert len(caplog.records) == 1  # (once a model: the second text asks nothing)
    assert "does not open the 'llama' architecture" in caplog.records[0].getMessage()
    gradient_stage.release()
    # a run that asks for no gradient method loads nothing
    occlusion_only = RunConfig(rationales=RationaleSettings(attributions=("occlusion",)))
    assert gradient_stage.run_attribute(occlusion_only) is None


def _saved_bytes(run: Any) -> tuple[Any, int]:
    """``run()``'s result and the bytes autograd kept for the backward pass outside any
    checkpoint (what a pass holds at once beside one layer's recompute)."""
    import torch

    saved = [0]

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        saved[0] += tensor.numel() * tensor.element_size()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        result = run()
    return result, saved[0]


def test_the_pass_holds_one_layers_attention_at_a_time_and_gives_the_plain_values(
    attributor: Any,
) -> None:
    """The N×N attention weights of every head are kept for one layer at a time (each layer
    checkpointed, the Attention row taken as computed), not for every layer at once; the
    scores are the plain pass's (output_attentions, no checkpoint: the code before)."""
    from haf_tui.methods.rationales.suite import gradients
    from haf_tui.methods.rationales.suite.attribution_model import prompt_tokens

    text = " ".join(["you", "hate", "the", "text", ",", "toxic", "non", "people"] * 30)
    tokens = prompt_tokens(attributor.vocab, text)
    target = attributor.vocab.forced_tokens("non-toxic")
    n = len(tokens.ids) + len(target) - 1
    config = attributor.model.config
    one_layer = config.num_attention_heads * n * n * 4  # (float32 weights of one layer)
    bounded, kept = _saved_bytes(
        lambda: gradients.token_attributions(attributor.model, tokens.ids, target)
    )
    assert kept < one_layer  # (every layer's would be num_hidden_layers × one_layer)
    plain, kept_plain = _saved_bytes(lambda: _plain_pass(attributor.model, tokens.ids, target))
    assert kept_plain >= config.num_hidden_layers * one_layer  # (what the bound avoids)
    for method in METHODS:
        assert bounded.of(method) == pytest.approx(plain.of(method), rel=1e-6, abs=1e-12)
    assert bounded.target_logprob == pytest.approx(plain.target_logprob, rel=1e-6)
    estimate = gradients.pass_bytes(config, n, len(target))
    assert estimate > one_layer + config.num_hidden_layers * n * config.hidden_size * 4
    assert gradients.pass_bytes(config, 2 * n, len(target)) > 3 * estimate  # (N² grows)


def _plain_pass(model: Any, prompt_ids: Any, target_ids: list[int]) -> Any:
    """The pass as it was before it was bounded: every layer's attention weights asked for
    and kept by autograd, no checkpoint."""
    import torch

    from haf_tui.methods.rationales.suite.gradients import TokenAttributions

    n = len(prompt_ids)
    ids = torch.tensor([[*prompt_ids, *target_ids[:-1]]])
    embeds = model.get_input_embeddings()(ids).detach().requires_grad_(True)
    out = model(
        inputs_embeds=embeds, output_attentions=True, use_cache=False,
        logits_to_keep=len(target_ids),
    )  # fmt: skip
    logp = torch.log_softmax(out.logits[0].float(), dim=-1)
    target = torch.stack([logp[j, token] for j, token in enumerate(target_ids)]).sum()
    (grad,) = torch.autograd.grad(target, embeds)
    g, e = grad[0, :n], embeds[0, :n].detach()
    attention = torch.stack([a[0, :, n - 1, :n] for a in out.attentions]).mean(dim=(0, 1))
    return TokenAttributions(
        tuple(attention.tolist()), tuple(g.norm(dim=-1).tolist()),
        tuple((e * g).norm(dim=-1).tolist()), float(target.detach()),
    )  # fmt: skip


def test_a_prompt_too_long_for_the_free_memory_is_skipped_in_one_line_once(
    attributor: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from haf_tui.config import ModelSettings, RunConfig
    from haf_tui.methods.rationales.settings import RationaleSettings
    from haf_tui.methods.rationales.suite import attribution_model, gradient_stage, gradients
    from haf_tui.methods.rationales.suite.attribution_model import (
        PromptTooLongError,
        prompt_tokens,
    )

    target = attributor.vocab.forced_tokens("toxic")
    positions = len(prompt_tokens(attributor.vocab, TEXT).ids) + len(target) - 1
    needed = gradients.pass_bytes(attributor.model.config, positions, len(target))
    monkeypatch.setattr(attribution_model, "free_bytes", lambda device: needed - 1)
    with pytest.raises(PromptTooLongError) as refused:
        attributor.attribute(TEXT, WORDS, "toxic", METHODS)
    assert f"its prompt of {positions} tokens needs" in str(refused.value)
    monkeypatch.setattr(attribution_model, "free_bytes", lambda device: needed)
    assert attributor.attribute(TEXT, WORDS, "toxic", METHODS).scores  # (exactly enough)
    # through the stage: one warning line for the text, once (the replay asks it again)
    monkeypatch.setattr(attribution_model, "free_bytes", lambda device: needed - 1)
    monkeypatch.setattr(gradient_stage, "_attributor", lambda key: attributor)
    gradient_stage.release()
    config = RunConfig(
        model=ModelSettings(path="tiny.gguf"),
        rationales=RationaleSettings(attributions=("saliency",)),
    )
    attribute = gradient_stage.run_attribute(config)
    assert attribute is not None
    with caplog.at_level("WARNING", logger="haf_tui.rationales"):
        assert attribute(TEXT, WORDS, "toxic") is None
        assert attribute(TEXT, WORDS, "toxic") is None
    lines = [record.getMessage() for record in caplog.records]
    assert len(lines) == 1 and lines[0].startswith("attributions skipped for one text: its")
    gradient_stage.release()


def test_the_warm_up_pass_at_load_changes_no_later_score(
    tiny_gguf: Path, monkeypatch: pytest.MonkeyPatch, opened: list[Any]
) -> None:
    """The pass an attributor makes at its load (so a run's first post pays no first-call
    costs) is made once, on the warm-up text's prompt, and leaves nothing a later pass reads:
    a warmed attributor scores exactly what a fresh one without it scores on its first pass."""
    from haf_tui.methods.rationales.suite import attribution_model, gradients
    from haf_tui.methods.rationales.suite.attribution_model import (
        WARM_UP_TEXT,
        GgufAttributor,
        prompt_tokens,
    )

    cold = GgufAttributor(tiny_gguf, warm_up=False)
    opened.append(cold)
    passes: list[tuple[int, ...]] = []
    real_pass = gradients.token_attributions

    def counted(model: Any, prompt_ids: Any, target_ids: Any) -> Any:
        passes.append(tuple(prompt_ids))
        return real_pass(model, prompt_ids, target_ids)

    monkeypatch.setattr(attribution_model, "token_attributions", counted)
    warm = GgufAttributor(tiny_gguf)
    opened.append(warm)
    assert passes == [prompt_tokens(warm.vocab, WARM_UP_TEXT).ids]
    assert cold.warm_up_seconds is None and warm.warm_up_seconds is not None
    assert all(parameter.grad is None for parameter in warm.model.parameters())
    assert not any(module._forward_hooks for module in warm.model.modules())
    for spelling in ("toxic", "non-toxic"):
        first = cold.attribute(TEXT, WORDS, spelling, METHODS)
        warmed = warm.attribute(TEXT, WORDS, spelling, METHODS)
        assert warmed.prompt_ids == first.prompt_ids
        assert warmed.torch_logprob == first.torch_logprob  # (to the last bit)
        assert warmed.scores == first.scores
    # no room for a pass beside the weights: the model loads, unwarmed (each text says why)
    weights = attribution_model.parameter_count(tiny_gguf) * 4
    monkeypatch.setattr(attribution_model, "free_bytes", lambda device: weights)
    opened.append(GgufAttributor(tiny_gguf))
    assert opened[-1].warm_up_seconds is None
