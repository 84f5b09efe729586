"""How the TUI reads the store: short-lived connections, so the CLI can use the same file.

Why short-lived: DuckDB lets one process write a file and then no other process may open it
at all, and a read-only connection keeps any process from writing it. A workbench that kept
its connection open for the whole session locked ``haf run`` and ``haf datasets import`` out
while it sat idle. So the app holds the file only while it reads: :meth:`StoreReader.reading`
opens a read-only connection on demand, shares it between the threads that read at the same
time, and closes it about a second after the last one is done (keys pressed in quick
succession reuse it; an idle app holds no lock). A writer started meanwhile waits a few
seconds for that to happen (:func:`haf_tui.store.open_store`). The alternative, one writer
process the CLI hands its work to, would need a server and would still leave ``duckdb`` or any
other tool locked out. While another process writes, reads go to a snapshot (a copy of the
file) kept until :meth:`StoreReader.refresh`. A run started in the app holds the file for
writing only while it runs (:meth:`StoreReader.writable`, :meth:`StoreReader.release_writer`),
and the app's reads go through that connection meanwhile.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any, Literal

from haf_tui.store import (
    Store,
    StoreLockedError,
    default_db_path,
    open_snapshot,
    open_store,
)
from haf_tui.store.holder import holder_note_path
from haf_tui.tui.run_cache import DatabaseState, database_state

IDLE_SECONDS = 1.0
"""How long a read connection stays open after its last reader (quick keys reuse it)."""

Kind = Literal["read", "snapshot", "copy", "write"]
"""What reads go to: the file (read-only), a snapshot (another process writes), a copy (an
older file upgraded to read it), the app's writer."""
FileState = tuple[tuple[int, int] | None, ...]


