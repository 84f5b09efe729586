"""Limits on what ``haf serve`` holds for clients: open connections (past the cap the oldest
idle one is closed, or the new one when none is idle; ~20k idle ones exhausted the file
descriptors), a connection that sends no complete request in time is closed, and the log is
one line per event, at most :data:`LOG_LINES_PER_MINUTE` a minute (the rest counted in one
line): a flood wrote 260 MB of log a minute before."""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from typing import Any, Final

LOG_LINES_PER_MINUTE: Final = 20
FIRST_REQUEST_SECONDS: Final = 5.0
"""How long a new connection may take to send its first complete request head."""
KEEP_ALIVE_SECONDS: Final = 5
"""How long an idle keep-alive connection stays open after a response."""

log = logging.getLogger("haf_tui.serve")


def capped_protocol(max_connections: int, first_request_s: float = FIRST_REQUEST_SECONDS) -> Any:
    """uvicorn's h11 protocol with at most ``max_connections`` open: past the cap a new
    connection closes the oldest idle one (no request yet, or between keep-alive requests),
    or is closed itself when none is idle; one that has sent no complete request after
    ``first_request_s`` is closed."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class CappedProtocol(H11Protocol):
        first_request: asyncio.TimerHandle | None = None
        opened: float = 0.0

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)  # type: ignore[arg-type]
            self.opened = time.monotonic()
            if len(self.connections) > max_connections:
                idle = [c for c in self.connections if c is not self and _idle(c)]
                if not idle:
                    log.warning(
                        "%d connections open (the cap), none idle: a new one closed",
                        max_connections,
                    )
                    self.connections.discard(self)
                    transport.abort()  # type: ignore[attr-defined]
                    return
                oldest = min(idle, key=lambda c: getattr(c, "opened", 0.0))
                log.warning(
                    "%d connections open (the cap): the oldest idle one closed", max_connections
                )
                oldest.transport.abort()
                self.connections.discard(oldest)
            self.first_request = self.loop.call_later(first_request_s, self._no_request)

        def _no_request(self) -> None:
            if self.cycle is None and not self.transport.is_closing():
                self.transport.close()

        def connection_lost(self, exc: Exception | None) -> None:
            if self.first_request is not None:
                self.first_request.cancel()
            super().connection_lost(exc)

    return CappedProtocol


def _idle(connection: Any) -> bool:
    """Whether a connection waits for a request: none sent yet, or between two."""
    if connection.transport is None or connection.transport.is_closing():
        return False
    cycle = connection.cycle
    return cycle is None or (
        cycle.response_complete and connection.timeout_keep_alive_task is not None
    )


class RateLimit(logging.Filter):
    """At most ``per_minute`` records a minute; then the number dropped, once, with the
    next record let through."""

    def __init__(self, per_minute: int = LOG_LINES_PER_MINUTE):
        super().__init__()
        self.per_minute = per_minute
        self.window = time.monotonic()
        self.passed = 0
        self.dropped = 0

    def filter(self, record: logging.LogRecord) -> bool:
        now = time.monotonic()
        if now - self.window >= 60:
            if self.dropped:
                record.msg = f"({self.dropped} log lines dropped in the last minute) {record.msg}"
            self.window, self.passed, self.dropped = now, 0, 0
        if self.passed >= self.per_minute:
            self.dropped += 1
            return False
        self.passed += 1
        return True


class OneLine(logging.Formatter):
    """``haf serve: LEVEL message``, an exception as its type and message, no traceback."""

    def __init__(self) -> None:
        super().__init__("haf serve: %(levelname)s %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        line = logging.Formatter.format(self, _without_traceback(record))
        return line.replace("\n", " ")[:500]


def _without_traceback(record: logging.LogRecord) -> logging.LogRecord:
    if not record.exc_info:
        return record
    copy = logging.makeLogRecord(record.__dict__)
    exc = record.exc_info[1]
    copy.msg = f"{record.getMessage()}: {type(exc).__name__}: {exc}"
    copy.args = None
    copy.exc_info = copy.exc_text = None
    copy.stack_info = None
    return copy


def configure_logging() -> None:
    """Every logger (uvicorn's, asyncio's, this server's) to stderr as one line per record,
    warnings and up, rate-limited."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OneLine())
    handler.addFilter(RateLimit())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access", "asyncio"):
        logger = logging.getLogger(name)
        logger.handlers.clear()
        logger.propagate = True
    logging.getLogger("uvicorn.access").setLevel(logging.ERROR)
