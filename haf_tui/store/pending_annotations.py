"""Annotations kept while another process writes the database (issue 25 §5): a run label or
tags, an instance's note or bookmark that cannot be stored now because ``haf run`` (or any
other writer) holds the file. They are checked at once against what can be read (the run, the
instance, the label's length, the tags), kept in ``$HAF_HOME/pending-annotations.jsonl`` (one
JSON object per line, the database named in each; rewritten to a temporary file renamed into
place, under a file lock), shown as pending, and stored by :func:`store_pending` as soon as a
writer can be had: the workbench tries every few seconds and when it starts.

The queue is a side file (:mod:`haf_tui.store.side_files`): one that cannot be read (bad bytes,
a folder or a FIFO in its place, more than :data:`PENDING_LIMIT`) is set aside, never written
over unread, and said once (:func:`take_notices`); one that did not change since it was last
read (its stamp) is not read again, however often the workbench asks.

Why a queue and not a second database for annotations that no run writer holds: the notes stay
in the one database, where ``haf query --name notes``, the SQL screen, reports and deleting a
run see them (DuckDB's sandbox reads no other file), and a queue is only ever a few lines.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import threading
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from haf_tui.defaults import haf_home
from haf_tui.store.annotations import (
    MAX_LABEL,
    check_instance,
    parse_tags,
    run_full_id,
    save_note,
    set_bookmark,
    set_run_label,
    set_run_tags,
)
from haf_tui.store.connection import StoreError
from haf_tui.store.db import Store
from haf_tui.store.side_files import FileStamp, read_side_file, stamp_of

PENDING_FILE = "pending-annotations.jsonl"
"""The queue's file name under ``$HAF_HOME``."""

Kind = Literal["label", "tags", "note", "bookmark"]

PENDING_LIMIT = 1 << 20
"""The largest queue read (bytes): a queue is a few lines, a bigger file is none of ours."""

_LOCK = threading.Lock()  # (threads of this process; the file lock: other processes)
_read_cache: dict[Path, tuple[FileStamp, list[str]]] = {}
_blocked: set[Path] = set()
_notices: list[str] = []


class PendingAnnotation(BaseModel):
    """One annotation waiting for the database: which database, what, on which run (and
    instance), and the value (``text``: label, tags or note; ``bookmarked``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    db: str
    kind: Kind
    run_id: str
    instance_id: str | None = None
    text: str = ""
    bookmarked: bool = False
    queued_at: datetime

    @property
    def key(self) -> tuple[str, str, str, str | None]:
        """What it annotates: a later one of the same key replaces it."""
        return (self.db, self.kind, self.run_id, self.instance_id)

    def describe(self) -> str:
        """A few words: ``label of run r1``, ``note on t00003 (run r1)``."""
        if self.instance_id is None:
            return f"{self.kind} of run {self.run_id}"
        return f"{self.kind} on {self.instance_id} (run {self.run_id})"


def pending_path() -> Path:
    """Where the queue is kept."""
    return haf_home() / PENDING_FILE


def db_key(db_path: Path) -> str:
    """How a database is named in the queue (its resolved path)."""
    return str(Path(db_path).expanduser().resolve())


def annotation(
    db_path: Path,
    kind: Kind,
    run_id: str,
    instance_id: str | None = None,
    *,
    text: str = "",
    bookmarked: bool = False,
) -> PendingAnnotation:
    """An annotation of ``db_path`` made now."""
    return PendingAnnotation(
        db=db_key(db_path),
        kind=kind,
        run_id=run_id,
        instance_id=instance_id,
        text=text,
        bookmarked=bookmarked,
        queued_at=datetime.now(),
    )


def check(store: Store, item: PendingAnnotation) -> PendingAnnotation:
    """StoreError (one line) unless ``item`` can be stored in ``store`` (read-only will do):
    the run (and instance) exist, the label or tags are valid. Returns it with the run's full
    id."""
    if item.kind == "label" and len(" ".join(item.text.split())) > MAX_LABEL:
        raise StoreError(f"a label has at most {MAX_LABEL} characters")
    if item.kind == "tags":
        parse_tags(item.text)
    if item.instance_id is not None:
        check_instance(store, item.run_id, item.instance_id)
        return item
    return item.model_copy(update={"run_id": run_full_id(store, item.run_id)})


def apply(store: Store, item: PendingAnnotation) -> None:
    """Store ``item`` (a store opened for writing)."""
    if item.kind == "label":
        set_run_label(store, item.run_id, item.text)
    elif item.kind == "tags":
        set_run_tags(store, item.run_id, item.text)
    elif item.kind == "note" and item.instance_id is not None:
        save_note(store, item.run_id, item.instance_id, item.text)
    elif item.kind == "bookmark" and item.instance_id is not None:
        set_bookmark(store, item.run_id, item.instance_id, item.bookmarked)


@contextlib.contextmanager
def _locked_queue() -> Iterator[Path]:
    """The queue's file, locked against this process's threads and other processes."""
    path = pending_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with _LOCK, open(path.with_name(PENDING_FILE + ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield path
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _read_lines(path: Path) -> list[str]:
    """The queue's lines: read again only when its file changed; a file that cannot be read
    is set aside (a notice said once), or, when it cannot be, left as it is and never written
    over (:class:`StoreError` for a write)."""
    stamp = stamp_of(path)
    cached = _read_cache.get(path)
    if stamp is not None and cached is not None and cached[0] == stamp:
        return list(cached[1])
    read = read_side_file(path, _lines, what="the pending annotations", limit=PENDING_LIMIT)
    if read.notice and read.notice not in _notices:
        _notices.append(read.notice)
    if read.blocked:
        _blocked.add(path)
    else:
        _blocked.discard(path)
    lines = read.value or []
    if read.stamp is not None:
        _read_cache[path] = (read.stamp, lines)
    else:
        _read_cache.pop(path, None)
    return list(lines)


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def take_notices() -> list[str]:
    """The one-line notices about the queue's file not yet shown (each said once)."""
    with _LOCK:
        taken = list(_notices)
        _notices.clear()
    return taken


