"""Local dataset files: column mapping, preview, and loading with validation.

A file (CSV, TSV, JSONL, JSON, Parquet) needs a text column; an id column, a label column and
extra columns (kept with each instance) are optional. A label column's values become gold
labels through a :class:`~haf_tui.datasets.labels.LabelRule` (guessed or stated, stored in the
dataset's meta). :func:`preview_file` shows the first rows, a guessed mapping and label rule;
:func:`load_file` reads every row, skipping (with the reason) those that cannot be evaluated,
and :func:`sample_dataset` draws a seeded sample.
"""

from __future__ import annotations

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
from haf_tui.datasets.model import Dataset, DatasetError
from haf_tui.datasets.readers import BROKEN_LINE, Record
from haf_tui.datasets.streams import read_table
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


def check_sample_size(n: int) -> None:
    """DatasetError for a sample size below one."""
    if n <= 0:
        raise DatasetError(f"a sample needs at least one instance, not {n}")


def sampled(
    dataset: Dataset, drawn: list[InstanceRecord], indices: list[int], population: int, seed: int
) -> Dataset:
    """``dataset`` as the seeded sample that drew ``indices`` of its ``population`` instances:
    ``drawn`` those instances in draw order (positions renumbered so); the drawn positions are
    kept in ``meta['sample']``."""
    instances = [instance.model_copy(update={"position": k}) for k, instance in enumerate(drawn)]
    sample = {"seed": seed, "n": len(indices), "population": population}
    meta = {**dataset.meta, "sample": {**sample, "indices": indices}}
    return Dataset(
        f"{dataset.dataset_id}-n{len(indices)}-s{seed}",
        dataset.name,
        dataset.source,
        instances,
        dataset.skipped,
        meta,
    )


def sample_dataset(dataset: Dataset, n: int, seed: int) -> Dataset:
    """A seeded sample of ``n`` of a dataset's instances (positions renumbered in draw
    order); the drawn positions are kept in ``meta['sample']``."""
    check_sample_size(n)
    indices = sample_indices(len(dataset.instances), n, seed)
    drawn = [dataset.instances[i] for i in indices]
    return sampled(dataset, drawn, indices, len(dataset.instances), seed)
