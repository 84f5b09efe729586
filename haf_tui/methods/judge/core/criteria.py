"""The eight ACORN criteria (``docs/methods/judge.md#2-the-eight-criteria``): ids, names, label sets
with their codes, the guideline text and label anchors quoted from the human rating guidelines, and
the Default prompt's question for each. Pure constants, no I/O.

Ids are ACORN's rating field names (``supports`` … ``contrastive``). Label names are the
strings of the answer format (``a``, ``none``, ``4``, ``no``, ``N/A``, ``sufficient``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

Level = Literal["nominal", "ordinal", "interval"]
LETTERS: Final[str] = "abcde"
"""Supports' answer letters: one per answer choice (2 for BCOPA and toxicity, 5 for CSQA)."""


@dataclass(frozen=True)
class Label:
    """One label of a criterion: its answer-format name, its code and its anchor (the
    guideline's one-line description; empty where the guidelines give none)."""

    name: str
    code: int
    anchor: str = ""


@dataclass(frozen=True)
class Criterion:
    """One rating criterion.

    ``number`` is its position in the Default prompt; ``question`` is its Default question;
    ``display`` its name on the guideline form; ``level`` the Krippendorff level used for it
    (§5.2 *(decision)*: nominal for Supports, Factual and the binary criteria, ordinal for
    Overall and New information); ``expected`` whether it gets an expected score (§4.3);
    ``lower_is_better`` inverts its normalised score (§2)."""

    number: int
    id: str
    display: str
    question: str
    guideline: str
    labels: tuple[Label, ...]
    level: Level
    expected: bool
    lower_is_better: bool = False

    @property
    def names(self) -> tuple[str, ...]:
        """The label names in code order."""
        return tuple(label.name for label in self.labels)

    def code(self, name: str) -> int:
        """The code of label ``name`` (KeyError for a name outside the set)."""
        for label in self.labels:
            if label.name == name:
                return label.code
        raise KeyError(f"{self.id}: no label {name!r}")

    def span(self) -> int:
        """max − min code: NMAE's divisor (§5.4: Overall 4, New information 3, Factual 2,
        binary 1; Supports 5 over a…e and none)."""
        codes = [label.code for label in self.labels]
        return max(codes) - min(codes)


def _yes_no(no: str, yes: str) -> tuple[Label, ...]:
    return (Label("no", 0, no), Label("yes", 1, yes))


