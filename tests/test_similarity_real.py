"""The similarity model g loaded for real (bundled all-MiniLM-L6-v2, offline)."""

from __future__ import annotations

from typing import Any

import pytest

from haf_tui.similarity import (
    BiEncoderSimilarity,
    CachedSimilarity,
    SimilarityError,
    load_similarity,
    relevance_vector,
    texts_without_each_piece,
)

pytestmark = pytest.mark.real_similarity


def test_bundled_minilm_scores_are_sensible(minilm: Any) -> None:
    same, close, far = minilm.similarities(
        [
            ("You are an idiot.", "You are an idiot."),
            ("You are an idiot.", "You are a fool."),
            ("You are an idiot.", "The library opens at nine on Mondays."),
        ]
    )
    assert same == pytest.approx(1.0, abs=1e-5)
    assert 0.0 <= far < close < same <= 1.0
    assert minilm.name == "all-MiniLM-L6-v2"


def test_cache_by_pair_answers_repeats_without_the_model(minilm: Any) -> None:
    assert isinstance(minilm, CachedSimilarity)
    pairs = [("a cat sat", "a dog sat"), ("a dog sat", "a cat sat")]
    first = minilm.similarities(pairs)
    misses = minilm.misses
    assert minilm.similarities(pairs) == first
    assert minilm.misses == misses
    assert first[0] == pytest.approx(first[1])  # symmetric bi-encoder: one key


def test_relevance_vector_in_one_batch(minilm: Any) -> None:
    span = "The text insults the reader."
    offsets = [(0, 3), (3, 8), (8, 16), (16, 20), (20, 27), (27, 28)]
    assert texts_without_each_piece(span, offsets)[2] == "The text the reader."
    relevance = relevance_vector(minilm, span, offsets)
    assert len(relevance) == 6 and all(0.0 <= r <= 1.0 for r in relevance)
    assert relevance[2] > relevance[5]  # "insults" matters more than the full stop
    assert relevance_vector(minilm, span, []) == []


def test_unknown_model_fails_with_one_line() -> None:
    with pytest.raises(SimilarityError, match="cannot load similarity model"):
        BiEncoderSimilarity("/nonexistent/similarity-model")
    with pytest.raises(SimilarityError, match="unknown similarity kind"):
        load_similarity(kind="tri-encoder")  # type: ignore[arg-type]


def test_spans_of_a_generation_are_scored_in_one_call(minilm: Any) -> None:
    """``score_spans`` gives what ``score_span`` gives span by span, with one model call."""
    from haf_tui.inference.base import GeneratedToken, TokenTextAssembler
    from haf_tui.methods.haf.suite.scoring import score_span, score_spans

    text = "The text is toxic. It insults the reader. It mocks them."
    assembler, tokens = TokenTextAssembler(), []
    for index, word in enumerate(text.replace(" ", " \0").split("\0")):
        piece, byte_offset, char_offset = assembler.add(word.encode())
        tokens.append(GeneratedToken(index, word.encode(), piece, byte_offset, char_offset, -0.2))
    spans = [(0, 18), (19, 41), (42, 56), (5, 5)]
    calls: list[int] = []

    class Counting:
        name = "counting"

        def similarities(self, pairs: Any) -> list[float]:
            calls.append(len(pairs))
            return list(minilm.similarities(pairs))

    together = score_spans(text, tokens, spans, Counting())
    assert len(calls) == 1
    for (start, end), score in zip(spans, together, strict=True):
        alone = score_span(text, tokens, start, end, minilm)
        assert score.token_indices == alone.token_indices
        assert score.relevance == pytest.approx(alone.relevance)
        assert score.confidence == pytest.approx(alone.confidence, nan_ok=True)
