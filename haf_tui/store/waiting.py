"""Waiting for a database file another process writes: DuckDB lets one process write a file,
so work that writes (``haf run``, ``haf rescore``, a run or a re-score started in the
workbench) either fails at once with one line naming the holder, or waits for it, saying so in
one line, and starts by itself when the file frees (issue 43 §2).

:func:`wait_for_writer` is the wait: it tries to open the file for writing (``attempt``) and,
while another process holds it, says who (``on_waiting``: the line, each time it changes) and
tries again every :data:`POLL_SECONDS`, until the open succeeds or ``stop`` is set. While a
live holder's note says it still holds the file, no open is tried (an attempt in the workbench
drops its snapshot read, a copy of the file), but one is tried at least every
:data:`NOTE_TRUST_POLLS` polls (a note outliving its file's lock: the PID reused).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from haf_tui.store.errors import StoppedWaitingError, StoreLockedError
from haf_tui.store.holder import describe_holder, other_holder

Opened = TypeVar("Opened")

POLL_SECONDS = 2.0
"""How often a waiting writer looks at the file again."""
NOTE_TRUST_POLLS = 15
"""Polls a live holder's note is believed without trying the file (about 30 s)."""


def held_line(db_path: Path, holder: str) -> str:
    """``haf.duckdb — held by PID 4242 (`haf run …`, run ab12: writing, since 10:01:02)``."""
    return f"{db_path.name} — held by {holder}"


def waiting_line(db_path: Path, holder: str) -> str:
    """The one line a waiting writer shows: ``waiting for haf.duckdb — held by …``."""
    return f"waiting for {held_line(db_path, holder)}…"


def held_error(db_path: Path, error: StoreLockedError, wait_hint: str) -> StoreLockedError:
    """A writer's lock error as the one line: the file, who holds it, what to do."""
    return StoreLockedError(
        f"{held_line(db_path, error.holder)}: {wait_hint}, or use another --db",
        holder=error.holder,
    )


def wait_for_writer(
    attempt: Callable[[], Opened],
    db_path: Path,
    *,
    on_waiting: Callable[[str], None],
    stop: threading.Event | None = None,
    poll_seconds: float = POLL_SECONDS,
) -> Opened:
    """What ``attempt`` opens, once it can (it raises :class:`StoreLockedError` while another
    process holds the file); :class:`StoppedWaitingError` once ``stop`` is set. ``on_waiting`` gets
    the waiting line whenever it changes (another holder, or what it does)."""
    stop = stop or threading.Event()
    shown: str | None = None
    believed = 0
    while True:
        if stop.is_set():
            raise StoppedWaitingError(f"stopped waiting for {db_path.name}: nothing was started")
        note = other_holder(db_path)
        if note is not None and believed < NOTE_TRUST_POLLS:
            believed += 1
            holder = describe_holder(db_path, note.pid)
        else:
            believed = 0
            try:
                return attempt()
            except StoreLockedError as exc:
                holder = exc.holder
        line = waiting_line(db_path, holder)
        if line != shown:
            shown = line
            on_waiting(line)
        stop.wait(poll_seconds)
