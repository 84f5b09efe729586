"""The explorer's filter language, pure (no textual): stance, UNCLEAR, contradictions, metric
ranges (``sos>=0.5 rs<0.2``) over every instance metric of the run's methods, the gold label
and text columns (``label=toxic``), text search (input text and the model's answers), and
sorting by any metric, over the rows of the ``instances`` query (with the run's instance
metrics). What a run's list shows, sorts and filters by is its :class:`ListSchema`, drawn from
its methods' declared ``list_columns`` and metrics."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

from haf_tui.config import RunConfig
from haf_tui.methods.declare import ListColumn, Method, MetricSpec
from haf_tui.methods.registry import methods_of

Row = dict[str, Any]


@dataclass(frozen=True)
class ListSchema:
    """What a run's instance list shows, sorts and filters by, drawn from its methods'
    declarations: the columns shown always (in place order), every column by the name a range
    or the sort says, and the metric definitions of its legend and ``?``."""

    shown: tuple[ListColumn, ...] = ()
    columns: tuple[ListColumn, ...] = ()
    specs: tuple[MetricSpec, ...] = ()
    more: tuple[tuple[str, str], ...] = ()
    """The run's other instance metrics a range may name: (name, key of the rows)."""
    more_aliases: tuple[tuple[str, str], ...] = ()
    """Other names of those: their full names and their labels that are words."""

    @classmethod
    def of(cls, methods: Sequence[Method[Any]]) -> ListSchema:
        """The list of a run holding ``methods`` (in registry order)."""
        declared = [column for method in methods for column in method.list_columns]
        ranked = sorted(
            (c for c in declared if c.shown_at is not None), key=lambda c: c.shown_at or 0
        )
        by_name = {spec.name: spec for method in methods for spec in method.metrics}
        specs = tuple(by_name[c.metric] for c in declared if c.metric in by_name)
        in_columns = {c.metric: c.name for c in declared if c.digits is not None}
        more, aliases = [], []
        for method in methods:
            for spec in method.metrics:
                head, _, rest = spec.name.partition("_")  # classify_label_mass → label_mass
                name = rest if rest and method.name.startswith(head) else spec.name
                aliases.append((name, in_columns.get(spec.name, name)))
                if spec.name in in_columns:
                    name = in_columns[spec.name]
                else:
                    more.append((name, spec.name))
                aliases += [(spec.name, name), (spec.label.lower(), name)]
        for column in (c for c in declared if c.digits is not None):  # p(tox), p(ŷ)
            aliases.append((column.label.lower(), column.name))
        return cls(tuple(ranked), tuple(declared), specs, tuple(more), tuple(aliases))

    @property
    def sort_keys(self) -> tuple[str, ...]:
        """What ``o`` cycles through; "position" is the dataset order."""
        return ("position", *(c.name for c in self.columns if c.digits is not None))

    @property
    def row_columns(self) -> dict[str, str]:
        """Names (as typed in a range and shown) → keys of the list's rows."""
        return {c.name: c.metric for c in self.columns if c.digits is not None}

    @property
    def labels(self) -> dict[str, str]:
        """Names → column labels (and "position" → "dataset order")."""
        return {c.name: c.label for c in self.columns} | {"position": "dataset order"}

    @property
    def range_columns(self) -> dict[str, str]:
        """Every name a range may use as its own (the columns', then the run's other instance
        metrics') → keys of the list's rows."""
        columns = self.row_columns
        return columns | {name: key for name, key in self.more if name not in columns}

    @property
    def text_columns(self) -> dict[str, str]:
        """Names a ``name=word`` term compares → keys of the rows: the gold label, and the
        columns that show words (HAF's stance)."""
        return {"label": "label"} | {c.name: c.metric for c in self.columns if c.digits is None}

    @property
    def aliases(self) -> dict[str, str]:
        """Other names a range may use: declared ones, each label that is a name (``p(tox)``)
        and the other metrics' full names."""
        found = {
            c.label.lower(): c.name
            for c in self.columns
            if c.digits is not None and re.fullmatch(r"[A-Za-z_]+", c.label)
        }
        found |= {alias: c.name for c in self.columns for alias in c.aliases}
        for alias, name in self.more_aliases:
            if _NAME.fullmatch(alias):
                found.setdefault(alias, name)
        return found

    def column(self, name: str) -> ListColumn | None:
        """The column called ``name``."""
        return next((c for c in self.columns if c.name == name), None)

    def row_metrics(self) -> tuple[str, ...]:
        """The instance metrics its columns show and its ranges read (what the rows must
        carry)."""
        names = {spec.name for spec in self.specs}
        shown = tuple(c.metric for c in self.columns if c.metric in names)
        return shown + tuple(key for _, key in self.more if key not in shown)

    def legend(self) -> str:
        """Its metrics' directions in one line: ``SoS↑ DiS↑ UII↓ UEI↓ RS↑ RN↑ 0–1 (↑ higher
        is better)`` (empty when it shows none)."""
        if not self.specs:
            return ""
        labels = {c.metric: c.label for c in self.columns}
        arrows = " ".join(f"{labels.get(s.name, s.label)}{s.arrow}" for s in self.specs)
        ranges = {spec.value_range for spec in self.specs}
        shared = f" {ranges.pop()}" if len(ranges) == 1 else ""
        return f"{arrows}{shared} (↑ higher is better)"


