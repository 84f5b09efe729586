"""The SQL screen's memory under the user's HAF home: the queries run (a JSONL file, newest
last) and the editor's buffers (each one's text and the ``.sql`` file it was opened from or
saved to), kept between sessions as harlequin keeps its buffers.

A file here that cannot be read is set aside (:mod:`haf_tui.store.side_files`), never written
over unread: the one-line notices wait in :func:`take_notices` for the SQL screen to show."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ValidationError

from haf_tui.defaults import haf_home
from haf_tui.store import write_text_atomically
from haf_tui.store.side_files import read_side_file, read_tail, set_aside

HISTORY_FILE = "history.jsonl"
BUFFER_FILE = "buffer.sql"
"""The current buffer's text (what one-buffer versions kept)."""
BUFFERS_FILE = "buffers.json"
"""Every buffer and which one is current."""
HISTORY_KEPT = 1000
"""The newest entries read back (the file itself is only appended to)."""
HISTORY_TAIL = 1 << 20
"""How much of the history file's end is read (bytes): the newest entries are in it."""

_notices: list[str] = []
_blocked: set[Path] = set()
_notices_lock = threading.Lock()


def _note(notice: str | None) -> None:
    if notice:
        with _notices_lock:
            if notice not in _notices:
                _notices.append(notice)


def take_notices() -> list[str]:
    """The one-line notices about the files here not yet shown (each said once)."""
    with _notices_lock:
        taken = list(_notices)
        _notices.clear()
    return taken


class HistoryEntry(BaseModel):
    """One query run from the SQL screen: when, on which database, and its text."""

    at: datetime
    db: str
    sql: str


def home_state_dir() -> Path:
    """``<HAF home>/sql``: where the SQL screen keeps its history and buffer."""
    return haf_home() / "sql"


state_dir = home_state_dir
"""The folder used (tests point it at a temporary folder)."""


def append_history(sql: str, db: Path | str) -> HistoryEntry:
    """Add a query that ran to the history file (a repeat of the newest entry is skipped); a
    history that cannot be kept costs a notice, never the query."""
    entry = HistoryEntry(at=datetime.now(UTC), db=str(db), sql=sql.strip())
    newest = load_history(limit=1)
    if newest and newest[0].sql == entry.sql:
        return newest[0]
    path = state_dir() / HISTORY_FILE
    if path in _blocked:
        return entry
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as handle:
            handle.write(entry.model_dump_json() + "\n")
    except OSError as exc:
        _note(f"the query history ({path}) cannot be written: {exc.strerror or exc}")
    return entry


def load_history(limit: int = HISTORY_KEPT) -> list[HistoryEntry]:
    """The newest ``limit`` queries, newest first, from the file's last
    :data:`HISTORY_TAIL` bytes (a line that is not an entry, bad bytes included, is
    skipped, and stays in the file); a history that is not a regular file is set aside."""
    path = state_dir() / HISTORY_FILE
    try:
        tail = read_tail(path, HISTORY_TAIL)
    except (OSError, ValueError) as exc:
        aside = set_aside(path, "the query history", getattr(exc, "strerror", None) or str(exc))
        if aside.blocked:
            _blocked.add(path)
        _note(aside.notice)
        return []
    entries: list[HistoryEntry] = []
    for raw in reversed(tail.splitlines()):
        if len(entries) >= limit:
            break
        try:
            entries.append(HistoryEntry.model_validate(json.loads(raw.decode("utf-8"))))
        except (UnicodeDecodeError, json.JSONDecodeError, ValidationError):
            continue
    return entries


def search_history(entries: list[HistoryEntry], text: str) -> list[HistoryEntry]:
    """Entries whose SQL holds every word of ``text`` (case-insensitive); repeats dropped."""
    words = text.lower().split()
    seen: set[str] = set()
    found: list[HistoryEntry] = []
    for entry in entries:
        lowered = entry.sql.lower()
        if entry.sql not in seen and all(w in lowered for w in words):
            seen.add(entry.sql)
            found.append(entry)
    return found


def save_buffer(text: str) -> None:
    """Keep the editor's text for the next session (not over a file that could not be read)."""
    path = state_dir() / BUFFER_FILE
    if path in _blocked:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomically(path, text)


def load_buffer() -> str:
    """The editor's text of the last session ("" when there is none, or it was set aside)."""
    path = state_dir() / BUFFER_FILE
    read = read_side_file(path, str, what="the SQL screen's buffer")
    if read.blocked:
        _blocked.add(path)
    _note(read.notice)
    return read.value or ""


class SqlBuffer(BaseModel):
    """One buffer of the editor: its text, and the ``.sql`` file it belongs to (if any)."""

    text: str = ""
    path: str | None = None


class SqlBuffers(BaseModel):
    """The editor's buffers and the index of the one shown."""

    buffers: list[SqlBuffer]
    current: int = 0


def load_buffers() -> SqlBuffers:
    """The buffers of the last session (one from ``buffer.sql``, or an empty one, when there is
    no buffers file); ``current`` is kept within the list. A buffers file that cannot be read
    is set aside (a notice says where), so that saving the buffers never loses it."""
    path = state_dir() / BUFFERS_FILE
    read = read_side_file(path, SqlBuffers.model_validate_json, what="the SQL screen's buffers")
    if read.blocked:
        _blocked.add(path)
    _note(read.notice)
    kept = read.value
    if kept is None:
        return SqlBuffers(buffers=[SqlBuffer(text=load_buffer())])
    if not kept.buffers:
        kept.buffers = [SqlBuffer()]
    kept.current = max(0, min(kept.current, len(kept.buffers) - 1))
    return kept


def save_buffers(kept: SqlBuffers) -> None:
    """Keep every buffer for the next session (a temporary file renamed into place), and the
    current one's text in ``buffer.sql``; never over a file that could not be read nor set
    aside."""
    folder = state_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if folder / BUFFERS_FILE not in _blocked:
            write_text_atomically(folder / BUFFERS_FILE, kept.model_dump_json())
        save_buffer(kept.buffers[kept.current].text)
    except OSError as exc:
        _note(f"the SQL screen's buffers cannot be kept in {folder}: {exc.strerror or exc}")
