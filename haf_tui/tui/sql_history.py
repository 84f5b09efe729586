"""The SQL screen's memory under the user's HAF home: the queries run (a JSONL file, newest
last) and the editor's buffers (each one's text and the ``.sql`` file it was opened from or
saved to), kept between sessions as harlequin keeps its buffers."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ValidationError

from haf_tui.defaults import haf_home
from haf_tui.store import write_text_atomically

HISTORY_FILE = "history.jsonl"
BUFFER_FILE = "buffer.sql"
"""The current buffer's text (what one-buffer versions kept)."""
BUFFERS_FILE = "buffers.json"
"""Every buffer and which one is current."""
HISTORY_KEPT = 1000
"""The newest entries read back (the file itself is only appended to)."""


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
    """Add a query that ran to the history file (a repeat of the newest entry is skipped)."""
    entry = HistoryEntry(at=datetime.now(UTC), db=str(db), sql=sql.strip())
    newest = load_history(limit=1)
    if newest and newest[0].sql == entry.sql:
        return newest[0]
    folder = state_dir()
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / HISTORY_FILE).open("a", encoding="utf-8") as handle:
        handle.write(entry.model_dump_json() + "\n")
    return entry


def load_history(limit: int = HISTORY_KEPT) -> list[HistoryEntry]:
    """The newest ``limit`` queries, newest first (unreadable lines are skipped)."""
    path = state_dir() / HISTORY_FILE
    if not path.is_file():
        return []
    entries: list[HistoryEntry] = []
    for line in reversed(path.read_text(encoding="utf-8").splitlines()):
        if len(entries) >= limit:
            break
        try:
            entries.append(HistoryEntry.model_validate(json.loads(line)))
        except (json.JSONDecodeError, ValidationError):
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
    """Keep the editor's text for the next session."""
    folder = state_dir()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / BUFFER_FILE).write_text(text, encoding="utf-8")


def load_buffer() -> str:
    """The editor's text of the last session ("" when there is none)."""
    path = state_dir() / BUFFER_FILE
    try:
        return path.read_text(encoding="utf-8")
    except (FileNotFoundError, UnicodeDecodeError):
        return ""


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
    no readable buffers file); ``current`` is kept within the list."""
    path = state_dir() / BUFFERS_FILE
    try:
        kept = SqlBuffers.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValidationError):
        return SqlBuffers(buffers=[SqlBuffer(text=load_buffer())])
    if not kept.buffers:
        kept.buffers = [SqlBuffer()]
    kept.current = max(0, min(kept.current, len(kept.buffers) - 1))
    return kept


def save_buffers(kept: SqlBuffers) -> None:
    """Keep every buffer for the next session (a temporary file renamed into place), and the
    current one's text in ``buffer.sql``."""
    folder = state_dir()
    folder.mkdir(parents=True, exist_ok=True)
    write_text_atomically(folder / BUFFERS_FILE, kept.model_dump_json())
    save_buffer(kept.buffers[kept.current].text)