@functools.lru_cache(maxsize=4096)  # (the poller asks every few seconds: parsed once)
def _parse(line: str) -> PendingAnnotation | None:
    """A line of the queue (None: not one of ours; such a line is kept as it is)."""
    try:
        return PendingAnnotation.model_validate_json(line)
    except (ValidationError, ValueError):
        return None


def _write_lines(path: Path, lines: list[str]) -> None:
    """Replace the queue (a temporary file renamed into place; none left when empty); never
    over a file that could not be read."""
    if path in _blocked:
        raise StoreError(f"the pending annotations ({path}) cannot be read: not written over")
    if not lines:
        path.unlink(missing_ok=True)
        return
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    temporary.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    os.replace(temporary, path)


def queue(item: PendingAnnotation) -> None:
    """Keep ``item`` until it can be stored (replacing a pending one of the same key)."""
    with _locked_queue() as path:
        kept = [line for line in _read_lines(path) if _key_of(line) != item.key]
        kept.append(json.dumps(item.model_dump(mode="json")))
        _write_lines(path, kept)


def _key_of(line: str) -> tuple[str, str, str, str | None] | None:
    parsed = _parse(line)
    return parsed.key if parsed is not None else None


def pending(db_path: Path) -> list[PendingAnnotation]:
    """The annotations of ``db_path`` waiting, oldest first."""
    path = pending_path()
    key = db_key(db_path)
    with _LOCK:
        lines = _read_lines(path)
    items = (_parse(line) for line in lines)
    return [item for item in items if item is not None and item.db == key]


def store_pending(
    db_path: Path, write: Callable[[Callable[[Store], None]], None]
) -> tuple[list[PendingAnnotation], list[tuple[PendingAnnotation, str]]]:
    """Store the annotations of ``db_path`` waiting, through ``write`` (runs its argument on
    the store opened for writing; raises StoreError when it cannot have it: then every one
    stays). Returns those stored and those dropped with why (their run or instance is gone);
    each leaves the queue only once stored or dropped (storing one again is harmless)."""
    stored: list[PendingAnnotation] = []
    dropped: list[tuple[PendingAnnotation, str]] = []
    items = pending(db_path)
    if not items:
        return stored, dropped

    def store_all(store: Store) -> None:
        for item in items:
            try:
                check(store, item)
            except StoreError as exc:  # (its run or instance gone: nothing to annotate)
                dropped.append((item, str(exc).splitlines()[0]))
                continue
            apply(store, item)  # (a failed write: every one not yet stored stays queued)
            stored.append(item)

    write(store_all)
    done = {json.dumps(item.model_dump(mode="json")) for item in stored}
    done |= {json.dumps(item.model_dump(mode="json")) for item, _ in dropped}
    with _locked_queue() as path:  # (one queued meanwhile stays)
        kept = [line for line in _read_lines(path) if not _is_done(line, done)]
        _write_lines(path, kept)
    return stored, dropped


def _is_done(line: str, done: set[str]) -> bool:
    parsed = _parse(line)
    return parsed is not None and json.dumps(parsed.model_dump(mode="json")) in done
