"""What the workbench computes from a run's stored results and keeps while the program runs:
a run's instance values and their bootstrap intervals (seeded, so the same values give the same
interval) do not change until the run's rows do, so a screen opened again, or opened by another
screen, shows them without reading or resampling them again.

Every entry is keyed by the database file, the run's id and its
:data:`~haf_tui.store.comparison_readers.RunVersion` (status, last change of its row, its
result and metric rows), and by what else the value depends on (the metric, the bootstrap's
seed, resamples and confidence). A run resumed or re-scored adds rows, so its version changes
and what was kept for the old version is never read again (it ages out, oldest first). Thread
workers share the one cache: a lock guards it; values are computed outside it. The comparison's
statistics are also kept on disk, across processes
(:mod:`haf_tui.reports.statistics_files`); this cache stands in front of those files.

What depends on more than a run's rows (the metrics screen's reports, over every run and every
table) is keyed by the database's state on disk instead (:func:`database_state`): any commit
changes it.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path
from typing import Final, TypeVar

T = TypeVar("T")

CACHE_ENTRIES: Final = 4096
"""Entries kept (a run's values and one interval per metric each count one)."""


class RunCache:
    """A bounded map from keys (database, run, version, …) to what was computed from them."""

    def __init__(self, entries: int = CACHE_ENTRIES) -> None:
        self.entries = entries
        self._found: OrderedDict[Hashable, object] = OrderedDict()
        self._lock = threading.Lock()
        self.computed = 0
        """How many values were computed (a miss): what tests read to see it was kept."""

    def get(self, key: Hashable) -> object | None:
        """The value kept under ``key`` (None: none kept)."""
        with self._lock:
            if key not in self._found:
                return None
            self._found.move_to_end(key)
            return self._found[key]

    def put(self, key: Hashable, value: object) -> None:
        """Keep ``value`` under ``key`` (the oldest entry goes when full)."""
        with self._lock:
            self._found[key] = value
            self._found.move_to_end(key)
            while len(self._found) > self.entries:
                self._found.popitem(last=False)

    def computed_once(self, key: Hashable, compute: Callable[[], T]) -> T:
        """The value under ``key``, computed (outside the lock) and kept when missing."""
        found = self.get(key)
        if found is not None:
            return found  # type: ignore[return-value]  # (put under this key by this function)
        value = compute()
        with self._lock:
            self.computed += 1
        self.put(key, value)
        return value

    def count_computed(self, values: int) -> None:
        """Count ``values`` computed by their caller (a miss it computed and then kept)."""
        with self._lock:
            self.computed += values

    def clear(self) -> None:
        """Forget everything."""
        with self._lock:
            self._found.clear()
            self.computed = 0


RUN_CACHE: Final = RunCache()
"""What is computed from runs, for every screen and app in this process (small values)."""
VALUES_CACHE: Final = RunCache(64)
"""Runs' instance values as read (large: every finished instance's metrics), fewer kept: a run
written while the screen is opened again and again leaves one entry per version."""


RECENT_SECONDS: Final = 2.0
"""A database file changed this recently is not trusted to look changed after its next write
(a write in the same tick of the file system's clock can leave its time and size as they were),
so nothing read from it is kept (:func:`database_state`)."""

DatabaseState = tuple[str, tuple[tuple[int, int, int] | None, ...]]
"""A database file and its write-ahead log as they are on disk: (path, ((mtime, size) or
None for each))."""


def database_state(path: str | Path, *, now: float | None = None) -> DatabaseState | None:
    """What tells this database's contents from every other state of it: the file and its
    write-ahead log's inodes, times and sizes (every commit appends to the log, and a checkpoint
    writes the file and empties the log; another file moved in has another inode). Taken before
    reading, so what is read is at least this new. None when either changed within
    :data:`RECENT_SECONDS` of ``now`` (a run writing, say): keep nothing read then."""
    file = Path(path)
    states = files_state((file, file.with_name(file.name + ".wal")), now=now)
    if states is None or states[0] is None:
        return None
    return str(file.resolve()), states


def files_state(
    paths: Sequence[Path], *, now: float | None = None
) -> tuple[tuple[int, int, int] | None, ...] | None:
    """Each file's inode, time and size (None: no such file), or None when any was changed
    within :data:`RECENT_SECONDS` of ``now`` (a write in the same tick of the file system's
    clock can leave its time and size as they were: not to be trusted yet)."""
    states: list[tuple[int, int, int] | None] = []
    newest = 0
    for part in paths:
        try:
            stat = part.stat()
        except OSError:
            states.append(None)
            continue
        states.append((stat.st_ino, stat.st_mtime_ns, stat.st_size))  # (ino: a file moved in)
        newest = max(newest, stat.st_mtime_ns)
    if (time.time() if now is None else now) - newest / 1e9 < RECENT_SECONDS:
        return None
    return tuple(states)
