"""HAF's follow-up decision Y (is an additional reason required?) from a follow-up stage's
decision sentence: the phrasing rules of :func:`rule_decision` first (the same under both
rule sets), then, when no rule applies and a similarity function is given, the reference's
template method (:func:`template_decision`). The reference used the templates alone, so Y may
differ from it where the rules apply. Pure (stdlib only); the sentence is found by
:mod:`haf_tui.methods.haf.core.parsing`."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal

from haf_tui.vocabulary import Decision

DecisionSourceLiteral = Literal["rules", "similarity", "none"]
Similarity = Callable[[str, str], float]

YES_TEMPLATES: tuple[str, ...] = (
    "yes additional reasons are required",
    "there are additional reasons",
    "provided reasons are insufficient",
)
NO_TEMPLATES: tuple[str, ...] = (
    "no additional reasons are required",
    "additional reasons are not required",
    "there are no additional reasons",
    "provided reasons are sufficient",
)
TEMPLATE_FLOOR = 0.15
"""Below this similarity to every YES and NO template, the decision is UNCLEAR."""


# Follow-up decision rules, tried in order on the normalised sentence (lower case, no markdown,
# no leading "Decision:" label).
_NEGATION = r"(?:\bnot\b|n't\b|\bno\b|\bnever\b|\bnone\b|\bwithout\b)"
_MORE = r"(?:additional|further|other|more|extra|new)"
_ON_PROMPT = re.compile(
    r"\breasons?\b|\bsufficient\b|\binsufficient\b|\brequired\b|\bneeded\b|\bnecessary\b"
    r"|\bagree\b|\bdisagree\b|\banalysis\b|\benough\b|\badequate\b|\binadequate\b"
)
_FOLLOWUP_HEDGE = re.compile(
    r"\b(?:may|might|could|possibly|perhaps|maybe|however|although|though|but|partially"
    r"|somewhat)\b"
)
_FOLLOWUP_RULES: tuple[tuple[re.Pattern[str], Decision], ...] = (
    (re.compile(r"\binsufficient\b|\binadequate\b|\bnot\s+(?:\w+\s+)?(?:sufficient|enough|"
                r"adequate)\b|\bdisagree\b|\b(?:do|does)\s+not\s+agree\b|n't\s+agree\b"), "YES"),
    (re.compile(rf"\bno\s+{_MORE}\s+reasons?\b"), "NO"),
    (re.compile(rf"{_NEGATION}[^.;]*?\b(?:required|needed|necessary|identif\w*|find|see|have)\b"),
     "NO"),
    (re.compile(r"\bsufficient\b|\benough\b|\badequate\b|\bagree\b"), "NO"),
    (re.compile(r"\b(?:required|needed|necessary)\b"), "YES"),
    (re.compile(rf"\b(?:there\s+(?:are|is)|identified|found|have)\s+(?:\w+\s+){{0,2}}?{_MORE}"
                r"\s+reasons?\b"), "YES"),
    (re.compile(r"^no\b"), "NO"),
    (re.compile(r"^yes\b"), "YES"),
)  # fmt: skip


def _normalise_followup(sentence: str) -> str:
    """Lower case, without markdown, a leading "Decision:" label or a "Based on ...," preamble."""
    lowered = re.sub(r"\s+", " ", re.sub(r"[*_`#>]+", "", sentence)).strip().lower()
    unlabelled = re.sub(r"^(?:final\s+)?decision\s*:\s*", "", lowered)
    return re.sub(r"^(?:based on|given|according to|considering)\b[^,]*,\s*", "", unlabelled)


def rule_decision(sentence: str) -> Decision | None:
    """Y from the phrasing of a follow-up decision sentence, or None if no rule applies.

    An on-prompt sentence (about reasons, their sufficiency, or agreement) is MAYBE if it
    hedges, else NO/YES by its wording; a bare "Yes"/"No" counts; a sentence that only restates
    a toxicity verdict ("The text is toxic.", "Yes, the text is toxic.") is UNCLEAR.
    """
    normalised = _normalise_followup(sentence)
    if not normalised:
        return None
    if not _ON_PROMPT.search(normalised):
        bare = re.sub(r"\W+", "", normalised)
        if bare in ("yes", "no"):
            return "YES" if bare == "yes" else "NO"
        return "UNCLEAR" if "toxic" in normalised else None
    if _FOLLOWUP_HEDGE.search(normalised):
        return "MAYBE"
    for pattern, decision in _FOLLOWUP_RULES:
        if pattern.search(normalised):
            return decision
    return None


def template_decision(sentence: str, similarity: Similarity) -> Decision:
    """The reference's method: best similarity to YES vs NO templates, UNCLEAR below the floor."""
    best_yes = max(similarity(sentence, template) for template in YES_TEMPLATES)
    best_no = max(similarity(sentence, template) for template in NO_TEMPLATES)
    if best_yes < TEMPLATE_FLOOR and best_no < TEMPLATE_FLOOR:
        return "UNCLEAR"
    return "YES" if best_yes >= best_no else "NO"


def decide_followup(
    sentence: str, similarity: Similarity | None = None
) -> tuple[Decision, DecisionSourceLiteral]:
    """Y of a follow-up decision sentence and what decided it: rules, then templates."""
    if not sentence.strip():
        return "UNCLEAR", "none"
    by_rule = rule_decision(sentence)
    if by_rule is not None:
        return by_rule, "rules"
    if similarity is not None:
        return template_decision(sentence, similarity), "similarity"
    return "UNCLEAR", "none"
