"""Reading a judge's free-text answer (``docs/methods/judge.md#42-free-answers``): rules
only, no LLM fallback. Total: any text gives a result, never an exception; a criterion whose line is
missing or whose value matches no rule is a failure (excluded from that criterion's metrics, its
share reported).

Per criterion the line is found by its number in the prompt's order (``6.``; Shuffled: the
variant's numbers) or by its name (``New information:``); the value after it maps
case-insensitively: ``a``, ``a)``, ``(a)``, ``A`` → a; ``none``, ``neither`` → none; ``4``,
``4/5``, ``★★★★☆`` (count ★) → 4; ``yes``/``no``; ``N/A``, ``NA``, ``not applicable`` → N/A;
``none``/``some``/``sufficient``/``ample``; surrounding ``**`` and trailing punctuation are
stripped.

*(decision)* Where several lines name the same criterion (an echoed instruction list, say) the
last one whose value parses wins, else the last one is reported as the failure. A numbered
line may repeat the criterion's name before a colon (``6. New information: some``). A Supports
letter may be followed by its choice's text (``a) She was reminded …``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from haf_tui.methods.judge.core.criteria import CRITERIA, LETTERS, Criterion

DEFAULT_NUMBERING: Final[tuple[tuple[int, Criterion], ...]] = tuple((c.number, c) for c in CRITERIA)
_NUMBERED = re.compile(r"([0-9]{1,2})\s*[.):]\s*(.*)", re.DOTALL)
_NAMED = re.compile(r"([A-Za-z][A-Za-z _-]{0,40}?)\s*:\s*(.*)", re.DOTALL)
_LETTER = re.compile(r"\(?([a-z])\)?|\(?([a-z])\)\s.*", re.DOTALL)
_RATING = re.compile(r"([0-9])(?:\s*/\s*5)?")
_STARS = re.compile(r"[★☆]+")
_NA = frozenset({"n/a", "na", "not applicable"})
_TRAILING = ".,;:!?"
_DECORATION = "*_`\"' \t"


@dataclass(frozen=True)
class CriterionParse:
    """One criterion's reading: ``raw`` the value text found (None: no line), ``label`` the
    answer-format label and ``code`` its code (both None on failure)."""

    criterion: str
    raw: str | None
    label: str | None
    code: int | None

    @property
    def ok(self) -> bool:
        """Whether a label was read."""
        return self.label is not None


@dataclass(frozen=True)
class JudgeParse:
    """The reading of one answer, a :class:`CriterionParse` per criterion asked for."""

    criteria: tuple[CriterionParse, ...]

    def labels(self) -> dict[str, str | None]:
        """Criterion id → label (None on failure)."""
        return {p.criterion: p.label for p in self.criteria}

    def codes(self) -> dict[str, int | None]:
        """Criterion id → code (None on failure)."""
        return {p.criterion: p.code for p in self.criteria}

    @property
    def failures(self) -> tuple[str, ...]:
        """The ids of the criteria that failed."""
        return tuple(p.criterion for p in self.criteria if not p.ok)


def _clean(value: str) -> str:
    text = value.strip()
    previous = None
    while text != previous:
        previous = text
        text = text.strip(_DECORATION).rstrip(_TRAILING).strip()
    return text


def _key(name: str) -> str:
    return re.sub(r"[\s_-]+", " ", name.strip().lower())


def _names(crit: Criterion) -> frozenset[str]:
    return frozenset({_key(crit.display), _key(crit.id)})


def parse_label(crit: Criterion, value: str, n_choices: int = len(LETTERS)) -> str | None:
    """The answer-format label of ``value`` for ``crit`` (None when no rule matches);
    Supports accepts the first ``n_choices`` letters."""
    text = _clean(value)
    low = text.lower()
    if crit.id == "supports":
        if low in ("none", "neither"):
            return "none"
        letter = _LETTER.fullmatch(low)
        if letter is None:
            return None
        found = letter.group(1) or letter.group(2)
        return found if found in LETTERS[: max(0, n_choices)] else None
    if crit.id == "overall":
        rating = _RATING.fullmatch(low)
        if rating is not None:
            number = int(rating.group(1))
        elif _STARS.fullmatch(text) is not None:
            number = text.count("★")
        else:
            return None
        return str(number) if 1 <= number <= 5 else None
    if crit.id == "factual" and low in _NA:
        return "N/A"
    return low if low in crit.names else None


def _value(crit: Criterion, line: str, numbers: dict[int, Criterion]) -> str | None:
    """The value ``line`` gives for ``crit``, or None when the line is not about it."""
    numbered = _NUMBERED.fullmatch(line)
    if numbered is not None and numbers.get(int(numbered.group(1))) is crit:
        rest = numbered.group(2)
        named = _NAMED.fullmatch(_clean_lead(rest))
        if named is not None and _key(named.group(1)) in _names(crit):
            return named.group(2)
        return rest
    named = _NAMED.fullmatch(line)
    if named is not None and _key(_clean(named.group(1))) in _names(crit):
        return named.group(2)
    return None


def _clean_lead(line: str) -> str:
    return line.strip().lstrip("*_#->•` \t").replace("**", "")


def parse_judgement(
    text: str,
    numbering: Sequence[tuple[int, Criterion]] = DEFAULT_NUMBERING,
    n_choices: int = len(LETTERS),
) -> JudgeParse:
    """Read ``text`` for the criteria of ``numbering`` (number in the prompt, criterion; see
    :func:`haf_tui.methods.judge.core.prompts.numbered_criteria`). With one criterion (a
    single-criterion call) and no line naming it, the first non-empty line is its value
    *(decision)*. Never raises."""
    numbers = {number: crit for number, crit in numbering}
    lines = [_clean_lead(line) for line in str(text).splitlines()]
    results: list[CriterionParse] = []
    for _, crit in numbering:
        raw: str | None = None
        label: str | None = None
        for line in lines:
            value = _value(crit, line, numbers)
            if value is None:
                continue
            parsed = parse_label(crit, value, n_choices)
            if parsed is not None or label is None:
                raw, label = value.strip(), parsed if parsed is not None else label
        if raw is None and len(numbering) == 1:  # a single-criterion call's bare answer
            first = next((line.strip() for line in lines if line.strip()), None)
            if first is not None:
                raw, label = first, parse_label(crit, first, n_choices)
        code = crit.code(label) if label is not None else None
        results.append(CriterionParse(crit.id, raw, label, code))
    return JudgeParse(tuple(results))


def failure_share(parses: Sequence[JudgeParse], criterion_id: str) -> float | None:
    """The share of answers in which ``criterion_id`` failed (None: not asked in any)."""
    asked = [p for parse in parses for p in parse.criteria if p.criterion == criterion_id]
    return sum(1 for p in asked if not p.ok) / len(asked) if asked else None
