"""Confidence of a generated span (TokenSAR, spec section 4) from recorded tokens.

A span's tokens are found from its character span and the offsets recorded at generation
time, never by re-tokenizing. The relevance of each token is 1 - |g(s, s without z_i)|,
computed in one batch by the similarity model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from haf_tui.inference.base import GeneratedToken, tokens_in_span
from haf_tui.methods.haf.core.metrics import tokensar_confidence
from haf_tui.methods.haf.core.parsing import Reason, TextPiece
from haf_tui.similarity import SimilarityModel, relevance_vector, texts_without_each_piece


@dataclass(frozen=True)
class SpanScore:
    """A span's tokens, their NLL and relevance, and its confidence (NaN: no tokens)."""

    token_indices: tuple[int, ...]
    nll: tuple[float, ...]
    relevance: tuple[float, ...]
    confidence: float


def piece_offsets_in_span(
    tokens: Sequence[GeneratedToken], indices: Sequence[int], start: int, end: int
) -> list[tuple[int, int]]:
    """Each token's character range clipped to the span, relative to the span's start."""
    offsets = []
    for index in indices:
        token = tokens[index]
        offsets.append((max(token.char_offset, start) - start, min(token.char_end, end) - start))
    return offsets


def score_span(
    output_text: str,
    tokens: Sequence[GeneratedToken],
    start: int,
    end: int,
    similarity: SimilarityModel,
) -> SpanScore:
    """TokenSAR confidence of ``output_text[start:end]`` from its recorded tokens."""
    if start < 0 or end <= start:
        return SpanScore((), (), (), float("nan"))
    indices = tokens_in_span(tokens, start, end)
    span_text = output_text[start:end]
    offsets = piece_offsets_in_span(tokens, indices, start, end)
    relevance = relevance_vector(similarity, span_text, offsets)
    nll = [tokens[i].nll for i in indices]
    return SpanScore(
        tuple(indices), tuple(nll), tuple(relevance), tokensar_confidence(nll, relevance)
    )


def owned_piece(tokens: Sequence[GeneratedToken], reason: Reason) -> TextPiece:
    """The stretch of a reason's text whose tokens are the reason's own: the whole reason when
    it is contiguous in the output; else, as the reference implementation does, the stretch
    with the most tokens (the first on a tie), never the cut-out decision sentence.

    The reference finds a reason's tokens by tokenizing its text (the list item with the
    decision sentence deleted) and scores the longest run of those tokens that appears
    unbroken in the output (``get_common_sublists`` in ``haf.py``): a run cannot cross the
    deleted sentence, so it is one side of the cut, the longer, and the first on a tie. Its
    relevances are still measured against the whole reason text (see :func:`score_spans`'s
    ``within``)."""
    stretches = reason.stretches()
    counts = [len(tokens_in_span(tokens, piece.start, piece.end)) for piece in stretches]
    return stretches[counts.index(max(counts))]


def score_spans(
    output_text: str,
    tokens: Sequence[GeneratedToken],
    spans: Sequence[tuple[int, int]],
    similarity: SimilarityModel,
    within: Sequence[tuple[str, int] | None] | None = None,
) -> list[SpanScore]:
    """:func:`score_span` of every ``(start, end)`` span, with one similarity call for all the
    relevance pairs (the decision sentence and every reason of a generation together).

    ``within[k]``, when given, is the text ``s`` span ``k``'s relevances are measured against
    and where the span's text lies in it: ``(s, offset)`` with
    ``s[offset : offset + end - start] == output_text[start:end]`` (a reason whose text the
    decision sentence was cut out of); R_i = 1 - |g(s, s without z_i)|."""
    pairs: list[tuple[str, str]] = []
    plans: list[tuple[list[int], int] | None] = []
    for k, (start, end) in enumerate(spans):
        if start < 0 or end <= start:
            plans.append(None)
            continue
        indices = tokens_in_span(tokens, start, end)
        span_text, shift = (within[k] if within and within[k] else None) or (
            output_text[start:end],
            0,
        )
        offsets = [
            (a + shift, b + shift) for a, b in piece_offsets_in_span(tokens, indices, start, end)
        ]
        plans.append((indices, len(pairs)))
        pairs += [(span_text, masked) for masked in texts_without_each_piece(span_text, offsets)]
    scores = similarity.similarities(pairs) if pairs else []
    results = []
    for plan in plans:
        if plan is None:
            results.append(SpanScore((), (), (), float("nan")))
            continue
        indices, first = plan
        relevance = [1.0 - abs(score) for score in scores[first : first + len(indices)]]
        nll = [tokens[i].nll for i in indices]
        results.append(
            SpanScore(
                tuple(indices), tuple(nll), tuple(relevance), tokensar_confidence(nll, relevance)
            )
        )
    return results
