"""Datasets in the DuckDB store: importing (once, with metadata and skipped rows), finding
by name or id, and loading back as a :class:`Dataset` that a run can evaluate."""

from __future__ import annotations

import itertools
from collections.abc import Iterable

from haf_tui.datasets.model import Dataset, DatasetError, StreamedDataset
from haf_tui.datasets.validation import SkippedRow
from haf_tui.store.dataset_catalog import (
    DatasetRow,
    find_datasets,
    get_dataset,
    list_datasets,
    merge_dataset_meta,
    skipped_rows,
)
from haf_tui.store.db import Store
from haf_tui.store.records import InstanceRecord

__all__ = [
    "DatasetRow",
    "find_stored",
    "import_dataset",
    "list_datasets",
    "load_stored",
    "store_dataset",
]


def store_dataset(store: Store, dataset: Dataset | StreamedDataset) -> DatasetRow:
    """Save a dataset with its metadata and skipped rows, in one transaction (idempotent: a
    dataset already stored under this id only gains the metadata keys it lacked). A
    :class:`StreamedDataset`'s rows go to the store as its file is read, never all held."""
    rows: Iterable[InstanceRecord | SkippedRow]
    if isinstance(dataset, StreamedDataset):
        rows = dataset.rows()
    else:
        rows = itertools.chain(dataset.instances, dataset.skipped)
    store.save_dataset(dataset.dataset_id, dataset.name, dataset.source, rows, lambda: dataset.meta)
    merge_dataset_meta(store, dataset.dataset_id, dataset.meta)
    row = get_dataset(store, dataset.dataset_id)
    assert row is not None
    return row


def import_dataset(store: Store, dataset: Dataset | StreamedDataset) -> tuple[DatasetRow, bool]:
    """Store a dataset under its name; returns its row and whether it is new. DatasetError
    when another dataset already has the name."""
    existing = get_dataset(store, dataset.dataset_id)
    if existing is not None:
        return existing, False
    taken = [r for r in find_datasets(store, dataset.name) if r.name == dataset.name]
    if taken:
        raise DatasetError(
            f"a different dataset is stored as {dataset.name!r} (id {taken[0].dataset_id}): "
            "choose another name with --name"
        )
    return store_dataset(store, dataset), True


def find_stored(store: Store, name_or_id: str) -> DatasetRow:
    """The stored dataset with this id, name or id prefix (DatasetError when none or several)."""
    rows = find_datasets(store, name_or_id)
    if not rows:
        raise DatasetError(f"no stored dataset {name_or_id!r} (haf datasets list shows them)")
    if len(rows) > 1:
        ids = ", ".join(r.dataset_id for r in rows[:4])
        raise DatasetError(f"{name_or_id!r} names {len(rows)} stored datasets ({ids}): use an id")
    return rows[0]


def load_stored(store: Store, name_or_id: str) -> Dataset:
    """A stored dataset with its instances, skipped rows and metadata."""
    row = find_stored(store, name_or_id)
    skipped = [
        SkippedRow(n, reason, text or "") for n, reason, text in skipped_rows(store, row.dataset_id)
    ]
    return Dataset(
        row.dataset_id,
        row.name,
        row.source,
        store.instances(row.dataset_id),
        skipped,
        row.meta,
    )
