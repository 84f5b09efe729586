"""A reason's confidence covers exactly its own tokens (issue 24 §5): when the decision
sentence sits in the middle of a list item, reference rules cut it out of the reason's text,
and the reason owns the tokens of its longest unbroken stretch, as the reference
implementation scores it (``HAF.md`` §3–4; ``owned_piece``): its stored span, token range,
NLL and relevance arrays and confidence are those tokens', never the decision sentence's."""

from __future__ import annotations

import re
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from haf_tui.config import RunConfig
from haf_tui.inference.base import GeneratedToken, Generation, TokenTextAssembler
from haf_tui.methods.base import SuiteContext, Task
from haf_tui.methods.haf.core.metrics import tokensar_confidence
from haf_tui.methods.haf.core.parsing import parse_followup
from haf_tui.methods.haf.suite.suite import HAF
from haf_tui.store.records import GenerationRecord, InstanceRecord
from haf_tui.vocabulary import Rules

SENTENCE = "No additional reason is required to justify why the TEXT is not toxic."


class LengthSimilarity:
    """g(a, b) = len(b) / len(a): a masked text's relevance grows with its removed piece, so
    a relevance measured against the wrong text shows."""

    name = "length"

    def __init__(self) -> None:
        self.pairs: list[tuple[str, str]] = []

    def similarities(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        self.pairs += pairs
        return [len(b) / len(a) for a, b in pairs]


def _generation(output: str) -> Generation:
    """``output`` as one token per word (each with the whitespace before it); NLL 0.1·(i+1)."""
    assembler = TokenTextAssembler()
    tokens = []
    for index, word in enumerate(re.findall(r"\s*\S+", output)):
        text, byte_offset, char_offset = assembler.add(word.encode())
        tokens.append(
            GeneratedToken(index, word.encode(), text, byte_offset, char_offset, -0.1 * (index + 1))
        )
    assert assembler.finish() == output
    return Generation("(prompt)", 10, output, tokens, "stop", 0.0)


def _record(
    output: str, similarity: LengthSimilarity, rules: Rules = "reference"
) -> GenerationRecord:
    config = RunConfig(parse_rules=rules)
    context = SuiteContext("run", config, similarity)
    instance = InstanceRecord(instance_id="i", position=0, text="thanks", label="normal")
    task = Task("individual", 1, "NEC", ())
    return HAF.record(context, instance, task, 7, _generation(output), None)


@pytest.mark.parametrize(
    ("before", "after", "owner"),
    [
        ("It asks a polite question about a cake recipe.", "It thanks the reader.", "before"),
        ("It is polite.", "It thanks the reader for a kind and helpful answer.", "after"),
        ("It is kind and polite.", "It thanks every kind reader.", "before"),  # a tie: the first
    ],
)
def test_a_reason_cut_by_the_decision_sentence_owns_its_longest_stretch(
    before: str, after: str, owner: str
) -> None:
    output = f"1. {before} {SENTENCE} {after}\n2. It is about cooking and nothing else."
    parsed = parse_followup(output, "individual")
    assert parsed.decision_sentence == SENTENCE
    assert parsed.reasons[0].text == f"{before}  {after}"  # the reference's text: kept

    similarity = LengthSimilarity()
    record = _record(output, similarity)
    reason = record.reasons[0]
    tokens = record.tokens
    owned = before if owner == "before" else after
    assert reason.text == f"{before}  {after}"
    assert output[reason.span_start : reason.span_end] == owned
    assert (reason.span_start, reason.span_end) == (
        output.index(owned),
        output.index(owned) + len(owned),
    )
    # its tokens are the owned stretch's words, none of the decision sentence's
    assert reason.token_first is not None
    indices = range(reason.token_first, reason.token_first + reason.token_count)
    assert "".join(tokens[i].text for i in indices).strip() == owned
    sentence_start = output.index(SENTENCE)
    sentence_tokens = {
        i
        for i, t in enumerate(tokens)
        if t.char_offset < sentence_start + len(SENTENCE) and t.char_end > sentence_start
    }
    assert not sentence_tokens & set(indices)
    assert reason.nll == pytest.approx([tokens[i].nll for i in indices])
    # relevances against the whole reason text, as the reference measures them
    text = reason.text
    offset = text.index(owned)
    expected_relevance = []
    for i in indices:
        start = max(tokens[i].char_offset, reason.span_start) - reason.span_start + offset
        end = min(tokens[i].char_end, reason.span_end) - reason.span_start + offset
        expected_relevance.append(1 - len(text[:start] + text[end:]) / len(text))
    assert reason.relevance == pytest.approx(expected_relevance)
    assert reason.confidence == pytest.approx(tokensar_confidence(reason.nll, reason.relevance))
    # the list item without a cut is untouched: its span is its text
    second = record.reasons[1]
    assert output[second.span_start : second.span_end] == second.text


def test_strict_rules_end_the_reason_at_the_decision_sentence() -> None:
    before, after = "It asks a polite question about a cake recipe.", "It thanks the reader."
    output = f"1. {before} {SENTENCE} {after}"
    record = _record(output, LengthSimilarity(), rules="strict")
    (reason,) = record.reasons
    assert reason.text == before == output[reason.span_start : reason.span_end]
    assert reason.token_count == len(before.split())


_ATOMS = (
    SENTENCE, "It asks a polite question.", " ", "\n", "\n\n", "1. ", "2) ", "- ", "* ",
    "additional reason", "a long sentence of reasoning about the question",
)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(_ATOMS), max_size=25).map("".join))
def test_every_piece_of_a_reason_is_where_it_says(output: str) -> None:
    for reason in parse_followup(output, "individual").reasons:
        for piece in reason.stretches():
            text = output[piece.start : piece.end]
            assert text == reason.text[piece.offset : piece.offset + len(text)]
            assert reason.start <= piece.start < piece.end <= reason.end
            assert (text == text.strip() and text) or not reason.pieces
        if reason.pieces:  # a cut reason: its stretches hold all of its text but whitespace
            assert "".join(reason.text.split()) == "".join(
                "".join(output[p.start : p.end].split()) for p in reason.pieces
            )
