"""The human rating guidelines as far as ``docs/methods/judge.md#2-the-eight-criteria``,
``docs/methods/judge.md#3-prompts`` quotes them: the general instruction, the three examples
(guidelines §4) and the FAQ (guidelines §6); the criteria section is built from
:mod:`haf_tui.methods.judge.core.criteria`. Pure constants and text assembly.

*(decision)* The spec quotes the guidelines, not their layout: sections are headed
``Task description``, ``Criteria``, ``Examples`` and ``FAQ``; a criterion is its form name, a
colon and its guideline text, then one ``- <label>: <anchor>`` line per label in code order;
an example is the item as on the human form followed by ``<criterion>: <rating>`` lines as the
examples table writes them. The general instruction joins the two quoted sentences (the spec
elides what lies between them); the FAQ keeps the spec's own ellipsis.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from haf_tui.methods.judge.core.criteria import CRITERIA, Criterion, Label

GENERAL_INSTRUCTION: Final[str] = (
    "We ask you to carefully consider each criterion separately and additionally give an "
    "overall score for the explanation, independently of our criteria. Make sure to consider "
    "each criterion independently. For example, if an explanation is contrastive but contains "
    'false information, mark "Contrastive" as "yes" and "Factual" as "no".'
)


@dataclass(frozen=True)
class GuidelineExample:
    """One rated example of the guidelines: ``ratings`` in criteria order, spelled as the
    examples table spells them (``a)``, ``neither``, ``N/A`` …)."""

    question: str
    choices: tuple[str, ...]
    explanation: str
    ratings: tuple[str, ...]


EXAMPLES: Final[tuple[GuidelineExample, ...]] = (
    GuidelineExample(
        "The woman sensed a pleasant smell. What happened as a result?",
        ("She was reminded of her childhood.", "She remembered to take her medication."),
        "Pleasant smell is a way of bring happiness. Happiness causes nostalgia. Nostalgia is "
        "related to a smell. Smell causes her to think her childhood.",
        ("a)", "4", "no", "yes", "yes", "sufficient", "no", "no"),
    ),
    GuidelineExample(
        "It got dark outside. What happened as a result?",
        ("Snowflakes began to fall from the sky.", "The moon became visible in the sky."),
        "The darkness is filled with snowflakes.",
        ("neither", "1", "no", "yes", "N/A", "none", "yes", "no"),
    ),
    GuidelineExample(
        "The woman tolerated her friend's difficult behavior. What was the cause of this?",
        (
            "The woman knew her friend was going through a hard time.",
            "The woman felt that her friend took advantage of her kindness.",
        ),
        "Going through tough times can lead to challenging behavior, such as someone appearing "
        "to be irritable or annoyed. This kind of behavior is often a result of the struggles "
        "they are going through.",
        ("a)", "5", "yes", "yes", "yes", "ample", "no", "no"),
    ),
)

FAQ: Final[tuple[tuple[str, str], ...]] = (
    (
        "How should we rate completely unrelated explanations?",
        "Each criterion should be considered independently. E.g., if the explanation is "
        "contrastive, contains generally true facts, and provides ample new information, mark "
        "it as such even if it lacks in other aspects. Assign a low overall rating if you feel "
        "it's generally not a satisfactory justification for the answer.",
    ),
    (
        'How should we mark "New Information" and "Unnecessary Information" if the given '
        "information is completely false?",
        "Disregard the truthfulness of the information. Focus on whether the explanation "
        "provides new information and whether the provided information is necessary. Whether "
        'the information is true should be stated under "Factual".',
    ),
    (
        "How strict should we be …? What is considered a sufficient or ample amount of "
        "information?",
        "Consider the purpose of this data—to train AI systems to explain answers well to "
        "humans. Evaluate the explanations based on your judgment of satisfactory information "
        "and factual claims.",
    ),
)


def human_form(question: str, choices: Sequence[str], explanation: str) -> str:
    """An item as on the human rating form: the question, ``a) …`` per choice, then
    ``Explanation: …``."""
    lines = [question, *(f"{chr(97 + i)}) {choice}" for i, choice in enumerate(choices))]
    return "\n".join([*lines, f"Explanation: {explanation}"])


def _display(crit: Criterion, label: Label) -> str:
    if crit.id == "overall":
        return "★" * label.code
    return label.name if label.name == "N/A" else label.name.capitalize()


def criterion_section(crit: Criterion) -> str:
    """One criterion of the guidelines: its name, guideline text and label anchors."""
    anchors = [
        f"- {_display(crit, label)}: {label.anchor}" for label in crit.labels if label.anchor
    ]
    return "\n".join([f"{crit.display}: {crit.guideline}", *anchors])


def example_text(example: GuidelineExample, criteria: Sequence[Criterion] = CRITERIA) -> str:
    """One guideline example with its ratings for ``criteria``."""
    ratings = [f"{c.display}: {example.ratings[c.number - 1]}" for c in criteria]
    form = human_form(example.question, example.choices, example.explanation)
    return "\n".join([form, *ratings])


def guidelines_text(criteria: Sequence[Criterion] = CRITERIA) -> str:
    """The verbatim guidelines (§3 *(decision)*: task description, criteria, examples, FAQ;
    not the welcome or the policies), restricted to ``criteria`` for single-criterion calls
    (their section and their examples' ratings; the task description and the FAQ stay)."""
    sections = [
        "Task description\n" + GENERAL_INSTRUCTION,
        "Criteria\n" + "\n\n".join(criterion_section(c) for c in criteria),
        "Examples\n" + "\n\n".join(example_text(e, criteria) for e in EXAMPLES),
        "FAQ\n" + "\n\n".join(f"Q: {q}\nA: {a}" for q, a in FAQ),
    ]
    return "\n\n".join(sections)
