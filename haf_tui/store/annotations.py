"""What researchers keep: a note and a bookmark on an instance of a run (``instance_notes``),
a run's label and tags, and deleting a run (every row of it, in one transaction).

Writes need a store opened for writing; each is one transaction on a cursor of its own, so
it is safe beside a run the same process writes on the store's connection (another thread). A
run being written cannot be deleted.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import duckdb
from pydantic import BaseModel, ConfigDict

from haf_tui.store.connection import StoreError, StoreWriteError
from haf_tui.store.db import Store
from haf_tui.store.derived_runs import children_of
from haf_tui.vocabulary import first_line

MAX_LABEL = 80
"""The longest run label (it is shown in the runs list)."""
MAX_TAG = 32
"""The longest single tag."""


class InstanceNote(BaseModel):
    """A researcher's note and bookmark on one instance of a run."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    instance_id: str
    note: str | None = None
    bookmarked: bool = False
    updated_at: datetime | None = None
    pending: bool = False
    """Kept while another process writes the database, not stored yet (the workbench's)."""


@contextmanager
def _transaction(store: Store) -> Iterator[duckdb.DuckDBPyConnection]:
    """A transaction on a cursor of its own (commits on success, rolls back on any error)."""
    with store.reader() as cursor:
        try:
            cursor.execute("BEGIN TRANSACTION")
            try:
                yield cursor
            except BaseException:
                with contextlib.suppress(duckdb.Error):
                    cursor.execute("ROLLBACK")
                raise
            cursor.execute("COMMIT")
        except duckdb.Error as exc:
            raise StoreWriteError(
                f"cannot write to database {store.path.name}: {first_line(exc)}"
            ) from exc


def instance_notes(store: Store, run_id: str) -> dict[str, InstanceNote]:
    """Instance id → its note and bookmark, for one run."""
    with store.reader() as cursor:
        rows = cursor.execute(
            "SELECT run_id, instance_id, note, bookmarked, updated_at FROM instance_notes "
            "WHERE run_id = ?",
            [run_id],
        ).fetchall()
    return {str(row[1]): _note(row) for row in rows}


def _note(row: tuple[Any, ...]) -> InstanceNote:
    run_id, instance_id, note, bookmarked, updated_at = row
    return InstanceNote(
        run_id=run_id,
        instance_id=instance_id,
        note=note,
        bookmarked=bool(bookmarked),
        updated_at=updated_at,
    )


def _check_instance(store: Store, run_id: str, instance_id: str) -> None:
    """StoreError unless the run exists and its dataset holds the instance."""
    with store.reader() as cursor:
        row = cursor.execute(
            "SELECT (SELECT count(*) FROM runs WHERE run_id = $run), "
            "(SELECT count(*) FROM runs r JOIN instances i USING (dataset_id) "
            " WHERE r.run_id = $run AND i.instance_id = $instance)",
            {"run": run_id, "instance": instance_id},
        ).fetchone()
    if not row or not row[0]:
        raise StoreError(f"no run {run_id!r} in {store.path.name}")
    if not row[1]:
        raise StoreError(f"run {run_id} has no instance {instance_id!r}")


def check_instance(store: Store, run_id: str, instance_id: str) -> None:
    """StoreError unless the run exists and its dataset holds the instance."""
    _check_instance(store, run_id, instance_id)


def _keep(store: Store, run_id: str, instance_id: str, note: str | None, mark: bool) -> None:
    """Store the note and the bookmark of an instance (no row when both are empty)."""
    _check_instance(store, run_id, instance_id)
    key = [run_id, instance_id]
    with _transaction(store) as con:
        con.execute("DELETE FROM instance_notes WHERE run_id = ? AND instance_id = ?", key)
        if note or mark:
            con.execute(
                "INSERT INTO instance_notes (run_id, instance_id, note, bookmarked) "
                "VALUES (?, ?, ?, ?)",
                [*key, note or None, mark],
            )


def _current(store: Store, run_id: str, instance_id: str) -> InstanceNote:
    with store.reader() as cursor:
        row = cursor.execute(
            "SELECT run_id, instance_id, note, bookmarked, updated_at FROM instance_notes "
            "WHERE run_id = ? AND instance_id = ?",
            [run_id, instance_id],
        ).fetchone()
    return _note(row) if row else InstanceNote(run_id=run_id, instance_id=instance_id)


def set_bookmark(store: Store, run_id: str, instance_id: str, bookmarked: bool) -> InstanceNote:
    """Bookmark an instance (or take the bookmark off); its note stays."""
    note = _current(store, run_id, instance_id).note
    _keep(store, run_id, instance_id, note, bookmarked)
    return _current(store, run_id, instance_id)


