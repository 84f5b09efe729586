"""A dataset file read into instances in two passes, in bounded memory (a 200 MB CSV took
2 to 4.5 GB to import: issue 42 §6).

The first pass (:func:`read_plan`) decides the columns and the label rule: the mapping from
the first :data:`~haf_tui.datasets.files.RULE_ROWS` rows, the rule from the label column's
values over the whole file, gathered into a :class:`ColumnValues` (never a list of them); the
dataset's id digests the file's bytes, read in chunks. The second (:meth:`FilePlan.rows`)
reads the file again and gives each row, as it is read, as an instance or a skipped row:
:func:`stream_file` hands them to the store as they come (``haf datasets import``),
:func:`sample_file` keeps the ones a seeded sample draws (``--sample``), :func:`load_file` keeps
them all in a list (a run's file, a paper sample).
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from haf_tui.datasets.files import (
    RULE_ROWS,
    TEXT_COLUMNS,
    ColumnMapping,
    check_sample_size,
    guess_mapping,
    sample_indices,
    sampled,
)
from haf_tui.datasets.label_columns import guess_label, label_candidates, no_label_note
from haf_tui.datasets.label_values import ColumnValues, is_missing
from haf_tui.datasets.labels import LabelRule, NotALabelError, stated_rule
from haf_tui.datasets.model import Dataset, DatasetError, StreamedDataset
from haf_tui.datasets.readers import BROKEN_LINE, Record
from haf_tui.datasets.streams import open_stream
from haf_tui.datasets.validation import (
    BAD_LABEL,
    DEFAULT_MAX_CHARS,
    RowValidator,
    SkippedRow,
    excerpt,
)
from haf_tui.store.records import InstanceRecord


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "dataset"


def _value(record: Record, column: str | None) -> Any:
    return None if column is None else record.get(column)


def _label_rule(
    values: ColumnValues,
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
    position: int,
) -> InstanceRecord | SkippedRow:
    """Row ``number`` as the instance at ``position``, or skipped with why."""
    if BROKEN_LINE in record:
        return SkippedRow(number, str(record[BROKEN_LINE]), excerpt(record.get("text")))
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
        return SkippedRow(number, f"{BAD_LABEL}: {problem}", excerpt(text))
    reason = validator.reason(text, instance_id, label, *extras.values())
    if reason:
        return SkippedRow(number, reason, excerpt(text))
    return InstanceRecord(
        instance_id=instance_id, position=position, text=str(text), label=gold, extra=extras
    )


@dataclass
class FilePlan:
    """How a file's rows become instances (its first pass): its mapping, label rule and row
    checks, its dataset's id and name, and its ``meta`` (``n_rows`` set by :meth:`rows`)."""

    path: Path
    encoding: str | None
    mapping: ColumnMapping
    rule: LabelRule | None
    max_chars: int
    label_required: bool
    dataset_id: str
    name: str
    meta: dict[str, Any]

    def rows(self) -> Iterator[InstanceRecord | SkippedRow]:
        """The second pass: each row of the file, as it is read, as an instance or a skipped
        row (``meta['n_rows']`` counted once the file is read to its end)."""
        validator = RowValidator(max_chars=self.max_chars, label_required=self.label_required)
        n_rows = n_instances = 0
        with open_stream(self.path, encoding=self.encoding) as stream:
            for number, record in stream.rows:
                n_rows += 1
                row = _read_row(number, record, self.mapping, self.rule, validator, n_instances)
                if isinstance(row, InstanceRecord):
                    n_instances += 1
                yield row
        self.meta["n_rows"] = n_rows


def _digest(path: Path, mapping: ColumnMapping, max_chars: int, required: bool) -> Any:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    digest.update(mapping.model_dump_json().encode() + f"|{max_chars}|{required}".encode())
    return digest


