"""Local dataset files: column mapping, preview, and loading with validation.

A file (CSV, TSV, JSONL, JSON, Parquet) needs a text column; an id column, a label column and
extra columns (kept with each instance) are optional. A label column's values become gold
labels through a :class:`~haf_tui.datasets.labels.LabelRule` (guessed or stated, stored in the
dataset's meta). :func:`preview_file` shows the first rows, a guessed mapping and label rule;
:func:`load_file` reads every row, skipping (with the reason) those that cannot be evaluated,
and :func:`sample_dataset` draws a seeded sample.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from pathlib import Path
from typing import Any, Final

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from haf_tui.datasets.label_columns import (
    ColumnLabel,
    column_label,
    guess_label,
    label_candidates,
    no_label_note,
)
from haf_tui.datasets.label_values import is_missing
from haf_tui.datasets.labels import LabelRule, NotALabelError, stated_rule
from haf_tui.datasets.model import Dataset, DatasetError
from haf_tui.datasets.readers import BROKEN_LINE, Record
from haf_tui.datasets.streams import open_stream, read_table
from haf_tui.datasets.validation import (
    BAD_LABEL,
    DEFAULT_MAX_CHARS,
    RowValidator,
    SkippedRow,
    excerpt,
)
from haf_tui.store.records import InstanceRecord

TEXT_COLUMNS: Final = (
    "text", "input_text", "comment_text", "comment", "content", "sentence", "post", "tweet",
)  # fmt: skip
ID_COLUMNS: Final = ("id", "index", "instance_id", "post_id", "idx")
RULE_ROWS: Final = 1000
"""Rows a preview reads to guess the label rule (it shows fewer)."""


class ColumnMapping(BaseModel):
    """Which column holds what: ``text`` is required; ``id``, ``label`` and ``extra`` are
    optional (without ``id`` an instance's id is its row number; ``extra`` columns are kept
    in each instance's ``extra``)."""

    model_config = ConfigDict(frozen=True)

    text: str
    id: str | None = None
    label: str | None = None
    extra: tuple[str, ...] = ()

    def check(self, columns: list[str], where: Path) -> None:
        """DatasetError when a mapped column is not among the file's columns."""
        mapped = [self.text, self.id, self.label, *self.extra]
        missing = [c for c in mapped if c is not None and c not in columns]
        if missing:
            raise DatasetError(
                f"{where} has no column {missing[0]!r} (its columns: {', '.join(columns)})"
            )


class FilePreview(BaseModel):
    """The first rows of a file as read, its encoding and format, a guessed mapping (None when
    no column looks like text), and what each column would be as the label (``labels``)."""

    path: str
    format: str
    encoding: str | None
    columns: list[str]
    rows: list[dict[str, Any]]
    n_rows: int
    n_rows_exact: bool = True
    """False: the file is longer than what was read, ``n_rows`` estimated from its start."""
    mapping: ColumnMapping | None = None
    notes: list[str] = Field(default_factory=list)
    labels: dict[str, ColumnLabel] = Field(default_factory=dict)
    label_note: str | None = None
    """No label column was guessed: said so, with the columns that look like labels."""
    rule_rows: list[dict[str, Any]] = Field(default_factory=list, exclude=True)
    """The first :data:`RULE_ROWS` rows, that the label rules are guessed from."""

    @property
    def label(self) -> ColumnLabel | None:
        """The guessed label column's rule or problem (None: no label column guessed)."""
        return self.labels.get(self.mapping.label) if self.mapping and self.mapping.label else None


def _pick(columns: list[str], candidates: tuple[str, ...]) -> str | None:
    lowered = {c.lower(): c for c in columns}
    return next((lowered[c] for c in candidates if c in lowered), None)


def guess_mapping(columns: list[str], rows: list[Record] | None = None) -> ColumnMapping | None:
    """A mapping from well-known column names (a likely label column's name only with
    label-like values); else the column with the longest texts as the text."""
    text = _pick(columns, TEXT_COLUMNS)
    if text is None and rows:
        lengths = {
            c: sum(len(r[c]) for r in rows if isinstance(r.get(c), str)) / len(rows)
            for c in columns
        }
        best = max(lengths, key=lambda c: lengths[c], default=None)
        text = best if best is not None and lengths[best] >= 20 else None
    if text is None:
        return None
    rest = [c for c in columns if c != text]
    return ColumnMapping(text=text, id=_pick(rest, ID_COLUMNS), label=guess_label(rest, rows or []))


def preview_file(path: str | Path, rows: int = 10, *, encoding: str | None = None) -> FilePreview:
    """The first ``rows`` rows of a dataset file, its encoding, a guessed mapping, and the
    label rule of each column (from the first :data:`RULE_ROWS` rows): only the start of the
    file is read (its encoding decided from it, its row count estimated past it)."""
    table = read_table(path, encoding=encoding, limit=max(rows, RULE_ROWS))
    records = [r for _, r in table.rows if BROKEN_LINE not in r]
    mapping = guess_mapping(table.columns, records)
    notes = [] if mapping else ["no column looks like text: choose the text column"]
    label_note = None
    if mapping is not None and mapping.label is None:
        values = {c: [r.get(c) for r in records] for c in table.columns}
        label_note = no_label_note(label_candidates(values, (mapping.text, mapping.id)))
    labels = {c: column_label([r.get(c) for r in records], c) for c in table.columns}
    return FilePreview(
        path=str(table.path),
        format=table.format,
        encoding=table.encoding,
        columns=table.columns,
        rows=[r for _, r in table.rows[:rows]],
        n_rows=table.n_rows,
        n_rows_exact=table.n_rows_exact,
        mapping=mapping,
        notes=notes,
        labels=labels,
        label_note=label_note,
        rule_rows=records,
    )


def stated_mapping(
    path: str | Path,
    *,
    text: str | None = None,
    id: str | None = None,
    label: str | None = None,
    extra: tuple[str, ...] = (),
    encoding: str | None = None,
) -> ColumnMapping | None:
    """The mapping the columns named make (``--text-column`` and the others), the roles not
    named guessed (the id and label columns only when the text column is not named); None
    when none is named (the whole mapping guessed on reading)."""
    if not any((text, id, label, extra)):
        return None
    guessed = preview_file(path, rows=50, encoding=encoding).mapping
    text_column = text or (guessed.text if guessed else None)
    if text_column is None:
        raise DatasetError(f"no column of {path} looks like text: name it with --text-column")
    return ColumnMapping(
        text=text_column,
        id=id or (guessed.id if guessed and not text else None),
        label=label or (guessed.label if guessed and not text else None),
        extra=extra,
    )


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "dataset"


def _value(record: Record, column: str | None) -> Any:
    return None if column is None else record.get(column)


def _label_rule(
    values: list[Any],
    mapping: ColumnMapping,
    guessed: bool,
    rule: LabelRule | None,
    threshold: float | None,
    label_map: tuple[str, ...],
) -> tuple[ColumnMapping, LabelRule | None, str | None]:
    """The mapping (without a guessed label column that is not a label: with a note why) and
    the label rule: ``rule``, else stated by ``threshold``/``label_map``, else guessed."""
    if mapping.label is None:
        if threshold is not None or label_map:
            raise DatasetError("--label-threshold and --label-map need a label column")
        return mapping, None, None
    if rule is not None:
        return mapping, rule, None
    try:
        return (
            mapping,
            stated_rule(values, mapping.label, threshold=threshold, label_map=label_map),
            None,
        )
    except NotALabelError as exc:
        if not guessed:
            raise
        return mapping.model_copy(update={"label": None}), None, f"{exc}: no label column used"


def _raw(value: Any) -> Any:
    return value if isinstance(value, str | int | float | bool) else str(value)


def _read_row(
    number: int,
    record: Record,
    mapping: ColumnMapping,
    rule: LabelRule | None,
    validator: RowValidator,
    instances: list[InstanceRecord],
    skipped: list[SkippedRow],
) -> None:
    """Row ``number`` as an instance (appended to ``instances``), or skipped with why."""
    if BROKEN_LINE in record:
        skipped.append(SkippedRow(number, str(record[BROKEN_LINE]), excerpt(record.get("text"))))
        return
    text, label = _value(record, mapping.text), _value(record, mapping.label)
    raw_id = _value(record, mapping.id)
    instance_id = str(number) if raw_id is None or raw_id == "" else str(raw_id)
    extras = {c: record.get(c) for c in mapping.extra}
    gold, problem = (None, None)
    if is_missing(label):
        label = None  # (an empty or NaN cell: a row without gold, never a class)
    elif rule is not None:
        gold, problem = rule.stored(label)
        extras["label_raw"] = _raw(label)
    if problem:
        skipped.append(SkippedRow(number, f"{BAD_LABEL}: {problem}", excerpt(text)))
        return
    reason = validator.reason(text, instance_id, label, *extras.values())
    if reason:
        skipped.append(SkippedRow(number, reason, excerpt(text)))
        return
    instances.append(
        InstanceRecord(
            instance_id=instance_id,
            position=len(instances),
            text=str(text),
            label=gold,
            extra=extras,
        )
    )


def load_file(
    path: str | Path,
    mapping: ColumnMapping | None = None,
    *,
    name: str | None = None,
    encoding: str | None = None,
    max_chars: int = DEFAULT_MAX_CHARS,
    label_required: bool | None = None,
    label_rule: LabelRule | None = None,
    label_threshold: float | None = None,
    label_map: tuple[str, ...] = (),
    guess_label_column: bool = True,
) -> Dataset:
    """Every evaluable row of a dataset file as instances; the others skipped with why.

    Without ``mapping`` the columns are guessed (``text``/``input_text``, ``id``/``index``,
    ``label``/``given_label``). With a label column, rows without a label are skipped unless
    ``label_required`` is False; its values become gold labels through ``label_rule``, else
    the rule ``label_threshold`` or ``label_map`` states, else the one its values call for
    (:mod:`haf_tui.datasets.labels`: a LabelError when it cannot be guessed or the column is
    not a label; a guessed label column that is not one is dropped, with a note in the meta);
    each instance keeps its gold as its label and the value as read in ``extra["label_raw"]``,
    a row whose value the rule does not read is skipped. A ``mapping`` without a label
    column has one guessed unless ``guess_label_column`` is False. A file that cannot be read raises
    one DatasetError.
    """
    file_path = Path(path).expanduser()
    if not file_path.is_file():
        raise DatasetError(f"dataset file not found: {file_path}")
    with open_stream(file_path, encoding=encoding) as stream:  # (1: the columns, the rule)
        columns, first_rows = stream.columns, list(itertools.islice(stream.rows, RULE_ROWS))
        if not first_rows:
            raise DatasetError(f"dataset file {file_path} has no rows")
        first = [r for _, r in first_rows if BROKEN_LINE not in r]
        guessed = mapping is None
        if mapping is None:
            mapping = guess_mapping(columns, first)
            if mapping is None:
                raise DatasetError(
                    f"dataset file {file_path} has no text column (one of "
                    f"{', '.join(TEXT_COLUMNS)}): name it with haf datasets import FILE "
                    "--text-column NAME, then run --dataset NAME"
                )
        elif mapping.label is None and label_rule is None and guess_label_column:
            # the text column named, the label column not: guessed as it would be (a
            # well-known name with label-like values), said aloud as guessed
            taken = (mapping.text, mapping.id, *mapping.extra)
            found = guess_label([c for c in columns if c not in taken], first)
            if found is not None:
                mapping, guessed = mapping.model_copy(update={"label": found}), True
        mapping.check(columns, file_path)
        values: list[Any] = []
        if mapping.label is not None and label_rule is None:
            every = itertools.chain(first_rows, stream.rows)
            values = [r.get(mapping.label) for _, r in every if BROKEN_LINE not in r]
    mapping, rule, label_note = _label_rule(
        values, mapping, guessed, label_rule, label_threshold, label_map
    )
    if mapping.label is None:
        by_column = {c: [r.get(c) for r in first] for c in columns}
        taken = (mapping.text, mapping.id, *mapping.extra)
        note = no_label_note(label_candidates(by_column, taken))
        label_note = f"{label_note}; {note}" if label_note else note
    required = mapping.label is not None if label_required is None else label_required
    validator = RowValidator(max_chars=max_chars, label_required=required)
    instances: list[InstanceRecord] = []
    skipped: list[SkippedRow] = []
    n_rows = 0
    with open_stream(file_path, encoding=encoding) as table:  # (2: the instances)
        for number, record in table.rows:
            n_rows += 1
            _read_row(number, record, mapping, rule, validator, instances, skipped)
    digest = hashlib.sha256()
    with file_path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    digest.update(mapping.model_dump_json().encode() + f"|{max_chars}|{required}".encode())
    if rule is not None:
        digest.update(rule.key().encode())
    meta = {
        "kind": "file",
        "format": table.format,
        "encoding": table.encoding,
        "mapping": mapping.model_dump(),
        "max_chars": max_chars,
        "n_rows": n_rows,
    }
    if rule is not None:
        meta["label_rule"] = rule.model_dump()
    if label_note:
        meta["label_note"] = label_note
    return Dataset(
        f"{_slug(file_path.stem)}-{digest.hexdigest()[:12]}",
        name or file_path.stem,
        str(file_path),
        instances,
        skipped,
        meta,
    )


def sample_indices(population: int, n: int, seed: int) -> list[int]:
    """The positions a seeded sample of ``n`` draws from ``population`` rows, in draw order.

    This is pandas' ``DataFrame.sample(n, random_state=seed)`` (the reference's sampler):
    ``numpy.random.RandomState(seed).choice(population, n, replace=False)``; ``n`` larger than
    the population draws every row (in a seeded order).
    """
    if population <= 0:
        return []
    size = min(n, population)
    drawn = np.random.RandomState(seed).choice(population, size=size, replace=False)
    return [int(i) for i in drawn]


def sample_dataset(dataset: Dataset, n: int, seed: int) -> Dataset:
    """A seeded sample of ``n`` of a dataset's instances (positions renumbered in draw
    order); the drawn positions are kept in ``meta['sample']``."""
    if n <= 0:
        raise DatasetError(f"a sample needs at least one instance, not {n}")
    indices = sample_indices(len(dataset.instances), n, seed)
    instances = [
        dataset.instances[i].model_copy(update={"position": k}) for k, i in enumerate(indices)
    ]
    sample = {"seed": seed, "n": len(indices), "population": len(dataset.instances)}
    meta = {**dataset.meta, "sample": {**sample, "indices": indices}}
    return Dataset(
        f"{dataset.dataset_id}-n{len(indices)}-s{seed}",
        dataset.name,
        dataset.source,
        instances,
        dataset.skipped,
        meta,
    )