def save_note(store: Store, run_id: str, instance_id: str, text: str) -> InstanceNote:
    """Keep a note on an instance (blank: removes it); its bookmark stays."""
    note = text.strip() or None
    mark = _current(store, run_id, instance_id).bookmarked
    _keep(store, run_id, instance_id, note, mark)
    return _current(store, run_id, instance_id)


# ---------------------------------------------------------------- runs


def parse_tags(text: str) -> tuple[str, ...]:
    """``"llama, 8b , baseline"`` → ``("llama", "8b", "baseline")`` (blank and repeated ones
    dropped); StoreError for a tag too long."""
    tags: list[str] = []
    for part in text.split(","):
        tag = " ".join(part.split())
        if len(tag) > MAX_TAG:
            raise StoreError(f"tag {tag[:20]!r}… is longer than {MAX_TAG} characters")
        if tag and tag not in tags:
            tags.append(tag)
    return tuple(tags)


def _run_id(store: Store, run_id: str) -> str:
    """The run's full id (StoreError when there is none)."""
    return store.get_run(run_id).run_id


def run_full_id(store: Store, run_id: str) -> str:
    """The run's full id (StoreError when there is none)."""
    return _run_id(store, run_id)


def set_run_label(store: Store, run_id: str, label: str) -> str | None:
    """Name a run (blank: no label); returns the label stored."""
    shown = " ".join(label.split()) or None
    if shown is not None and len(shown) > MAX_LABEL:
        raise StoreError(f"a label has at most {MAX_LABEL} characters (this one {len(shown)})")
    full_id = _run_id(store, run_id)
    with _transaction(store) as con:
        con.execute("UPDATE runs SET label = ? WHERE run_id = ?", [shown, full_id])
    return shown


def set_run_tags(store: Store, run_id: str, text: str) -> tuple[str, ...]:
    """Tag a run with comma-separated tags (blank: none); returns the tags stored."""
    tags = parse_tags(text)
    full_id = _run_id(store, run_id)
    with _transaction(store) as con:
        con.execute("UPDATE runs SET tags = ? WHERE run_id = ?", [list(tags) or None, full_id])
    return tags


def run_label_and_tags(store: Store, run_id: str) -> tuple[str | None, tuple[str, ...]]:
    """A run's label and tags (what the rename and tag boxes start from)."""
    with store.reader() as cursor:
        row = cursor.execute("SELECT label, tags FROM runs WHERE run_id = ?", [run_id]).fetchone()
    if row is None:
        raise StoreError(f"no run {run_id!r} in {store.path.name}")
    return row[0], tuple(row[1] or ())


def run_is_writing(store: Store, run_id: str) -> bool:
    """Whether a live process is writing the run (status running, writer alive)."""
    with store.reader() as cursor:
        row = cursor.execute("SELECT status FROM runs WHERE run_id = ?", [run_id]).fetchone()
    running = row is not None and row[0] == "running"
    return running and run_id not in store.orphaned_runs()


def run_tables(store: Store) -> list[str]:
    """Every table with a ``run_id`` column (``runs`` last)."""
    with store.reader() as cursor:
        rows = cursor.execute(
            "SELECT DISTINCT table_name FROM information_schema.columns "
            "WHERE column_name = 'run_id' AND table_schema = 'main' ORDER BY table_name"
        ).fetchall()
    names = [str(r[0]) for r in rows if r[0] != "runs"]
    return [*names, "runs"]


def delete_run(store: Store, run_id: str) -> dict[str, int]:
    """Delete every row of a run in every table, in one transaction; refused (StoreError)
    while the run is writing. Returns the rows deleted per table (tables with none left out).
    The run's dataset stays (other runs may share it)."""
    full_id = _run_id(store, run_id)
    if run_is_writing(store, full_id):
        raise StoreError(f"run {full_id} is being written: cancel it first, then delete it")
    derived = [d.run_id for d in children_of(store, full_id)]
    if derived:  # (they read this run's answers and tokens)
        raise StoreError(
            f"run {full_id} has re-scored runs ({', '.join(derived)}) that read its answers: "
            "delete them first"
        )
    deleted: dict[str, int] = {}
    tables = run_tables(store)
    with _transaction(store) as con:
        for table in tables:  # (names from the catalog, not from the user)
            row = con.execute(f'DELETE FROM "{table}" WHERE run_id = ?', [full_id]).fetchone()
            if row and row[0]:
                deleted[table] = int(row[0])
    return deleted
