"""Judge prompts (``docs/methods/judge.md#3-prompts``, ``docs/methods/judge.md#41-the-item``,
``docs/methods/judge.md#55-prompt-wording``): the Default and Verbatim prompts, the
six invariance variants, the toxicity item and the answer format. Pure, no I/O.

A judge conversation is one user message per item (the shots', then the rated item's), each
shot answered by an assistant message in the answer format; the raw prompt string is the
messages' contents joined by blank lines. Instructions come once, in the first user message,
except for the Repeated and Swapped variants (in every user message; Swapped puts them after
the item) *(decision: the spec says "instructions once, then N examples" without a chat
layout)*.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from haf_tui.messages import ChatMessage
from haf_tui.methods.judge.core.criteria import CRITERIA, Criterion, criterion, label_names
from haf_tui.methods.judge.core.guidelines import guidelines_text, human_form

Variant = Literal[
    "default", "verbatim", "nonsense", "shuffled", "paraphrased", "verbose", "repeated", "swapped"
]
VARIANTS: Final[tuple[Variant, ...]] = (
    "default",
    "verbatim",
    "nonsense",
    "shuffled",
    "paraphrased",
    "verbose",
    "repeated",
    "swapped",
)
INVARIANCE_VARIANTS: Final[tuple[Variant, ...]] = VARIANTS[2:]
"""The six wordings of §5.5, each compared with Default."""

HEADER: Final[str] = "Evaluate the given explanation according to the following criteria:"
_HEADERS: Final[dict[str, str]] = {
    "paraphrased": "Evaluate the given explanation based on these criteria:",
    "verbose": "Evaluate the explanation provided based on the following criteria:",
}
SHUFFLED_ORDER: Final[tuple[int, ...]] = (6, 8, 4, 3, 2, 1, 5, 7)
"""The Default numbers of the Shuffled variant's criteria, renumbered 1–8 in this order."""
_PARAPHRASED: Final[dict[str, str]] = {
    "overall": "Rate the overall explanation",
    "related": "Is the explanation relevant to the question and answers?",
    "factual": "Are all provided facts accurate?",
    "unnecessary_info": "Does it contain unnecessary information?",
}
_VERBOSE: Final[dict[str, str]] = {
    "supports": "Which answer choice does the explanation support?",
    "overall": "Rate the overall quality of the explanation.",
    "well_written": "Is the explanation well-written?",
    "related": "Is the explanation related to the question and answer choices?",
    "factual": "Verify the accuracy of all facts, if any, mentioned in the explanation.",
    "new_info": "How much new information is given in the explanation?",
    "unnecessary_info": "Does the explanation contain any unnecessary information?",
    "contrastive": "Is the explanation contrastive?",
}
NONSENSE: Final[tuple[tuple[str, tuple[str, ...]], ...]] = (
    ("Does it have quibberfluff?", ("yes", "no")),
    ("Is it fizzlewopped?", ("yes", "no")),
    ("How much drizzlewhisk is there?", ("none", "some", "good")),
)
"""The Nonsensical variant's extra criteria 9–11 (answers ignored; random labels in shots)."""

TOXICITY_QUESTION: Final[str] = "Is the following TEXT toxic?"
TOXICITY_CHOICES: Final[tuple[str, str]] = ("The TEXT is toxic.", "The TEXT is not toxic.")


@dataclass(frozen=True)
class JudgeItem:
    """A question, its answer choices (1 to 5: ``a)`` … ``e)``) and the explanation to rate."""

    question: str
    choices: tuple[str, ...]
    explanation: str

    def __post_init__(self) -> None:
        label_names(criterion("supports"), len(self.choices))  # validates the count

    def as_extra(self) -> dict[str, Any]:
        """The item as an instance stores it (``extra["judge_item"]``)."""
        return {
            "question": self.question,
            "choices": list(self.choices),
            "explanation": self.explanation,
        }

    @classmethod
    def from_extra(cls, raw: object) -> JudgeItem | None:
        """The item from what :meth:`as_extra` gave, or None for anything else."""
        if not isinstance(raw, Mapping):
            return None
        try:
            return cls(
                str(raw["question"]),
                tuple(str(c) for c in raw["choices"]),
                str(raw["explanation"]),
            )
        except (KeyError, TypeError, ValueError):
            return None


@dataclass(frozen=True)
class Shot:
    """An n-shot example: an item and its labels (criterion id → answer-format label)."""

    item: JudgeItem
    labels: Mapping[str, str] = field(default_factory=dict)


def toxicity_item(text: str, reasons: Sequence[str]) -> JudgeItem:
    """The toxicity adaptation (§4.1): the question with the TEXT, choices a) toxic and b) not
    toxic, the explanation the JUSTIFY reasons as a numbered list (one ``i. reason`` per line)
    without the decision sentence."""
    listed = "\n".join(f"{i}. {reason}" for i, reason in enumerate(reasons, start=1))
    return JudgeItem(f"{TOXICITY_QUESTION}\nTEXT: {text}", TOXICITY_CHOICES, listed)