SUPPORTS: Final = Criterion(
    1,
    "supports",
    "Supports",
    "Which answer does it support?",
    "Which answer does the explanation attempt to justify—a), b), ..., or none? Note that this "
    "may not be the same as the correct answer to the question.",
    (*(Label(letter, i) for i, letter in enumerate(LETTERS)), Label("none", -1)),
    "nominal",
    expected=False,
)
OVERALL: Final = Criterion(
    2,
    "overall",
    "Overall rating",
    "Overall rating?",
    "Independently of the other criteria. how good is the given explanation? Use your own "
    "judgment here; imagine an AI system is offering it to you as a justification for its "
    "answer to the question. Are you convinced that its reasoning is sound?",
    (
        Label("1", 1, "Terrible, utterly insufficient."),
        Label("2", 2, "A decent attempt but has major issues."),
        Label("3", 3, "Okay, could be better. Not terrible, but not great either."),
        Label("4", 4, "Very good, but not quite amazing."),
        Label("5", 5, "Excellent. You are convinced; wouldn't add or remove anything."),
    ),
    "ordinal",
    expected=True,
)
WELL_WRITTEN: Final = Criterion(
    3,
    "well_written",
    "Well-written",
    "Is it well-written?",
    "Is the explanation a generally coherent, grammatically correct, and/or fluent sentence? "
    "Ignore all other factors, such as being related to the question or the amount of given "
    "information.",
    _yes_no(
        "Some issues present, e.g., grammatical errors, not fluent, incoherent.",
        "A clear and correct sentence; no issues.",
    ),
    "nominal",
    expected=True,
)
RELATED: Final = Criterion(
    4,
    "related",
    "Related",
    "Is the explanation related to the question and answers?",
    "Is the explanation relevant to the question and answer? We consider an explanation that "
    "mentions the same concepts as still relevant even if it does not form a coherent argument. "
    "Irrelevant explanations mention completely unrelated concepts.",
    _yes_no(
        "The explanation is an unrelated statement; mentions completely irrelevant things.",
        "The explanation is related to both the question and answer.",
    ),
    "nominal",
    expected=True,
)
FACTUAL: Final = Criterion(
    5,
    "factual",
    "Factual",
    "Are all contained facts correct?",
    "Explanations should provide some facts, i.e., background information, about the world "
    'that help justify the answer. E.g., "It cannot be dark if the sun is rising because the '
    'sun is a light source." Here we ask whether those mentioned facts, regardless of their '
    "relevancy, are generally true statements.",
    (
        Label("N/A", -1, "No general facts are mentioned."),
        *_yes_no("There is a false statement.", "All given facts, if any, are generally true."),
    ),
    "nominal",
    expected=False,
)
NEW_INFO: Final = Criterion(
    6,
    "new_info",
    "New information",
    "How much new information is given?",
    "Regardless of whether the information is true, how much new information does the "
    "explanation provide to support the answer? This can be a subjective measure; imagine the "
    "explanation is given to you by a student or an AI. How much information would you be "
    "satisfied with?",
    (
        Label("none", 0, "No new information provided, e.g., restating the question or answer."),
        Label("some", 1, "Some new information, but insufficient to fully explain the answer."),
        Label("sufficient", 2, "There is sufficient additional information to explain the answer."),
        Label(
            "ample",
            3,
            "The given information is highly detailed; there is more than enough information.",
        ),
    ),
    "ordinal",
    expected=True,
)
UNNECESSARY_INFO: Final = Criterion(
    7,
    "unnecessary_info",
    "Unnecessary information",
    "Any unnecessary information?",
    "Some explanations are highly elaborate and detailed, but not all information is "
    "necessarily needed. Are there any statements that do not belong? E.g., mentioning that a "
    "mouse has four legs to explain why it ate some cheese is not a necessary piece of "
    "information.",
    _yes_no(
        "All information, if any, supports the answer.",
        "There is some unnecessary information mixed in the explanation.",
    ),
    "nominal",
    expected=True,
    lower_is_better=True,
)
CONTRASTIVE: Final = Criterion(
    8,
    "contrastive",
    "Contrastive",
    "Is it contrastive?",
    "Does the explanation clearly show the difference between the answers? Does it explain why "
    "the alternative answer is incorrect or less likely?",
    _yes_no(
        "The difference between the answers is not explained. Select this choice if the "
        "explanation only supports the correct answer.",
        "The explanation clarifies both why the answer is correct and why the alternative is "
        "incorrect.",
    ),
    "nominal",
    expected=True,
)

CRITERIA: Final[tuple[Criterion, ...]] = (
    SUPPORTS,
    OVERALL,
    WELL_WRITTEN,
    RELATED,
    FACTUAL,
    NEW_INFO,
    UNNECESSARY_INFO,
    CONTRASTIVE,
)
"""The eight criteria in Default order."""
CRITERION_IDS: Final[tuple[str, ...]] = tuple(c.id for c in CRITERIA)
BY_ID: Final[dict[str, Criterion]] = {c.id: c for c in CRITERIA}
SHORT_NAMES: Final[dict[str, str]] = {
    "supports": "Supports",
    "overall": "Overall",
    "well_written": "Well-written",
    "related": "Related",
    "factual": "Factual",
    "new_info": "New info",
    "unnecessary_info": "Unnecessary",
    "contrastive": "Contrastive",
}
"""The criteria's names where space is short (column headings, tree leaves)."""


def criterion(criterion_id: str) -> Criterion:
    """The criterion with id ``criterion_id`` (KeyError otherwise)."""
    return BY_ID[criterion_id]


def label_names(crit: Criterion, n_choices: int = len(LETTERS)) -> tuple[str, ...]:
    """The labels a prompt lists for ``crit``: for Supports one letter per answer choice and
    ``none`` (§4.1, §4.3 *(decision)*: also in the Default prompt's label list); the full set
    otherwise."""
    if crit.id != "supports":
        return crit.names
    if not 1 <= n_choices <= len(LETTERS):
        raise ValueError(f"{n_choices} answer choices: 1 to {len(LETTERS)} supported")
    return (*LETTERS[:n_choices], "none")


def normalised_score(criterion_id: str, code: int | None) -> float | None:
    """The report score (§2, [D §5.1]): (code − min)/(max − min), Unnecessary information
    inverted (1 − x). None for Supports (reported as % matching the predicted label), for
    Factual N/A (excluded from its mean *(decision)*: Factual is scaled over no/yes) and for a
    missing code."""
    if code is None or criterion_id == "supports":
        return None
    crit = criterion(criterion_id)
    if crit.id == "factual":
        if code == -1:
            return None
        low, high = 0, 1
    else:
        codes = [label.code for label in crit.labels]
        low, high = min(codes), max(codes)
    value = (code - low) / (high - low)
    return 1 - value if crit.lower_is_better else value
