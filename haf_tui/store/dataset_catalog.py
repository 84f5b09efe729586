"""The stored datasets: listing and finding them, their skipped rows, their metadata.

``datasets`` holds one row per dataset (``meta``: kind, encoding, mapping, sample, hub revision,
filter counts); ``instances`` its instances; ``skipped_rows`` every row left out, with its
1-based number in the source, the reason and a short excerpt.
"""

from __future__ import annotations

import datetime
import json
from typing import Any

from pydantic import BaseModel, Field

from haf_tui.store.annotations import delete_run
from haf_tui.store.connection import StoreError
from haf_tui.store.db import Store
from haf_tui.store.derived_runs import children_of
from haf_tui.store.skips import skipped_payload

_SELECT = (
    "SELECT d.dataset_id, d.name, d.source, d.created_at, d.n_instances, "
    "(SELECT count(*) FROM skipped_rows s WHERE s.dataset_id = d.dataset_id) AS n_skipped, "
    "d.meta FROM datasets d"
)


class DatasetRow(BaseModel):
    """A stored dataset: its row in ``datasets`` and how many rows it skipped."""

    dataset_id: str
    name: str
    source: str
    created_at: datetime.datetime
    n_instances: int
    n_skipped: int
    meta: dict[str, Any] = Field(default_factory=dict)

    @property
    def kind(self) -> str:
        """builtin, file, paper, paper-sample (``stored`` when unknown)."""
        return str(self.meta.get("kind", "stored"))


def _row(values: tuple[Any, ...]) -> DatasetRow:
    meta = json.loads(values[6]) if isinstance(values[6], str) else (values[6] or {})
    return DatasetRow(
        dataset_id=values[0],
        name=values[1],
        source=values[2],
        created_at=values[3],
        n_instances=values[4],
        n_skipped=values[5],
        meta=meta if isinstance(meta, dict) else {},
    )


def list_datasets(store: Store) -> list[DatasetRow]:
    """Every stored dataset, oldest first."""
    rows = store.reader().execute(_SELECT + " ORDER BY d.created_at, d.dataset_id").fetchall()
    return [_row(r) for r in rows]


def get_dataset(store: Store, dataset_id: str) -> DatasetRow | None:
    """A stored dataset by its exact id, or None."""
    rows = store.reader().execute(_SELECT + " WHERE d.dataset_id = ?", [dataset_id]).fetchall()
    return _row(rows[0]) if rows else None


def find_datasets(store: Store, name_or_id: str) -> list[DatasetRow]:
    """The datasets ``name_or_id`` names: an exact id, else an exact name, else an id prefix."""
    for where in ("d.dataset_id = ?", "d.name = ?", "starts_with(d.dataset_id, ?)"):
        rows = (
            store.reader()
            .execute(f"{_SELECT} WHERE {where} ORDER BY d.created_at", [name_or_id])
            .fetchall()
        )
        if rows:
            return [_row(r) for r in rows]
    return []


def skipped_rows(
    store: Store, dataset_id: str, limit: int | None = None
) -> list[tuple[int, str, str | None]]:
    """A dataset's skipped rows ``(row, reason, excerpt)`` by row number (the first ``limit``)."""
    sql = (
        "SELECT row_number, reason, excerpt FROM skipped_rows WHERE dataset_id = ? "
        "ORDER BY row_number" + (f" LIMIT {int(limit)}" if limit else "")
    )
    return [(int(r[0]), r[1], r[2]) for r in store.reader().execute(sql, [dataset_id]).fetchall()]


def label_counts(store: Store, dataset_id: str) -> dict[str | None, int]:
    """How many of a dataset's instances have each label (None: no label)."""
    rows = (
        store.reader()
        .execute(
            "SELECT label, count(*) FROM instances WHERE dataset_id = ? GROUP BY label",
            [dataset_id],
        )
        .fetchall()
    )
    return {r[0]: int(r[1]) for r in rows}


def skip_summary(store: Store, dataset_id: str, first: int = 5) -> list[tuple[str, int, list[int]]]:
    """Per skip reason: how many rows, and the first ``first`` row numbers (most rows first)."""
    rows = (
        store.reader()
        .execute(
            "SELECT reason, count(*) AS n, list(row_number ORDER BY row_number)[1:?] "
            "FROM skipped_rows WHERE dataset_id = ? GROUP BY reason ORDER BY n DESC, reason",
            [first, dataset_id],
        )
        .fetchall()
    )
    return [(r[0], int(r[1]), [int(x) for x in r[2]]) for r in rows]


def merge_dataset_meta(store: Store, dataset_id: str, meta: dict[str, Any]) -> None:
    """Add the keys of ``meta`` a stored dataset's metadata lacks (existing keys are kept)."""
    row = get_dataset(store, dataset_id)
    if row is None:
        return
    rest, _ = skipped_payload(meta)
    merged = {**rest, **row.meta}
    if merged != row.meta:
        store.connection.execute(
            "UPDATE datasets SET meta = ? WHERE dataset_id = ?", [json.dumps(merged), dataset_id]
        )


def runs_of_dataset(store: Store, dataset_id: str) -> list[str]:
    """The ids of the runs (re-scores too) that evaluated a dataset, oldest first."""
    rows = (
        store.reader()
        .execute(
            "SELECT run_id FROM runs WHERE dataset_id = ? ORDER BY created_at, run_id",
            [dataset_id],
        )
        .fetchall()
    )
    return [str(r[0]) for r in rows]


def remove_dataset(store: Store, dataset_id: str, *, with_runs: bool = False) -> list[str]:
    """Remove a stored dataset (its row, instances and skipped rows, in one transaction);
    refused in one line (:class:`StoreError`) while runs use it, unless ``with_runs``: then
    those runs are deleted first, each whole (a re-score before the run it re-scores).
    Returns the ids of the runs deleted."""
    runs = runs_of_dataset(store, dataset_id)
    if runs and not with_runs:
        shown = ", ".join(runs[:3]) + (", …" if len(runs) > 3 else "")
        raise StoreError(
            f"dataset {dataset_id} is used by {len(runs)} run(s) ({shown}): they would lose "
            "their texts, so it is kept"
        )
    left = list(runs)
    while left:  # (each pass deletes the runs nothing left re-scores: at least one)
        for run_id in list(left):
            if not {child.run_id for child in children_of(store, run_id)} & set(left):
                delete_run(store, run_id)
                left.remove(run_id)
    with store.transaction() as con:
        for table in ("skipped_rows", "instances", "datasets"):
            con.execute(f"DELETE FROM {table} WHERE dataset_id = ?", [dataset_id])
    return runs
