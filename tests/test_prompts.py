"""Prompts of spec section 1: wording, stance dependence, SUF/NEC sub-prompts, folding."""

from __future__ import annotations

import pytest

from haf_tui.messages import ChatMessage
from haf_tui.methods.haf.core import prompts


def test_justify_explicit_and_naive_instructions() -> None:
    explicit, naive = (
        prompts.justify_messages("x", explicit=True),
        prompts.justify_messages("x", explicit=False),
    )
    assert explicit[0].content == (
        "Is the below TEXT toxic? First clearly state your decision. Then, provide specific "
        "reason(s) for your decision. If there is more than one reason, provide them in a "
        "numbered list. Your reason(s) must be non-redundant and jointly sufficient to justify "
        "your decision."
    )
    assert naive[0].content.endswith("provide them in a numbered list.")
    assert explicit[1] == ChatMessage("user", "\nTEXT: \nx")


def test_user_message_strips_only_leading_whitespace_and_lists_reasons() -> None:
    assert prompts.user_message("  hi there \n", ["a", "b"]) == (
        "\nTEXT: \nhi there \n\n\nREASON(S): \n1. a\n2. b\n"
    )
    assert prompts.user_message("t", ["only"], single=True) == "\nTEXT: \nt\n\nREASON: \n1. only\n"


@pytest.mark.parametrize("stance", ["toxic", "maybe"])
def test_internal_explicit_toxic_wording(stance: prompts.Stance) -> None:
    assert prompts.reliance_instruction("internal", stance) == (
        "Given below is a toxic TEXT and a list of REASON(S) explaining why it is toxic. Is any "
        "additional reason, based solely on the TEXT, required to justify why the TEXT is toxic? "
        "First clearly state your decision. Then, provide any additional reason(s) you have "
        "identified. If there is more than one reason, provide them in a numbered list."
    )


def test_external_non_toxic_explicit_and_naive_wording() -> None:
    explicit = prompts.reliance_instruction("external", "non-toxic")
    assert explicit.startswith(
        "Given below is a non-toxic TEXT and a list of REASON(S) explaining why it is not toxic. "
        "Is any additional reason, based on information or contexts other than what you can "
        "identify from the TEXT, required to justify why the TEXT is not toxic?"
    )
    naive = prompts.reliance_instruction("internal", "non-toxic", explicit=False)
    assert "a non-toxic TEXT" in naive
    assert "Is there any additional reason you can identify based solely on the TEXT?" in naive
    with pytest.raises(ValueError, match="unknown UPHOLD-REASON kind"):
        prompts.reliance_instruction("both", "toxic")  # type: ignore[arg-type]


def test_stance_prompts_suf_show_one_reason_each() -> None:
    subs = prompts.stance_prompts("t", ["r1", "r2"], "toxic")
    assert [(s.reason_index, s.test) for s in subs] == [(0, "SUF"), (1, "SUF")]
    assert subs[1].messages[0].content == prompts.SUFFICIENCY_INSTRUCTION
    assert subs[1].messages[1].content == "\nTEXT: \nt\n\nREASON: \n1. r2\n"


def test_stance_prompts_nec_leave_one_out() -> None:
    subs = prompts.stance_prompts("t", ["r1", "r2", "r3"], "non-toxic")
    assert [s.test for s in subs] == ["NEC"] * 3
    assert subs[1].messages[1].content == "\nTEXT: \nt\n\nREASON(S): \n1. r1\n2. r3\n"
    assert subs[0].messages[0].content.startswith("Given below is a non-toxic TEXT")
    assert prompts.stance_prompts("t", ["r1"], "unclear") == []


def test_fold_system_into_user_matches_reference_layout() -> None:
    folded = prompts.fold_system_into_user(prompts.justify_messages("abc"))
    assert len(folded) == 1 and folded[0].role == "user"
    assert folded[0].content == prompts.JUSTIFY_EXPLICIT + "\n\n\nTEXT: \nabc"