def list_schema(config: RunConfig) -> ListSchema:
    """The instance list of a run with ``config``."""
    return ListSchema.of(methods_of(config))


DEFAULT_SCHEMA: Final = list_schema(RunConfig())
"""The list of a run with the default config (before a run's config is read)."""
SORT_KEYS: tuple[str, ...] = DEFAULT_SCHEMA.sort_keys
"""What ``o`` cycles through in that list; "position" is the dataset order."""
METRIC_COLUMNS: dict[str, str] = DEFAULT_SCHEMA.row_columns
"""Its metric names (as typed in a range and shown) → columns of the ``instances`` query."""
LABELS: dict[str, str] = DEFAULT_SCHEMA.labels
STANCES: tuple[str, ...] = ("all", "toxic", "maybe", "non-toxic", "unclear")
"""What ``s`` cycles through: the JUSTIFY stance shown."""

_NAME_TEXT = r"[^\W\d][\w]*(?:\([\w]+\))?"
_NAME = re.compile(_NAME_TEXT)
"""A name a range may use: a word, perhaps with one in parentheses (``p(toxic)``)."""
_TERM = re.compile(
    rf"({_NAME_TEXT})\s*(<=|>=|==|!=|<|>|=)\s*"
    r"(?:([-+]?(?:\d+\.?\d*|\.\d+))|([^\W\d][\w-]*))"
)
_OPS = {
    "<": float.__lt__,
    "<=": float.__le__,
    ">": float.__gt__,
    ">=": float.__ge__,
    "=": float.__eq__,
    "==": float.__eq__,
    "!=": float.__ne__,
}


class FilterError(ValueError):
    """A metric range that cannot be read (the message is one line for the user)."""


@dataclass(frozen=True)
class Range:
    """One condition ``metric op value``; an undefined (NULL) metric never matches."""

    metric: str
    op: str
    value: float
    column: str = field(default="", compare=False)
    """The key of the rows it reads (default: the default list's column of ``metric``)."""

    def test(self, row: Row) -> bool:
        """Whether the row's metric satisfies the condition."""
        value = row.get(self.column or METRIC_COLUMNS.get(self.metric, self.metric))
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return False
        return bool(_OPS[self.op](float(value), self.value))

    def __str__(self) -> str:
        return f"{self.metric}{self.op}{self.value:g}"


@dataclass(frozen=True)
class Match:
    """One condition ``column = word`` (or ``!=``) on a column of words, e.g. the gold label;
    case is ignored, and an instance without a value never matches."""

    name: str
    op: str
    value: str
    column: str = field(default="", compare=False)

    def test(self, row: Row) -> bool:
        """Whether the row's value is (``!=``: is not) the word."""
        value = row.get(self.column or self.name)
        if value is None or not str(value).strip():
            return False
        return (str(value).strip().lower() == self.value) != (self.op == "!=")

    def __str__(self) -> str:
        return f"{self.name}{'!=' if self.op == '!=' else '='}{self.value}"


Term = Range | Match
"""A condition of the ranges box."""


def parse_ranges(text: str, schema: ListSchema = DEFAULT_SCHEMA) -> tuple[Term, ...]:
    """``"sos>0.5 rs<=0.3 label=toxic"`` → conditions over ``schema``'s metrics and its
    columns of words (all must hold); :class:`FilterError` when unreadable."""
    columns, words, aliases = schema.range_columns, schema.text_columns, schema.aliases
    terms: list[Term] = []
    position = 0
    for match in _TERM.finditer(text):
        _check_gap(text[position : match.start()])
        position = match.end()
        name, op, number, word = match.group(1).lower(), *match.group(2, 3, 4)
        if word is not None:
            if name not in words:
                raise FilterError(f"{name} {op} {word!r}: compare {', '.join(words)} with a word")
            if op not in ("=", "==", "!="):
                raise FilterError(f"{name}{op}{word}: compare a word with = or !=")
            terms.append(Match(name, op, word.lower(), words[name]))
            continue
        metric = name if name in columns else aliases.get(name, name)
        if metric not in columns:
            known = ", ".join([*columns, *(f"{n}=…" for n in words)])
            raise FilterError(f"unknown metric {name!r}: use {known}")
        terms.append(Range(metric, op, float(number), columns[metric]))
    _check_gap(text[position:])
    return tuple(terms)


