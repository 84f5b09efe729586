# Over 400 lines because the parser's unit cases stand beside its parity with the reference.
"""Tests for haf_tui.methods.haf.core.parsing (and its follow-up decisions, core.followup):
parity with the reference parser on its fixtures, and unit cases."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from haf_tui.methods.haf.core.followup import (
    NO_TEMPLATES,
    TEMPLATE_FLOOR,
    YES_TEMPLATES,
    Similarity,
    decide_followup,
    rule_decision,
    template_decision,
)
from haf_tui.methods.haf.core.parsing import (
    FOLLOWUP_STAGES,
    REFERENCE_UNCLEAR_LABEL,
    Reason,
    RulesLiteral,
    parse_followup,
    parse_justify,
    split_sentences,
    stance_from_reference_label,
    stance_of,
)

UNREPRODUCIBLE = [
    "individual Ministral-8B-Instruct-2410/hate_explain/1",
    "individual Ministral-8B-Instruct-2410/hate_explain/5",
]
"""The two fixture outputs whose stored text does not contain the decision sentence and first
reason the reference parsed (it parsed other text): no parser can reproduce them."""
ALL_RULES: tuple[RulesLiteral, ...] = ("reference", "strict")

Fixture = dict[str, Any]


def _followup_outputs(fixtures: list[Fixture]) -> Iterator[tuple[str, str, Fixture]]:
    """(stage, sample id, stage output) for every internal/external/individual output."""
    for fixture in fixtures:
        for sample in fixture["samples"]:
            name = f"{fixture['model']}/{fixture['dataset']}/{sample['index']}"
            for stage in ("internal", "external"):
                yield stage, name, sample["stages"][stage]
            for output in sample["stages"]["individual"]:
                yield "individual", name, output


def _reference_sentence(sentence: str) -> str:
    return "" if sentence == REFERENCE_UNCLEAR_LABEL else sentence


def _rate(hits: int, total: int) -> float:
    assert total > 0
    return hits / total


# ---------------------------------------------------------------- parity with the reference


def test_justify_parity(reference_fixtures: list[Fixture]) -> None:
    stance_hits = reasons_hits = sentence_hits = total = 0
    for fixture in reference_fixtures:
        for sample in fixture["samples"]:
            justify = sample["stages"]["justify"]
            parsed = parse_justify(justify["output_text"])
            total += 1
            stance_hits += parsed.stance == stance_from_reference_label(
                justify["reference_decision_label"]
            )
            reasons_hits += [r.text for r in parsed.reasons] == [
                r["text"] for r in justify["reasons"]
            ]
            sentence_hits += parsed.decision_sentence == _reference_sentence(
                justify["decision_sentence"]
            )
    rates = {
        "stance": _rate(stance_hits, total),
        "reasons": _rate(reasons_hits, total),
        "decision sentence": _rate(sentence_hits, total),
    }
    print(f"JUSTIFY parity over {total} outputs: {rates}")
    assert total == 80 and stance_hits == reasons_hits == sentence_hits == total, rates


def test_followup_parity(reference_fixtures: list[Fixture]) -> None:
    totals = dict.fromkeys(("uphold-reason", "individual"), 0)
    reason_hits = dict.fromkeys(totals, 0)
    sentence_hits = dict.fromkeys(totals, 0)
    unreproducible: list[str] = []
    for stage, name, output in _followup_outputs(reference_fixtures):
        group = "individual" if stage == "individual" else "uphold-reason"
        parsed = parse_followup(output["output_text"], stage)
        expected = [r if isinstance(r, str) else r["text"] for r in output["reasons"]]
        totals[group] += 1
        same_reasons = [r.text for r in parsed.reasons] == expected
        same_sentence = parsed.decision_sentence == _reference_sentence(output["decision_sentence"])
        reason_hits[group] += same_reasons
        sentence_hits[group] += same_sentence
        if not (same_reasons and same_sentence):
            # Allowed only where the reference parsed a text other than the stored output
            # (its reasons or decision sentence do not occur in output_text at all).
            pieces = [*expected, _reference_sentence(output["decision_sentence"])]
            assert any(piece not in output["output_text"] for piece in pieces), (stage, name)
            unreproducible.append(f"{stage} {name}")
    for group, total in totals.items():
        reasons_rate = _rate(reason_hits[group], total)
        sentence_rate = _rate(sentence_hits[group], total)
        print(
            f"{group} parity over {total} outputs: reasons {reasons_rate:.1%}, "
            f"decision sentence {sentence_rate:.1%}"
        )
    # measured: every output but the two unreproducible ones, on both counts
    assert sorted(unreproducible) == UNREPRODUCIBLE
    assert totals == {"uphold-reason": 160, "individual": 220}
    assert reason_hits == sentence_hits == {"uphold-reason": 160, "individual": 218}


def test_spans_index_the_original_text(reference_fixtures: list[Fixture]) -> None:
    checked = 0
    for fixture in reference_fixtures:
        for sample in fixture["samples"]:
            text = sample["stages"]["justify"]["output_text"]
            for rules in ALL_RULES:
                parsed = parse_justify(text, rules=rules)
                _assert_spans(text, parsed.reasons, parsed.decision_sentence, parsed.decision_start)
                checked += len(parsed.reasons)
    for stage, _, output in _followup_outputs(reference_fixtures):
        text = output["output_text"]
        for rules in ALL_RULES:
            followup = parse_followup(text, stage, rules=rules)
            _assert_spans(
                text, followup.reasons, followup.decision_sentence, followup.decision_start
            )
            checked += len(followup.reasons)
    assert checked > 1000


def _assert_spans(text: str, reasons: tuple[Reason, ...], sentence: str, start: int) -> None:
    for reason in reasons:
        assert text[reason.start : reason.end] == reason.text
    if sentence:
        assert text[start : start + len(sentence)] == sentence
    else:
        assert start == -1


def test_followup_decisions_on_fixtures_are_never_misread(
    reference_fixtures: list[Fixture],
) -> None:
    """A sentence saying no reason is required is never YES, and vice versa."""
    for stage, name, output in _followup_outputs(reference_fixtures):
        parsed = parse_followup(output["output_text"], stage)
        sentence = parsed.decision_sentence.lower()
        if "no additional reason" in sentence or "not required" in sentence:
            assert parsed.decision == "NO", (name, sentence)
        if sentence.endswith("additional reasons are required to justify why the text is toxic."):
            assert parsed.decision == "YES", (name, sentence)


# ---------------------------------------------------------------- sentences and stance


def test_split_sentences_spans() -> None:
    text = "  The text is toxic. It insults!\n\n- item one\nLast?  "
    sentences = split_sentences(text)
    assert [s.text for s in sentences] == [
        "The text is toxic.",
        "It insults!",
        "- item one",
        "Last?",
    ]
    for sentence in sentences:
        assert text[sentence.start : sentence.end] == sentence.text


@pytest.mark.parametrize(
    ("sentence", "stance"),
    [
        ("The TEXT is toxic.", "toxic"),
        ("**Decision:** Toxic", "toxic"),
        ("The text is not toxic.", "non-toxic"),
        ("The text is non-toxic.", "non-toxic"),
        ("I classify the text as nontoxic.", "non-toxic"),
        ("The text isn't toxic.", "non-toxic"),
        ("The text is not considered toxic.", "non-toxic"),
        ("The text is mildly toxic.", "maybe"),
        ("I would classify the given TEXT as potentially toxic.", "maybe"),
        ("The text may be toxic.", "maybe"),
        ("The text could be seen as toxic.", "maybe"),
        ("My decision is final.", "unclear"),
        ("", "unclear"),
    ],
)
def test_stance_examples(sentence: str, stance: str) -> None:
    assert stance_of(sentence) == stance
    assert stance_of(sentence, rules="strict") == stance


def test_reference_label_mapping() -> None:
    assert stance_from_reference_label(REFERENCE_UNCLEAR_LABEL) == "unclear"
    assert stance_from_reference_label("non-toxic") == "non-toxic"


def test_unclear_and_empty_outputs() -> None:
    for text in ("", "   \n", "I cannot help with that request.", "Hello there!\n\n1. just a list"):
        parsed = parse_justify(text)
        assert parsed.stance == "unclear"
        assert parsed.decision_sentence == ""
        assert (parsed.decision_start, parsed.decision_end) == (-1, -1)
        assert parsed.reasons == ()


def test_decision_sentence_without_reasons() -> None:
    text = "\n  The text is toxic because it insults the reader.  "
    parsed = parse_justify(text)
    assert parsed.stance == "toxic"
    assert parsed.reasons == ()
    assert text[parsed.decision_start : parsed.decision_end] == parsed.decision_sentence


# ---------------------------------------------------------------- reasons


def test_numbered_and_bulleted_items_with_spans() -> None:
    text = (
        "The text is toxic.\n\n"
        "1. It uses a slur against a group of people.\n"
        "2) It calls for violence against the reader.\n"
        "- **Insult**: It calls the author an idiot, twice.\n"
        "* It mocks the victims of a disaster openly."
    )
    reasons = parse_justify(text).reasons
    assert [r.text for r in reasons] == [
        "It uses a slur against a group of people.",
        "It calls for violence against the reader.",
        "**Insult**: It calls the author an idiot, twice.",
        "It mocks the victims of a disaster openly.",
    ]
    assert all(text[r.start : r.end] == r.text for r in reasons)


def test_blank_line_cut_short_items_and_headers() -> None:
    text = (
        "The text is toxic.\n"
        "1. Too short item.\n"
        "2. *\n"
        "3. It demeans women as a group in general.\n\nThis trailing paragraph is not part.\n"
        "4. **Reasons:**\n\nand a paragraph after the header line here."
    )
    reasons = parse_justify(text).reasons
    assert [r.text for r in reasons] == ["It demeans women as a group in general."]


def test_reference_drops_only_first_short_reason_header() -> None:
    text = (
        "The text is toxic.\n"
        "1. Reasons:\n\nthe first header is followed by a paragraph.\n"
        "2. More reasons:\n\nthe second header is followed by one too."
    )
    assert [r.text for r in parse_justify(text).reasons] == ["More reasons:"]
    assert parse_justify(text, rules="strict").reasons == ()


def test_additional_reason_announcements_dropped_in_followups_only() -> None:
    text = (
        "Decision: Yes, an additional reason is required.\n"
        "1. **Additional reason**: the text also mocks a disability.\n"
        "2. The text also mocks a disability in a cruel way."
    )
    assert len(parse_justify(text).reasons) == 2
    for stage in FOLLOWUP_STAGES:
        followup = parse_followup(text, stage)
        assert [r.text for r in followup.reasons] == [
            "The text also mocks a disability in a cruel way."
        ]


def test_reference_removes_every_copy_of_the_decision_sentence() -> None:
    """A copy of the decision sentence inside a reason is cut from its text, not its span."""
    text = "The text is toxic.\n1. Because The text is toxic. it insults the reader a lot."
    reference = parse_justify(text).reasons
    assert [r.text for r in reference] == ["Because  it insults the reader a lot."]
    assert text[reference[0].start : reference[0].end].startswith("Because The text is toxic.")
    strict = parse_justify(text, rules="strict").reasons
    assert [r.text for r in strict] == ["Because The text is toxic. it insults the reader a lot."]
    assert text[strict[0].start : strict[0].end] == strict[0].text


def test_stage_is_validated() -> None:
    with pytest.raises(ValueError, match="stage"):
        parse_followup("No additional reason is required.", "justify")
    with pytest.raises(ValueError, match="rules"):
        parse_justify("The text is toxic.", rules="loose")  # type: ignore[arg-type]


# ---------------------------------------------------------------- follow-up decisions


@pytest.mark.parametrize(
    ("sentence", "decision"),
    [
        ("Decision: No additional reason is required to justify why the TEXT is toxic.", "NO"),
        ("Additional reasons are not required to justify why the TEXT is toxic.", "NO"),
        ("Decision: No, the given reason is sufficient to justify why the TEXT is toxic.", "NO"),
        ("I agree with the provided reasons, which the text shows as toxic.", "NO"),
        ("I don't think any additional reason is required to justify why it is toxic.", "NO"),
        ("Based on the provided TEXT, I do not identify any additional reason(s).", "NO"),
        ("**Decision:** No", "NO"),
        ("**Decision:** Yes, additional reasons are required to justify why it is toxic.", "YES"),
        ("Yes, an additional reason is required to justify why the TEXT is toxic.", "YES"),
        ("Decision: The provided reasons are insufficient to show why it is toxic.", "YES"),
        ("Decision: There are additional reasons why the text is toxic.", "YES"),
        ("Additional reasons may be required to justify why the TEXT is toxic.", "MAYBE"),
        ("No additional reason is needed, although the reasons could go further.", "MAYBE"),
        ("**Decision:** The text is toxic.", "UNCLEAR"),
        ("**Decision:** Yes, the TEXT is toxic.", "UNCLEAR"),
        ("Based on the provided reasons, I conclude that the TEXT is not toxic.", "UNCLEAR"),
    ],
)
def test_followup_rules(sentence: str, decision: str) -> None:
    assert rule_decision(sentence) == decision
    text = f"{sentence}\n\n1. The text also targets a protected group directly."
    assert parse_followup(text, "internal").decision == decision


def _template_scores(scores: dict[str, float], sentence: str) -> Similarity:
    """A deterministic stand-in for the cross-encoder: a fixed score per template."""

    def similarity(left: str, template: str) -> float:
        assert left == sentence
        return scores.get(template, 0.0)

    return similarity


@pytest.mark.parametrize(
    ("scores", "expected"),
    [
        ({NO_TEMPLATES[3]: 0.6, YES_TEMPLATES[0]: 0.2}, "NO"),
        ({NO_TEMPLATES[0]: 0.3, YES_TEMPLATES[1]: 0.3}, "YES"),  # a tie goes to YES
        ({YES_TEMPLATES[2]: 0.5}, "YES"),
        ({NO_TEMPLATES[1]: TEMPLATE_FLOOR - 0.01, YES_TEMPLATES[0]: 0.1}, "UNCLEAR"),
    ],
)
def test_similarity_fallback(scores: dict[str, float], expected: str) -> None:
    sentence = "This is my decision on the matter."
    text = f"{sentence}\n1. It is a rather long reason for the decision."
    assert rule_decision(sentence) is None  # no rule applies, so the templates decide
    similarity = _template_scores(scores, sentence)
    assert template_decision(sentence, similarity) == expected
    parsed = parse_followup(text, "external", similarity=similarity)
    assert (parsed.decision, parsed.decision_source) == (expected, "similarity")
    without = parse_followup(text, "external")
    assert (without.decision, without.decision_source) == ("UNCLEAR", "none")


def test_rules_take_precedence_over_similarity() -> None:
    def always_yes(sentence: str, template: str) -> float:
        return 1.0 if template in YES_TEMPLATES else 0.0

    assert decide_followup("No additional reason is required.", always_yes) == ("NO", "rules")
    assert decide_followup("", always_yes) == ("UNCLEAR", "none")


def test_followup_without_decision_sentence() -> None:
    text = "No additional reasons are required.\n1. The text is already clearly hateful."
    reference = parse_followup(text, "individual")
    assert (reference.decision, reference.decision_sentence) == ("UNCLEAR", "")
    strict = parse_followup(text, "individual", rules="strict")
    assert (strict.decision, strict.decision_sentence) == (
        "NO",
        "No additional reasons are required.",
    )


# ---------------------------------------------------------------- strict rules


@pytest.mark.parametrize(
    ("sentence", "reference", "strict"),
    [
        ("The text insults someone and is toxic.", "maybe", "toxic"),
        ("It contributes to racist hate, which is toxic.", "maybe", "toxic"),
        ("It is not only rude but also toxic.", "maybe", "toxic"),
        ("There is no doubt that it is toxic.", "non-toxic", "toxic"),
        ("The text is highly-toxic.", "non-toxic", "toxic"),
    ],
)
def test_strict_keyword_matching(sentence: str, reference: str, strict: str) -> None:
    assert stance_of(sentence) == reference
    assert stance_of(sentence, rules="strict") == strict
    assert parse_justify(sentence).stance == reference
    assert parse_justify(sentence, rules="strict").stance == strict


def test_strict_skips_bare_decision_label() -> None:
    text = "**Decision:**\nThe text is not toxic.\n\n1. It is a polite question about a film."
    assert parse_justify(text).stance == "unclear"
    strict = parse_justify(text, rules="strict")
    assert (strict.stance, strict.decision_sentence) == ("non-toxic", "The text is not toxic.")
    assert [r.text for r in strict.reasons] == ["It is a polite question about a film."]


# ---------------------------------------------------------------- spans on generated text

_ATOMS = (
    "The text is toxic.", "not toxic", "someone", " ", "\n", "\n\n", "\r\n", "1. ", "2) ", "- ",
    "* ", "*", "**Decision:**", "**Reasons:**", "additional reason", "Yes, ", "No, ", ". ", "!",
    "required", "sufficient", "a long sentence of reasoning about the insult",
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_ATOMS), max_size=30).map("".join))
def test_spans_hold_on_generated_text(text: str) -> None:
    for rules in ALL_RULES:
        parsed = parse_justify(text, rules=rules)
        followup = parse_followup(text, "individual", rules=rules)
        for result in (parsed, followup):
            sentence = result.decision_sentence
            assert text[result.decision_start : result.decision_end] == sentence or (
                not sentence and result.decision_start == result.decision_end == -1
            )
            for reason in result.reasons:
                exact = text[reason.start : reason.end] == reason.text
                # Reference rules delete every copy of the decision sentence; only a reason with
                # a deleted copy inside may differ from its span.
                assert exact or (
                    rules == "reference"
                    and bool(sentence)
                    and sentence in text[reason.start : reason.end]
                )


NESTED = "[" * 100_000 + "]" * 100_000
"""The probe's answer (issue 42 §6): 100,000 nested brackets."""


@pytest.mark.parametrize("rules", ["reference", "strict"])
def test_an_answer_of_100_000_nested_brackets_parses_as_no_decision(rules: RulesLiteral) -> None:
    justify = parse_justify(NESTED, rules=rules)
    assert justify.stance == stance_from_reference_label(REFERENCE_UNCLEAR_LABEL)
    for stage in FOLLOWUP_STAGES:
        followup = parse_followup(NESTED, stage, rules=rules)
        assert followup.decision_sentence == "" or followup.decision_sentence in NESTED