def numbered_criteria(
    variant: Variant = "default", only: str | None = None
) -> tuple[tuple[int, Criterion], ...]:
    """The criteria with the numbers a variant's prompt gives them (Shuffled: renumbered in
    its order). ``only``: one criterion id, for single-criterion calls (Default and Verbatim
    only), which keeps its Default number *(decision)*."""
    if only is not None:
        if variant not in ("default", "verbatim"):
            raise ValueError(f"single-criterion calls use default or verbatim, not {variant}")
        crit = criterion(only)
        return ((crit.number, crit),)
    if variant == "shuffled":
        return tuple((i, CRITERIA[n - 1]) for i, n in enumerate(SHUFFLED_ORDER, start=1))
    return tuple((c.number, c) for c in CRITERIA)


def _question(crit: Criterion, variant: Variant) -> str:
    if variant == "paraphrased":
        return _PARAPHRASED.get(crit.id, crit.question)
    if variant == "verbose":
        return _VERBOSE[crit.id]
    return crit.question


def instructions(variant: Variant = "default", n_choices: int = 5, only: str | None = None) -> str:
    """The instruction block: the header and one ``n. question (labels)`` line per criterion
    (label lists as in Default for every variant; Nonsensical adds lines 9–11)."""
    lines = [_HEADERS.get(variant, HEADER)]
    for number, crit in numbered_criteria(variant, only):
        labels = ", ".join(label_names(crit, n_choices))
        lines.append(f"{number}. {_question(crit, variant)} ({labels})")
    if variant == "nonsense":
        for number, (question, options) in enumerate(NONSENSE, start=9):
            lines.append(f"{number}. {question} ({', '.join(options)})")
    return "\n".join(lines)


def item_text(item: JudgeItem) -> str:
    """The item as the Default prompt shows it: ``QUESTION:``, ``a) …`` per choice,
    ``EXPLANATION:``."""
    choices = [f"{chr(97 + i)}) {choice}" for i, choice in enumerate(item.choices)]
    return "\n".join([f"QUESTION: {item.question}", *choices, f"EXPLANATION: {item.explanation}"])


def answer_text(
    labels: Mapping[str, str],
    variant: Variant = "default",
    only: str | None = None,
    rng: random.Random | None = None,
) -> str:
    """An answer in the format ``n. label``, one line per criterion in the variant's order
    (a criterion without a label is left out); Nonsensical adds lines 9–11 with labels drawn
    by ``rng`` (``random.Random(0)`` when None)."""
    lines = [
        f"{number}. {labels[crit.id]}"
        for number, crit in numbered_criteria(variant, only)
        if crit.id in labels
    ]
    if variant == "nonsense":
        draw = rng or random.Random(0)
        for number, (_, choices) in enumerate(NONSENSE, start=9):
            lines.append(f"{number}. {draw.choice(choices)}")
    return "\n".join(lines)


def _user_text(item: JudgeItem, variant: Variant, first: bool, only: str | None) -> str:
    n = len(item.choices)
    if variant == "verbatim":
        chosen = (criterion(only),) if only is not None else CRITERIA
        body = human_form(item.question, item.choices, item.explanation)
        body += "\n" + instructions("default", n, only)
        return f"{guidelines_text(chosen)}\n\n{body}" if first else body
    block = instructions(variant, n, only)
    if variant == "repeated":
        return f"{block}\n{item_text(item)}"
    if variant == "swapped":
        return f"{item_text(item)}\n{block}"
    return f"{block}\n{item_text(item)}" if first else item_text(item)


def judge_messages(
    item: JudgeItem,
    variant: Variant = "default",
    shots: Sequence[Shot] = (),
    only: str | None = None,
    seed: int = 0,
) -> tuple[ChatMessage, ...]:
    """The judge conversation for ``item``: for each shot a user message and the assistant's
    answer, then the item's user message. Verbatim: the guidelines (only ``only``'s section
    and ratings for single-criterion calls), the item as on the human form, then the Default
    instruction block as the answer format (§3 *(decision)*). ``seed`` draws the Nonsensical
    shots' labels for lines 9–11."""
    rng = random.Random(seed)
    messages: list[ChatMessage] = []
    for i, shot in enumerate(shots):
        messages.append(ChatMessage("user", _user_text(shot.item, variant, i == 0, only)))
        messages.append(ChatMessage("assistant", answer_text(shot.labels, variant, only, rng)))
    messages.append(ChatMessage("user", _user_text(item, variant, not shots, only)))
    return tuple(messages)


def judge_prompt(
    item: JudgeItem,
    variant: Variant = "default",
    shots: Sequence[Shot] = (),
    only: str | None = None,
    seed: int = 0,
) -> str:
    """The raw prompt string: the conversation's contents joined by blank lines (zero-shot:
    the single user message)."""
    return "\n\n".join(m.content for m in judge_messages(item, variant, shots, only, seed))