def _check_gap(gap: str) -> None:
    rest = gap.replace(",", " ").split()
    if any(word.lower() != "and" for word in rest):
        raise FilterError(
            f"cannot read {' '.join(rest)!r}: write metric>value or label=word, e.g. sos>0.5 rs<0.3"
        )


def _sort_value(row: Row, column: str) -> float:
    value = row.get(column)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return math.nan
    return float(value)


@dataclass(frozen=True)
class InstanceFilter:
    """What the list shows: filters (all must hold) and the order."""

    text: str = ""
    stance: str = "all"
    unclear_only: bool = False
    contradictions_only: bool = False
    bookmarked_only: bool = False
    ranges: tuple[Term, ...] = field(default_factory=tuple)
    sort_key: str = "position"
    reverse: bool = False
    """Flip the natural order (dataset order; metrics highest first)."""
    schema: ListSchema = field(default=DEFAULT_SCHEMA, compare=False)
    """The run's list: its sort keys and what they read."""

    def matches(self, row: Row) -> bool:
        """Whether the row passes every filter."""
        if self.stance != "all" and row.get("stance") != self.stance:
            return False
        if self.unclear_only and not row.get("n_unclear"):
            return False
        if self.contradictions_only and not row.get("n_contradictions"):
            return False
        if self.bookmarked_only and not row.get("bookmarked"):
            return False
        needle = self.text.strip().lower()
        if needle and needle not in row.get("_haystack", ""):
            return False
        return all(r.test(row) for r in self.ranges)

    def apply(self, rows: list[Row]) -> list[Row]:
        """The matching rows in the chosen order (undefined values last either way)."""
        shown = [row for row in rows if self.matches(row)]
        if self.sort_key == "position":
            return shown[::-1] if self.reverse else shown
        column = self.schema.row_columns.get(self.sort_key, self.sort_key)
        defined = [(v, row) for row in shown if not math.isnan(v := _sort_value(row, column))]
        undefined = [row for row in shown if math.isnan(_sort_value(row, column))]
        defined.sort(key=lambda pair: pair[0], reverse=not self.reverse)
        return [row for _, row in defined] + undefined

    def changed(self, change: str) -> InstanceFilter:
        """The filter after one key: ``sort`` (next metric), ``reverse``, ``stance`` (next
        stance), ``unclear`` / ``contradictions`` / ``bookmarked`` (on/off), ``clear`` (all
        off, order kept)."""
        if change == "sort":
            keys = self.schema.sort_keys
            index = (keys.index(self.sort_key) + 1) % len(keys) if self.sort_key in keys else 0
            return replace(self, sort_key=keys[index])
        if change == "reverse":
            return replace(self, reverse=not self.reverse)
        if change == "stance":
            index = (STANCES.index(self.stance) + 1) % len(STANCES)
            return replace(self, stance=STANCES[index])
        if change == "unclear":
            return replace(self, unclear_only=not self.unclear_only)
        if change == "contradictions":
            return replace(self, contradictions_only=not self.contradictions_only)
        if change == "bookmarked":
            return replace(self, bookmarked_only=not self.bookmarked_only)
        if change == "clear":
            return InstanceFilter(sort_key=self.sort_key, reverse=self.reverse, schema=self.schema)
        raise ValueError(f"unknown filter change {change!r}")

    def sort_label(self) -> str:
        """``SoS ↓`` / ``dataset order``."""
        if self.sort_key == "position":
            return "dataset order" + (" (reversed)" if self.reverse else "")
        label = self.schema.labels.get(self.sort_key, self.sort_key)
        return f"{label} {'↑' if self.reverse else '↓'}"

    def describe(self) -> str:
        """The active filters and the order, in one line."""
        parts = [] if self.stance == "all" else [f"stance {self.stance}"]
        parts += ["UNCLEAR"] if self.unclear_only else []
        parts += ["contradictions"] if self.contradictions_only else []
        parts += ["★ bookmarked"] if self.bookmarked_only else []
        parts += [str(r) for r in self.ranges]
        parts += [f"“{self.text.strip()}”"] if self.text.strip() else []
        return " · ".join([*parts, f"sort {self.sort_label()}"])


def prepare(rows: list[Row]) -> list[Row]:
    """Add what filtering needs once per row (the lower-cased searchable text)."""
    for row in rows:
        row["_haystack"] = f"{row['instance_id']} {row.get('text') or ''}".lower()
    return rows


def add_answers(rows: list[Row], answers: dict[str, str]) -> None:
    """Make the model's answers to each instance searchable too (``answers``: instance id →
    its answers, read after the list shows)."""
    for row in rows:
        found = answers.get(str(row["instance_id"]))
        if found:
            row["_haystack"] = f"{row['_haystack']}\n{found.lower()}"
