"""Who holds a database file: a process that opens it for writing leaves a note next to it
(``<db>.holder.json``: PID, command line, what it is doing), removed when it closes the file;
a locked file's one-line error names the holder's PID, its command line (``/proc``) and,
from a live note, what it is doing (:func:`describe_holder`).

A note is this process's alone: only the process that wrote it changes or removes it, and a
note of another PID is never told as the lock holder's. It does not outlive its process: a
SIGTERM (the default action: the process ends) and an exit without closing the store remove
the notes this process still has, then the signal ends the process as before.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError


def pid_alive(pid: int) -> bool:
    """Whether a process with this id runs on this host."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


HOLDER_SUFFIX = ".holder.json"
"""The note a writing process leaves next to the database: ``<db>.holder.json``."""
MAX_COMMAND = 80


class HolderNote(BaseModel):
    """What a process that holds a database for writing says about itself."""

    model_config = ConfigDict(frozen=True)

    pid: int
    command: str
    purpose: str
    started_at: datetime


def holder_note_path(db_path: Path) -> Path:
    """Where the holder of ``db_path`` leaves its note."""
    return db_path.with_name(db_path.name + HOLDER_SUFFIX)


def process_command(pid: int) -> str | None:
    """A process's command line, short (``haf run --model m.gguf``); None where unknown."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    args = [arg for arg in raw.decode(errors="replace").split("\0") if arg]
    if len(args) > 1 and Path(args[0]).name.startswith("python"):
        args = args[2:] if args[1] == "-m" else args[1:]  # (python …/bin/haf tui: haf tui)
    if not args:
        return None
    args[0] = Path(args[0]).name
    text = " ".join(" ".join(args).split())
    return text if len(text) <= MAX_COMMAND else text[: MAX_COMMAND - 1] + "…"


def read_holder_note(db_path: Path) -> HolderNote | None:
    """The note of the live process that holds ``db_path``; None if none (or a stale one)."""
    try:
        note = HolderNote.model_validate_json(holder_note_path(db_path).read_text())
    except (OSError, ValueError, ValidationError):
        return None
    return note if pid_alive(note.pid) else None


def _write_note(path: Path, note: HolderNote) -> None:
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    with contextlib.suppress(OSError):  # (a folder we cannot write: no note, still works)
        temporary.write_text(json.dumps(note.model_dump(mode="json")))
        os.replace(temporary, path)


_LIVE_NOTES: dict[Path, int] = {}
"""The databases whose note this process wrote and has not removed, with its PID then (a
forked child inherits the dict, not the notes)."""
_cleanup_installed = False


def _remove_note(db_path: Path, pid: int) -> None:
    """Remove ``db_path``'s note if it is ``pid``'s (and this process is ``pid``)."""
    _LIVE_NOTES.pop(db_path, None)
    if os.getpid() != pid:
        return
    current = read_holder_note(db_path)
    if current is None or current.pid == pid:
        with contextlib.suppress(OSError):
            holder_note_path(db_path).unlink(missing_ok=True)


def _remove_live_notes() -> None:
    for db_path, pid in list(_LIVE_NOTES.items()):
        _remove_note(db_path, pid)


def _on_sigterm(signum: int, _frame: object) -> None:
    """SIGTERM where nothing else handles it: this process's notes go, then the signal's
    default action (the process ends, its status says SIGTERM)."""
    _remove_live_notes()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def _install_cleanup() -> None:
    """Notes removed at exit (registered once per process) and on SIGTERM: checked at every
    note written, since a program may have set SIGTERM back to its default since the last
    (only where SIGTERM has its default action and this is the main thread: a program's own
    handler stays, and it closes its stores itself)."""
    global _cleanup_installed
    if not _cleanup_installed:
        _cleanup_installed = True
        atexit.register(_remove_live_notes)
        os.register_at_fork(
            before=_block_sigterm, after_in_parent=_unblock_sigterm, after_in_child=_forked
        )
    is_main = threading.current_thread() is threading.main_thread()
    if is_main and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _on_sigterm)


_blocked_before_fork = False


def _block_sigterm() -> None:
    """Before a fork: SIGTERM held back, so that one sent to the child before its Python
    state is ready (Python forgets a signal that arrives then) waits for :func:`_forked`."""
    global _blocked_before_fork
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    _blocked_before_fork = signal.SIGTERM in before


def _unblock_sigterm() -> None:
    """After a fork: SIGTERM let through again (unless the program held it back itself)."""
    if not _blocked_before_fork:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})


def _forked() -> None:
    """In a child forked from a holder: no note is its own, and SIGTERM has its default
    action again (then let through: one sent already ends the child); a store the child
    opens installs the cleanup anew."""
    global _cleanup_installed
    _LIVE_NOTES.clear()
    _cleanup_installed = False
    if signal.getsignal(signal.SIGTERM) is _on_sigterm:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _unblock_sigterm()


def write_holder_note(db_path: Path, purpose: str) -> Callable[[], None]:
    """Say that this process holds ``db_path`` and what for; returns the function that
    removes the note (only while it is still this process's)."""
    pid = os.getpid()
    note = HolderNote(
        pid=pid, command=process_command(pid) or "", purpose=purpose, started_at=datetime.now()
    )
    path = holder_note_path(db_path)
    _install_cleanup()
    _write_note(path, note)
    _LIVE_NOTES[db_path] = pid

    def remove() -> None:
        _remove_note(db_path, pid)

    return remove


def update_holder_purpose(db_path: Path, purpose: str) -> None:
    """Change what this process's note says it is doing (no note of this process: nothing)."""
    note = read_holder_note(db_path)
    if note is not None and note.pid == os.getpid() and note.purpose != purpose:
        _write_note(holder_note_path(db_path), note.model_copy(update={"purpose": purpose}))


def describe_holder(db_path: Path, pid: int | None) -> str:
    """Who holds ``db_path``, in a few words: ``PID 4242 (`haf run --model m.gguf`, run
    ab12cd: writing, since 06:01:02)``; what follows the command comes from its note."""
    note = read_holder_note(db_path)
    if pid is None and note is not None:
        pid = note.pid
    if pid is None:
        return "another process"
    own = note if note is not None and note.pid == pid else None
    command = process_command(pid) or (own.command if own is not None else "")
    parts = [f"`{command}`"] if command else []
    if own is not None:
        parts.append(f"{own.purpose}, since {own.started_at:%H:%M:%S}")
    return f"PID {pid} ({', '.join(parts)})" if parts else f"PID {pid}"


def other_holder(db_path: Path) -> HolderNote | None:
    """The note of another live process that holds ``db_path`` for writing (this process's
    own, or none, or a stale one: None)."""
    note = read_holder_note(db_path)
    return note if note is not None and note.pid != os.getpid() else None