def read_plan(
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
) -> FilePlan:
    """The first pass over a dataset file: its columns, mapping and label rule (as
    :func:`load_file` says), its dataset's id, name and metadata."""
    file_path = Path(path).expanduser()
    if not file_path.is_file():
        raise DatasetError(f"dataset file not found: {file_path}")
    with open_stream(file_path, encoding=encoding) as stream:
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
        values = ColumnValues()  # (the label column's, over the whole file: never a list)
        if mapping.label is not None and label_rule is None:
            for _, record in itertools.chain(first_rows, stream.rows):
                if BROKEN_LINE not in record:
                    values.add(record.get(mapping.label))
        fmt, used = stream.format, stream.encoding
    mapping, rule, label_note = _label_rule(
        values, mapping, guessed, label_rule, label_threshold, label_map
    )
    if mapping.label is None:
        by_column = {c: [r.get(c) for r in first] for c in columns}
        taken = (mapping.text, mapping.id, *mapping.extra)
        note = no_label_note(label_candidates(by_column, taken))
        label_note = f"{label_note}; {note}" if label_note else note
    required = mapping.label is not None if label_required is None else label_required
    digest = _digest(file_path, mapping, max_chars, required)
    if rule is not None:
        digest.update(rule.key().encode())
    meta: dict[str, Any] = {
        "kind": "file",
        "format": fmt,
        "encoding": used,
        "mapping": mapping.model_dump(),
        "max_chars": max_chars,
        "n_rows": None,  # (counted by the second pass)
    }
    if rule is not None:
        meta["label_rule"] = rule.model_dump()
    if label_note:
        meta["label_note"] = label_note
    return FilePlan(
        file_path,
        encoding,
        mapping,
        rule,
        max_chars,
        required,
        f"{_slug(file_path.stem)}-{digest.hexdigest()[:12]}",
        name or file_path.stem,
        meta,
    )


def stream_file(
    path: str | Path,
    mapping: ColumnMapping | None = None,
    **options: Any,
) -> StreamedDataset:
    """A dataset file as a :class:`StreamedDataset` (its first pass done; its rows read as the
    store takes them): the options are :func:`load_file`'s."""
    plan = read_plan(path, mapping, **options)
    return StreamedDataset(plan.dataset_id, plan.name, str(plan.path), plan.meta, plan.rows)


def sample_file(
    path: str | Path,
    mapping: ColumnMapping | None = None,
    *,
    n: int,
    seed: int,
    **options: Any,
) -> Dataset:
    """The seeded sample of ``n`` of a file's instances that :func:`sample_dataset` draws from
    :func:`load_file`'s, holding only those drawn (and the skipped rows): one pass counts the
    instances, the next keeps the drawn ones. The options are :func:`load_file`'s."""
    check_sample_size(n)
    plan = read_plan(path, mapping, **options)
    population = sum(isinstance(row, InstanceRecord) for row in plan.rows())
    indices = sample_indices(population, n, seed)
    wanted = set(indices)
    picked: dict[int, InstanceRecord] = {}
    skipped: list[SkippedRow] = []
    for row in plan.rows():
        if not isinstance(row, InstanceRecord):
            skipped.append(row)
        elif row.position in wanted:
            picked[row.position] = row
    whole = Dataset(plan.dataset_id, plan.name, str(plan.path), [], skipped, plan.meta)
    return sampled(whole, [picked[i] for i in indices], indices, population, seed)


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
    column has one guessed unless ``guess_label_column`` is False. A file that cannot be read
    raises one DatasetError. The instances are held in a list: ``haf datasets import`` stores
    them as they are read instead (:func:`stream_file`).
    """
    plan = read_plan(
        path,
        mapping,
        name=name,
        encoding=encoding,
        max_chars=max_chars,
        label_required=label_required,
        label_rule=label_rule,
        label_threshold=label_threshold,
        label_map=label_map,
        guess_label_column=guess_label_column,
    )
    instances: list[InstanceRecord] = []
    skipped: list[SkippedRow] = []
    for row in plan.rows():
        if isinstance(row, InstanceRecord):
            instances.append(row)
        else:
            skipped.append(row)
    return Dataset(plan.dataset_id, plan.name, str(plan.path), instances, skipped, plan.meta)