class StoreReader:
    """Read access to the database for the app; thread-safe (each :meth:`reading` is on a
    cursor of its own)."""

    def __init__(self, db_path: str | Path | None = None, *, idle_seconds: float = IDLE_SECONDS):
        self.path = Path(db_path).expanduser() if db_path else default_db_path()
        self.idle_seconds = idle_seconds
        lock = threading.RLock()
        self._state = threading.Condition(lock)
        self._idle_wake = threading.Condition(lock)  # (the idle closer's alone: not every read's)
        self._store: Store | None = None
        self._kind: Kind | None = None
        self._users = 0
        self._writers = 0  # (uses of the writer: a run here, a note being saved)
        self._opening = False  # (a connection is being opened, outside the lock)
        self._switching = False  # (a writer waits for the readers to finish)
        self._stale = False  # (a snapshot to drop when its last reader is done)
        self._idle_deadline: float | None = None  # (when the file is let go: none, read on)
        self._idle_closer = False  # (a thread waits to let the file go: _close_when_idle)
        self._closer_wakes = 0.0  # (when it wakes next, to see whether it is time)
        self._copied_state: FileState = ()  # (the file when a snapshot or copy was taken)
        self._copied_db_state: DatabaseState | None = None  # (its contents' state, as keyed)
        self._held = threading.local()  # (how many reads this thread has open: nested reads)
        self._reads_started = 0  # (reads begun: :meth:`wait_quiet` sees a new one)

    @property
    def snapshot(self) -> bool:
        """Whether reads go to a snapshot (another process writes the file)."""
        return self._kind == "snapshot"

    @property
    def holds_file(self) -> bool:
        """Whether this app has the database file open now (a snapshot is a copy)."""
        return self._kind in {"read", "write"}

    @property
    def reads_copy(self) -> bool:
        """Whether reads go to a copy of the file (a snapshot, or an older file upgraded)."""
        return self._kind in {"snapshot", "copy"}

    @contextmanager
    def reading(self, *, linger: bool = True) -> Iterator[Store]:
        """The store to read, open while the block runs: the read-only connection (opened on
        demand), the app's writer while a run here writes, or a snapshot while another process
        writes. ``linger=False`` closes it at once when no one else reads (a periodic poll)."""
        store = self._acquire()
        try:
            view = store.on_cursor()  # (threads read at once: each on a cursor of its own)
            try:
                yield view
            finally:
                view.close_cursor()
        finally:
            self._release(linger)

    @contextmanager
    def reading_if_exists(self) -> Iterator[Store | None]:
        """As :meth:`reading`; None when there is no database file yet."""
        if not self.path.exists():
            yield None
            return
        with self.reading() as store:
            yield store

    def wait_quiet(self, quiet: float, timeout: float) -> bool:
        """Wait until no thread has read the store or opened it for ``quiet`` s (at most
        ``timeout`` s in all); whether it was quiet. The app's warm-up waits here between its
        steps (a screen's reads come a few at a time, a worker's moment apart: a quiet spell,
        not one moment without a reader, tells that they are done)."""
        deadline = time.monotonic() + timeout
        with self._state:
            while True:
                unread = self._state.wait_for(
                    lambda: not self._users and not self._opening, deadline - time.monotonic()
                )
                if not unread:
                    return False
                spell = min(quiet, deadline - time.monotonic())
                if not self._state.wait_for(partial(self._read_since, self._reads_started), spell):
                    return spell >= quiet  # (no read started in the spell)

    def _read_since(self, started: int) -> bool:
        return self._reads_started != started

    def _acquire(self) -> Store:
        depth = getattr(self._held, "depth", 0)
        with self._state:
            while self._opening or (self._switching and not depth):
                self._state.wait()
            self._cancel_idle()
            self._reads_started += 1
            self._state.notify_all()
            if self._store is not None:
                self._users += 1
                self._held.depth = depth + 1
                return self._store
            self._opening = True
        try:
            state = self._file_state()
            contents = database_state(self.path)  # (before the copy: it is at least as new)
            kind: Kind = "read"
            try:
                store = open_store(self.path, read_only=True)
                kind = "copy" if store.copied else "read"
            except StoreLockedError:
                store, kind = open_snapshot(self.path), "snapshot"
        except BaseException:
            with self._state:
                self._opening = False
                self._state.notify_all()
            raise
        with self._state:
            self._opening = False
            self._store, self._kind = store, kind  # (a close() meanwhile left it stale)
            self._copied_state = state
            self._copied_db_state = contents
            self._users += 1
            self._held.depth = depth + 1
            self._state.notify_all()
        return store

    def _release(self, linger: bool) -> None:
        self._held.depth = getattr(self._held, "depth", 1) - 1
        with self._state:
            self._users -= 1
            if self._users == 0:
                if self._stale or (self._kind == "read" and not linger):
                    self._close_store()
                elif self._kind == "read":
                    self._start_idle()
            self._state.notify_all()

    def _start_idle(self) -> None:
        """Let the file go :attr:`idle_seconds` from now unless a read begins first (the lock is
        held). One thread waits for that, started by the first read after the file was let go,
        then moved on by each read's end: a thread started at every read's end (a timer) made
        each read of a screen opening wait for it to start, while the main thread drew."""
        self._idle_deadline = deadline = time.monotonic() + self.idle_seconds
        if self._idle_closer and deadline < self._closer_wakes:  # (idle_seconds shortened)
            self._idle_wake.notify_all()
        if not self._idle_closer:  # (set once started: a thread that failed to start is retried)
            name = f"store-idle {id(self):x}"
            threading.Thread(target=self._close_when_idle, name=name, daemon=True).start()
            self._idle_closer = True  # (the lock held: the thread cannot end before this)

    def _close_when_idle(self) -> None:
        """Wait for the deadline and let the file go if no one reads it then; end then, or on
        waking to no deadline (a read began and goes on: its end starts the wait again)."""
        with self._state:
            try:
                while (deadline := self._idle_deadline) is not None:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        self._idle_deadline = None
                        if self._users == 0 and self._kind == "read":
                            self._close_store()
                        break
                    self._closer_wakes = deadline
                    self._idle_wake.wait(left)
            finally:
                self._idle_closer = False

    def _cancel_idle(self) -> None:
        self._idle_deadline = None  # (the closer ends when it next wakes)

    def _close_store(self) -> None:
        """Close what is open (the lock is held by the caller, and no one reads)."""
        self._cancel_idle()
        if self._store is not None:
            self._store.close()
        self._store, self._kind, self._stale, self._writers = None, None, False, 0

    def _take_over(self) -> None:
        """Wait (lock held) until no one reads or opens, keeping new readers out."""
        self._switching = True
        try:
            while self._opening or self._users:
                self._state.wait()
        finally:
            self._switching = False

    @contextmanager
    def writing(
        self, purpose: str = "writing", *, wait_seconds: float | None = None
    ) -> Iterator[Store]:
        """The store opened for writing while the block runs (a note saved), then released."""
        store = self.writable(purpose, wait_seconds=wait_seconds)
        try:
            yield store
        finally:
            self.release_writer()

    def writable(
        self, purpose: str = "run: writing", *, wait_seconds: float | None = None
    ) -> Store:
        """The store opened for writing (a run started in the app), until as many
        :meth:`release_writer` calls; reads go on through cursors of the same connection.
        StoreLockedError (naming the holder) when another process keeps the file
        (``wait_seconds``: how long to wait for it; None: the writer's usual wait)."""
        with self._state:
            if self._store is not None and self._kind == "write":
                self._writers += 1
                return self._store
            self._take_over()
            self._close_store()
            self._opening = True
        try:
            if wait_seconds is None:  # (the writer's usual wait)
                store = open_store(self.path, purpose=purpose)
            else:
                store = open_store(self.path, purpose=purpose, wait_seconds=wait_seconds)
        except BaseException as exc:
            with self._state:
                self._opening = False
                self._state.notify_all()
            if isinstance(exc, StoreLockedError):
                raise StoreLockedError(
                    f"{self.path.name} is in use by {exc.holder}: wait for it to finish, "
                    "or start the app with another --db",
                    holder=exc.holder,
                ) from None
            raise
        with self._state:  # (still opening until here: no reader opens the file meanwhile)
            self._opening = False
            self._store, self._kind, self._stale = store, "write", False
            self._writers = 1
            self._state.notify_all()
        return store

    def release_writer(self) -> None:
        """One use of the writer is done; the last closes it (reads open short-lived again)."""
        with self._state:
            self._writers = max(self._writers - 1, 0)
            if self._kind != "write" or self._writers:
                return
            self._take_over()
            self._close_store()
            self._state.notify_all()

    def _file_state(self) -> FileState:
        """The file, its write-ahead log and its holder note: (mtime, size) or None each."""
        paths = (self.path, self.path.with_name(self.path.name + ".wal"))
        states: list[tuple[int, int] | None] = []
        for path in (*paths, holder_note_path(self.path)):
            try:
                stat = path.stat()
            except OSError:
                states.append(None)
            else:
                states.append((stat.st_mtime_ns, stat.st_size))
        return tuple(states)

    def database_state(self) -> DatabaseState | None:
        """The state of what the next read reads (:func:`~haf_tui.tui.run_cache.database_state`,
        the key of what is kept from it), taken before reading: the file's own, or, while reads
        go to a snapshot or a copy, the file's when it was copied (another process may have
        written the file since; a value read from the copy kept under the file's newer state
        was shown again after the copy was taken anew). A copy dropped meanwhile is taken anew
        from a file at least as new as this; a copy being taken is waited for (the file's
        state now may be newer than the copy's)."""
        with self._state:
            while self._opening:
                self._state.wait()
            if self._store is not None and self._kind in {"snapshot", "copy"}:
                return self._copied_db_state  # (a stale one too: readers still get it)
        return database_state(self.path)

    def refresh(self) -> None:
        """Read a fresh copy next time when reading a snapshot or a copy and the file changed
        since it was taken (the copy sees the rows a writing process committed since, or the
        file itself once that process is done); an open connection of the file itself already
        sees every committed row."""
        with self._state:
            if self._kind not in {"snapshot", "copy"} or self._file_state() == self._copied_state:
                return
            if self._users:
                self._stale = True
            else:
                self._close_store()

    def query_user(
        self, sql: str, parameters: Any = None
    ) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Run SQL a user wrote: reading statements only, on the locked-down connection."""
        with self.reading() as store:
            return store.query_user(sql, parameters)

    def close(self) -> None:
        """Close the connection now, or (a read still going) when that read is done."""
        with self._state:
            if self._users or self._opening:
                self._cancel_idle()
                self._stale = True
            else:
                self._close_store()
            self._idle_wake.notify_all()  # (a closer waiting ends now)
