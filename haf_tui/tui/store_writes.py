"""How the workbench writes what a researcher keeps (notes, bookmarks, run labels and tags, a
deleted run): one short write on the store opened for writing, then the file is let go again,
unless a run started in the app holds the writer already (the write goes through it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from haf_tui.store import Store
from haf_tui.tui.store_reader import StoreReader

Changed = TypeVar("Changed")


def write_store(
    reader: StoreReader, change: Callable[[Store], Changed], purpose: str = "keeping notes"
) -> Changed:
    """Run ``change`` on the store opened for writing; StoreError (one line, naming the holder)
    when another process holds the file. Call it from a thread worker."""
    with reader.writing(purpose) as store:  # (counted: a run's writer stays open)
        return change(store)
