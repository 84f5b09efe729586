"""The store's errors, in a module of their own: a module that only names them (a query's
error, a command's ``except``) imports no DuckDB (issue 34 §8)."""

from __future__ import annotations

from haf_tui.vocabulary import HafError


class StoreError(HafError, RuntimeError):
    """The database cannot be used as asked (one clear line)."""


class StoreLockedError(StoreError):
    """Another process holds the database file (``holder`` says who, in a few words)."""

    def __init__(self, message: str, *, holder: str = "another process"):
        super().__init__(message)
        self.holder = holder


class StoreWriteError(StoreError):
    """DuckDB could not write (a full disk, a file size limit): what was committed stays."""


class QueryInterruptedError(StoreError):
    """A user's query was stopped (Ctrl-C, the SQL screen's cancel key)."""


class StoppedWaitingError(StoreError):
    """The wait for a database another process writes was stopped (Ctrl-C, a cancel key):
    nothing was started."""
