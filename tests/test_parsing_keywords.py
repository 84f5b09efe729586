"""Every keyword of the stance and follow-up rules, one at a time (issue 24 §6): each hedge
word of ``HAF.md`` §3 makes a JUSTIFY decision sentence ``maybe`` and finds it, under both
rule sets, and each follow-up hedge makes Y ``MAYBE``. The words are written out here, not
read from :mod:`haf_tui.methods.haf.core.parsing`, so a word dropped there fails its own case."""

from __future__ import annotations

import pytest

from haf_tui.methods.haf.core.followup import rule_decision
from haf_tui.methods.haf.core.parsing import find_decision_sentence, stance_of
from haf_tui.vocabulary import RULES

HEDGED = {
    "but": "The text is short but toxic.",
    "mild": "The text is mildly toxic.",
    "partial": "The text is partially toxic.",
    "may": "The text may be toxic.",
    "might": "The text might be toxic.",
    "could": "The text could be toxic.",
    "possibly": "The text is possibly toxic.",
    "some": "The text is toxic to some readers.",
    "likely": "The text is likely toxic.",
    "seem": "The text seems toxic.",
    "appear": "The text appears toxic.",
    "suggest": "The wording suggests the text is toxic.",
    "probab": "The text is probably toxic.",
    "potential": "The text is potentially toxic.",
    "neutral": "The text is neutral in tone, yet toxic.",
}
"""HAF.md §3's hedge words (``probab-``: any ending), each in a sentence with no other."""

UNHEDGED = "The text is toxic."

FOLLOWUP_HEDGED = {
    "may": "Additional reasons may be required.",
    "might": "Additional reasons might be required.",
    "could": "Additional reasons could be required.",
    "possibly": "Additional reasons are possibly required.",
    "perhaps": "Perhaps additional reasons are required.",
    "maybe": "Maybe additional reasons are required.",
    "however": "However, additional reasons are required.",
    "although": "Although the reasons are good, additional reasons are required.",
    "though": "Though the reasons are good, additional reasons are required.",
    "but": "The reasons are good, but additional reasons are required.",
    "partially": "The reasons are partially sufficient.",
    "somewhat": "The reasons are somewhat sufficient.",
}


@pytest.mark.parametrize("rules", RULES)
@pytest.mark.parametrize("word", list(HEDGED))
def test_each_hedge_word_makes_the_stance_maybe(word: str, rules: str) -> None:
    sentence = HEDGED[word]
    assert stance_of(sentence, rules=rules) == "maybe"  # type: ignore[arg-type]
    assert stance_of(UNHEDGED, rules=rules) == "toxic"  # type: ignore[arg-type]


@pytest.mark.parametrize("rules", RULES)
@pytest.mark.parametrize("word", [w for w in HEDGED if w != "neutral"])
def test_each_hedge_word_alone_makes_a_decision_sentence(word: str, rules: str) -> None:
    """A sentence without "toxic" whose only keyword is the hedge is still the decision."""
    sentence = HEDGED[word].replace(" toxic", " rude").replace(" the text is rude", "")
    text = f"Hello there.\n{sentence}\n1. It is addressed to a reader."
    found = find_decision_sentence(text, rules=rules)  # type: ignore[arg-type]
    assert found is not None and found.text == sentence


@pytest.mark.parametrize("word", list(FOLLOWUP_HEDGED))
def test_each_followup_hedge_makes_y_maybe(word: str) -> None:
    assert rule_decision(FOLLOWUP_HEDGED[word]) == "MAYBE"
    unhedged = (
        "The reasons are sufficient."
        if "sufficient" in FOLLOWUP_HEDGED[word]
        else ("Additional reasons are required.")
    )
    assert rule_decision(unhedged) in ("YES", "NO")
