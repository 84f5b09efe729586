"""Gold labels: how a label column's values become ``toxic`` / ``non-toxic``.

A label column holds what its dataset wrote: strings (``toxic``, ``hate``, ``normal``, ...),
booleans, 0/1, or a toxicity score in 0..1. A :class:`LabelRule` says which: it is guessed from
the column's values (:func:`guess_rule`), or stated by the user (:func:`stated_rule`:
``--label-threshold 0.7``, ``--label-map toxic=hate,offensive``), and it maps each value to
its gold label (:meth:`LabelRule.gold`). The rule is stored with the dataset (``meta
["label_rule"]``), shown on import, preview, ``haf datasets show`` and in the wizard, and the
instance keeps its gold as its label (the classify report counts it) and the value as read in
``extra["label_raw"]``. A column that is neither (free text, many different values) is refused
as a label in one line (:class:`LabelError`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, field_validator

from haf_tui.datasets.label_values import ColumnValues, is_missing, normalize, number
from haf_tui.datasets.model import DatasetError

Gold = Literal["toxic", "non-toxic"]
TOXIC: Final[Gold] = "toxic"
NON_TOXIC: Final[Gold] = "non-toxic"
DEFAULT_THRESHOLD: Final = 0.5
"""A score at or above it is toxic (a share of raters; the classify suite's ŷ uses the same)."""
MAX_LABEL_VALUES: Final = 20
"""A column of more different strings than this is not a label (free text)."""
LONG_VALUE: Final = 40
"""A column with a string longer than this is free text, not a label."""
NUMERIC_SHARE: Final = 0.9
"""A column this much of which is numbers is read as numbers (the rest: rows skipped)."""

TOXIC_WORDS: Final = frozenset(
    {"toxic", "hate", "hatespeech", "hate-speech", "hateful", "offensive", "abusive", "abuse"}
    | {"insult", "obscene", "threat", "harassment", "profanity", "sexist", "racist"}
)
NON_TOXIC_WORDS: Final = frozenset(
    {"non-toxic", "nontoxic", "not-toxic", "normal", "neutral", "none", "clean", "neither"}
    | {"not-hate", "non-hate", "nothate", "not-offensive", "non-offensive", "benign", "safe"}
)
NO_GOLD_WORDS: Final = frozenset({"ambiguous", "undecided", "unclear", "unknown", "mixed"})
"""Labels that say the raters did not decide: kept as they are, with no gold."""
TRUE_WORDS: Final = frozenset({"true", "yes"})
FALSE_WORDS: Final = frozenset({"false", "no"})

RuleKind = Literal["strings", "boolean", "binary", "score"]


class LabelError(DatasetError):
    """A column's label rule cannot be guessed (one line, saying what to state)."""


class NotALabelError(LabelError):
    """A column is not a label at all: free text, many different values, or empty."""


def finite_threshold(value: float | None, option: str = "--label-threshold") -> float | None:
    """``value`` when it is a finite number (or None); LabelError for NaN and infinities (a
    threshold that makes every row one class)."""
    if value is not None and not math.isfinite(value):
        raise LabelError(f"{option} {value!r} is not a finite number: give a score such as 0.5")
    return value


def parse_threshold(text: str) -> float:
    """A ``--label-threshold`` as typed: a finite number (``nan``, ``inf`` and ``1e400``,
    which overflows, are refused in one line)."""
    try:
        value = float(text)
    except ValueError:
        raise LabelError(f"--label-threshold {text!r} is not a number") from None
    if not math.isfinite(value):
        raise LabelError(
            f"--label-threshold {text!r} is not a finite number: give a score such as 0.5"
        )
    return value


def _listed(values: Iterable[str], limit: int = 6) -> str:
    items = sorted(values)
    shown = ", ".join(items[:limit])
    return shown + (f", … ({len(items)} values)" if len(items) > limit else "")


class LabelRule(BaseModel):
    """How a label column's values become gold labels.

    ``strings``: a value in ``toxic`` is toxic, in ``non_toxic`` non-toxic, in ``no_gold``
    kept without gold (raters undecided); ``boolean``: true is toxic; ``binary``: 1 is toxic,
    0 non-toxic; ``score``: a number at or above ``threshold`` is toxic. ``origin`` says where
    the rule came from (guessed from the values, stated by the user, or the paper's), ``why``
    what it rests on (the paper's selection, for its samples)."""

    model_config = ConfigDict(frozen=True)

    kind: RuleKind
    threshold: float | None = None
    toxic: tuple[str, ...] = ()
    non_toxic: tuple[str, ...] = ()
    no_gold: tuple[str, ...] = ()
    origin: Literal["guessed", "stated", "paper", "built-in"] = "guessed"
    why: str = ""

    @field_validator("threshold")
    @classmethod
    def _finite(cls, value: float | None) -> float | None:
        if value is not None and not math.isfinite(value):
            raise ValueError("a label threshold is a finite number")
        return value

    def gold(self, value: Any) -> tuple[Gold | None, str | None]:
        """The gold label of a value, or None with why (None, None: a no-gold value or a
        missing cell, :func:`is_missing`)."""
        if is_missing(value):
            return None, None
        key = normalize(value)
        if self.kind == "strings":
            if key in self.toxic:
                return TOXIC, None
            if key in self.non_toxic:
                return NON_TOXIC, None
            if key in self.no_gold:
                return None, None
            return None, f"label {str(value)[:40]!r} is not one of the rule's values"
        if self.kind == "boolean":
            if key in TRUE_WORDS:
                return TOXIC, None
            if key in FALSE_WORDS:
                return NON_TOXIC, None
            return None, f"label {str(value)[:40]!r} is not true or false (yes or no)"
        score = number(value)
        if self.kind == "binary":
            if score in (0.0, 1.0):
                return (TOXIC if score == 1.0 else NON_TOXIC), None
            return None, f"label {str(value)[:40]!r} is not 0 or 1"
        if score is None:
            return None, f"label {str(value)[:40]!r} is not a score"
        threshold = DEFAULT_THRESHOLD if self.threshold is None else self.threshold
        return (TOXIC if score >= threshold else NON_TOXIC), None

    def stored(self, value: Any) -> tuple[str | None, str | None]:
        """The label an instance keeps for a value (its gold; a no-gold value as it is), or
        None with why the row has no usable label."""
        gold, problem = self.gold(value)
        if gold is None and problem is None and not is_missing(value):
            return str(value).strip(), None
        return gold, problem

    def key(self) -> str:
        """What the rule maps, as JSON (a dataset's id digests it: instances labelled by
        another rule are another dataset; the wording of ``why`` is not part of it)."""
        return self.model_dump_json(include={"kind", "threshold", "toxic", "non_toxic", "no_gold"})

    def describe(self) -> str:
        """The rule in one line (``score ≥ 0.5 is toxic, below non-toxic (guessed)``)."""
        if self.kind == "strings":
            parts = [f"{_listed(self.toxic)} → toxic", f"{_listed(self.non_toxic)} → non-toxic"]
            if self.no_gold:
                parts.append(f"{_listed(self.no_gold)} → no gold")
            text = "; ".join(p for p in parts if not p.startswith(" "))
        elif self.kind == "boolean":
            text = "true (yes) → toxic, false (no) → non-toxic"
        elif self.kind == "binary":
            text = "1 → toxic, 0 → non-toxic"
        else:
            threshold = DEFAULT_THRESHOLD if self.threshold is None else self.threshold
            text = f"score ≥ {threshold:g} → toxic, below → non-toxic"
        why = f"; {self.why}" if self.why else ""
        return f"{text} ({self.origin}{why})"


def _score_rule(seen: ColumnValues, column: str, threshold: float | None) -> LabelRule:
    low, high = seen.low, seen.high
    if threshold is not None:
        return LabelRule(kind="score", threshold=threshold, origin="stated")
    if seen.only_01:
        return LabelRule(kind="binary")
    if low >= 0.0 and high <= 1.0:
        return LabelRule(kind="score", threshold=DEFAULT_THRESHOLD)
    raise LabelError(
        f"label column {column!r} holds numbers from {low:g} to {high:g}, neither 0/1 nor a "
        "score in 0..1: state the score at which a text is toxic with --label-threshold T "
        "(haf datasets import FILE; the wizard's label rule: T)"
    )


def _summary(values: Iterable[Any] | ColumnValues) -> ColumnValues:
    return values if isinstance(values, ColumnValues) else ColumnValues.of(values)


def guess_rule(
    values: Iterable[Any] | ColumnValues, column: str, *, threshold: float | None = None
) -> LabelRule:
    """The rule a label column's values (or their :class:`ColumnValues`) call for; LabelError
    when they are not a label (free text, many values) or the rule cannot be guessed (then the
    line says what to state). ``threshold``: the column is a score, toxic from this value up
    (0 too; NaN and infinities are refused). Missing cells (:func:`is_missing`) are rows
    without gold."""
    finite_threshold(threshold)
    seen = _summary(values)
    if not seen.n_present:
        raise NotALabelError(
            f"label column {column!r} is empty: map no label column, or another one"
        )
    if seen.n_numbers >= NUMERIC_SHARE * seen.n_present and not seen.any_bool:
        return _score_rule(seen, column, threshold)
    if threshold is not None:
        bad = seen.first_non_number
        raise LabelError(
            f"--label-threshold needs a column of scores; {column!r} holds {str(bad)[:40]!r}"
        )
    keys = seen.keys
    if keys <= TRUE_WORDS | FALSE_WORDS:
        return LabelRule(kind="boolean")
    refuse_free_text(seen, column)
    if keys <= TOXIC_WORDS | NON_TOXIC_WORDS | NO_GOLD_WORDS:
        return LabelRule(
            kind="strings",
            toxic=tuple(sorted(keys & TOXIC_WORDS)),
            non_toxic=tuple(sorted(keys & NON_TOXIC_WORDS)),
            no_gold=tuple(sorted(keys & NO_GOLD_WORDS)),
        )
    unknown = keys - TOXIC_WORDS - NON_TOXIC_WORDS - NO_GOLD_WORDS
    raise LabelError(
        f"label column {column!r} holds {_listed(unknown)}: say which values mean toxic with "
        "--label-map toxic=A,B (haf datasets import FILE; the wizard's label rule: toxic=A,B; "
        "the others are non-toxic)"
    )


def refuse_free_text(seen: ColumnValues, column: str) -> None:
    """LabelError when strings are free text: many different values, or long ones."""
    many = len(seen.keys) > MAX_LABEL_VALUES
    if many or seen.longest > LONG_VALUE:
        what = f"{seen.shown_count()} different values" if many else "long texts"
        raise NotALabelError(
            f"column {column!r} is not a label: free text ({what}, e.g. "
            f"{excerpt_value(seen.first)!r}); a label is strings such as toxic/normal, "
            "true/false, 0/1 or a score in 0..1"
        )


def excerpt_value(value: Any, limit: int = 30) -> str:
    """A short start of a value for a message."""
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def parse_label_map(specs: Iterable[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``toxic=A,B`` and ``non-toxic=C`` as (toxic values, non-toxic values), normalized;
    LabelError for anything else."""
    toxic: list[str] = []
    non_toxic: list[str] = []
    for spec in specs:
        side, sep, listed = spec.partition("=")
        values = [normalize(v) for v in listed.split(",") if v.strip()]
        target = {"toxic": toxic, "non-toxic": non_toxic, "nontoxic": non_toxic}.get(
            normalize(side)
        )
        if not sep or target is None or not values:
            raise LabelError(
                f"--label-map {spec!r}: write toxic=VALUE,VALUE or non-toxic=VALUE,VALUE"
            )
        target.extend(values)
    both = set(toxic) & set(non_toxic)
    if both:
        raise LabelError(f"--label-map names {_listed(both)} both toxic and non-toxic")
    return tuple(toxic), tuple(non_toxic)


def parse_statement(text: str) -> tuple[float | None, tuple[str, ...]]:
    """A rule as a user types it (the wizard): a number is the threshold of a score column,
    else ``toxic=A,B`` and/or ``non-toxic=C`` separated by spaces or ``;``; empty: guess."""
    text = text.strip()
    if not text:
        return None, ()
    try:
        float(text)
    except ValueError:
        pass
    else:
        return parse_threshold(text), ()
    specs = tuple(p for p in text.replace(";", " ").split() if p)
    parse_label_map(specs)  # (LabelError now, for a statement that is neither)
    return None, specs


def stated_rule(
    values: Iterable[Any] | ColumnValues,
    column: str,
    *,
    threshold: float | None = None,
    label_map: Iterable[str] = (),
) -> LabelRule:
    """The rule for a column: from ``--label-map`` (the values one side names; the other
    side is every other value, or the values it names), from ``threshold``, else guessed.
    A value the map names that the column does not hold is refused (a typo would make every
    row one class). ``values``: the column's values, or their :class:`ColumnValues`."""
    specs = list(label_map)
    finite_threshold(threshold)
    if specs and threshold is not None:
        raise LabelError("give --label-map or --label-threshold, not both")
    if not specs:
        return guess_rule(values, column, threshold=threshold)
    toxic, non_toxic = parse_label_map(specs)
    seen = _summary(values)
    if not seen.n_present:
        raise NotALabelError(
            f"label column {column!r} is empty: map no label column, or another one"
        )
    refuse_free_text(seen, column)
    keys = seen.keys
    absent = (set(toxic) | set(non_toxic)) - keys
    if absent:
        raise LabelError(
            f"--label-map names {_listed(absent)}, which label column {column!r} does not hold "
            f"(its values: {_listed(keys)})"
        )
    if not toxic:
        toxic = tuple(sorted(keys - set(non_toxic)))
    elif not non_toxic:
        non_toxic = tuple(sorted(keys - set(toxic)))
    return LabelRule(kind="strings", toxic=toxic, non_toxic=non_toxic, origin="stated")


PAPER_RULES: Final[dict[str, LabelRule]] = {
    "civil_comments": LabelRule(
        kind="score",
        threshold=DEFAULT_THRESHOLD,
        origin="paper",
        why="the share of raters saying toxic; the paper kept mild (0.5 < t < 0.6) and toxic "
        "(t > 0.75) comments",
    ),
    "real_toxicity_prompts": LabelRule(
        kind="score",
        threshold=DEFAULT_THRESHOLD,
        origin="paper",
        why="the continuation's Perspective toxicity; the paper kept mild (0.5 < t < 0.6) and "
        "toxic (t > 0.75) texts",
    ),
    "toxigen": LabelRule(
        kind="score",
        threshold=DEFAULT_THRESHOLD,
        origin="paper",
        why="human toxicity 1-5 scaled to 0..1; the paper kept mild (0.5 < t < 0.6) and toxic "
        "(t > 0.75) statements",
    ),
    "hate_explain": LabelRule(
        kind="score",
        threshold=DEFAULT_THRESHOLD,
        origin="paper",
        why="the share of annotators saying hate or offensive; the paper kept posts where more "
        "than one does",
    ),
    "implicit_toxicity": LabelRule(
        kind="binary", origin="paper", why="the paper kept the rows labelled toxic (1)"
    ),
}
"""The gold of the paper's samples, by dataset: its ``given_label`` is a score (or 1), and
the paper's selection (spec §8) kept only the toxic end of it."""

HATEXPLAIN_CLASSES: Final = LabelRule(
    kind="strings",
    toxic=("hatespeech", "offensive"),
    non_toxic=("normal",),
    no_gold=("undecided",),
    origin="paper",
    why="the annotators' majority, kept as the class (the reports count by it)",
)
"""HateXplain's every post: labelled by its annotators' majority class."""

BUILTIN_RULE: Final = LabelRule(
    kind="strings",
    toxic=("toxic",),
    non_toxic=("non-toxic",),
    no_gold=("ambiguous",),
    origin="built-in",
)
"""The built-in sample's labels: written as gold, or ambiguous."""


def rule_of(meta: dict[str, Any]) -> LabelRule | None:
    """The label rule stored in a dataset's metadata (None: none, or unreadable)."""
    raw = meta.get("label_rule")
    if not isinstance(raw, dict):
        return None
    try:
        return LabelRule.model_validate(raw)
    except ValueError:
        return None
