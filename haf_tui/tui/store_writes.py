"""How the workbench writes what a researcher keeps (notes, bookmarks, run labels and tags, a
deleted run): one short write on the store opened for writing, then the file is let go again,
unless a run started in the app holds the writer already (the write goes through it).

An annotation (a label, tags, a note, a bookmark) is never refused because another process
writes the file: :func:`write_or_keep` checks it on what can be read and keeps it pending
(``store/pending_annotations.py``), and :func:`store_kept` stores what is pending once a
writer can be had (the app tries every few seconds, and when it starts)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TypeVar

from haf_tui.store import Store, StoreLockedError
from haf_tui.store.holder import read_holder_note
from haf_tui.store.pending_annotations import PendingAnnotation, apply, check, pending, queue
from haf_tui.store.pending_annotations import store_pending as store_queued
from haf_tui.tui.store_reader import StoreReader

Changed = TypeVar("Changed")

PENDING_PURPOSE = "storing pending annotations"


def write_store(
    reader: StoreReader,
    change: Callable[[Store], Changed],
    purpose: str = "keeping notes",
    *,
    wait_seconds: float | None = None,
) -> Changed:
    """Run ``change`` on the store opened for writing; StoreError (one line, naming the holder)
    when another process holds the file. Call it from a thread worker."""
    with reader.writing(purpose, wait_seconds=wait_seconds) as store:  # (counted: a run's
        return change(store)  # writer stays open)


def write_or_keep(reader: StoreReader, item: PendingAnnotation, purpose: str) -> bool:
    """Store ``item`` now; while another process holds the file, check it on what can be read
    (StoreError, one line, when it cannot be stored at all) and keep it pending. Returns
    whether it is pending. Call it from a thread worker."""
    holder = read_holder_note(reader.path)  # (a writer that says so: no use waiting for it)
    wait = 0.0 if holder is not None and holder.pid != os.getpid() else None
    try:
        write_store(
            reader, lambda store: apply(store, check(store, item)), purpose, wait_seconds=wait
        )
    except StoreLockedError:
        with reader.reading() as store:
            checked = check(store, item)
        queue(checked)
        return True
    return False


def store_kept(
    reader: StoreReader,
) -> tuple[list[PendingAnnotation], list[tuple[PendingAnnotation, str]]] | None:
    """Store the annotations pending for the app's database, when a writer can be had at once
    (None: none pending, or the file is still held). Returns those stored and those dropped
    with why. Call it from a thread worker."""
    if not pending(reader.path):
        return None
    if reader.snapshot and read_holder_note(reader.path) is not None:
        return None  # (still held: trying would only drop the snapshot read)

    def write(change: Callable[[Store], None]) -> None:
        write_store(reader, change, PENDING_PURPOSE, wait_seconds=0)

    try:
        return store_queued(reader.path, write)
    except StoreLockedError:
        return None
