"""Limits on what ``haf serve`` holds for clients: open connections (past the cap the one
that has waited longest on its client goes: idle, or still sending its request; the new one
only when every other is being answered; ~20k idle ones exhausted the file descriptors),
every request's head and body each within their time (the first request and each kept-alive
one alike: 64 connections dripping a body, or a second request head dripped on a kept-alive
connection, locked every other client out for minutes), and the log one line per event, at
most :data:`LOG_LINES_PER_MINUTE` a minute (the rest counted in one line): a flood wrote
260 MB of log a minute before."""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from typing import Any, Final

LOG_LINES_PER_MINUTE: Final = 20
FIRST_REQUEST_SECONDS: Final = 5.0
"""How long a request's head may take to come whole, from the connection's start or, on a
kept-alive connection, from the request's first byte."""
BODY_SECONDS: Final = 30.0
"""How long a request's body may take to come whole once its head came (haf's client sends
at most a few hundred kilobytes)."""
KEEP_ALIVE_SECONDS: Final = 5
"""How long an idle keep-alive connection stays open after a response."""

log = logging.getLogger("haf_tui.serve")


def capped_protocol(
    max_connections: int,
    first_request_s: float = FIRST_REQUEST_SECONDS,
    body_s: float = BODY_SECONDS,
) -> Any:
    """uvicorn's h11 protocol with at most ``max_connections`` open: past the cap a new
    connection closes the one that has waited longest on its client (no complete request
    yet, or between keep-alive requests), or is closed itself when every other one is being
    answered; a connection whose request head has not come whole ``first_request_s`` after
    it began (the connection, or its first byte on a kept-alive one), or whose body has not
    ``body_s`` after its head, is closed."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class CappedProtocol(H11Protocol):
        deadline: asyncio.TimerHandle | None = None
        receiving: str = ""
        """What the deadline bounds: "head", "body", or "" (none: idle, or being answered)."""
        opened: float = 0.0
        """When the connection began to wait on its client (made, or its last answer sent)."""

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)  # type: ignore[arg-type]
            self.opened = time.monotonic()
            if len(self.connections) > max_connections:
                waiting = [c for c in self.connections if c is not self and _waiting(c)]
                if not waiting:
                    log.warning(
                        "%d connections open (the cap), every one answered: a new one closed",
                        max_connections,
                    )
                    self.connections.discard(self)
                    transport.abort()  # type: ignore[attr-defined]
                    return
                oldest = min(waiting, key=lambda c: getattr(c, "opened", 0.0))
                log.warning(
                    "%d connections open (the cap): the one that waited longest on its client "
                    "closed",
                    max_connections,
                )
                oldest.transport.abort()
                self.connections.discard(oldest)
            self._bound("head", first_request_s)

        def data_received(self, data: bytes) -> None:
            if not self.receiving and self.conn.their_state is h11.IDLE:
                self._bound("head", first_request_s)  # a kept-alive connection's next request
            super().data_received(data)
            self._follow()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self.opened = time.monotonic()
            self._follow()

        def _follow(self) -> None:
            """The deadline after what came: the body's once the head is whole, none once
            the whole request is (it is being answered), a new head's after an answer."""
            state = self.conn.their_state
            if state is h11.SEND_BODY and self.receiving != "body":
                self._bound("body", body_s)
            elif state is not h11.IDLE and state is not h11.SEND_BODY:
                self._unbound()

        def _bound(self, part: str, seconds: float) -> None:
            self._unbound()
            self.receiving = part
            self.deadline = self.loop.call_later(seconds, self._overdue)

        def _unbound(self) -> None:
            if self.deadline is not None:
                self.deadline.cancel()
            self.deadline, self.receiving = None, ""

        def _overdue(self) -> None:
            part, self.deadline, self.receiving = self.receiving, None, ""
            if self.transport.is_closing():
                return
            log.warning("a client sent no whole request %s in time: its connection closed", part)
            self.transport.close()

        def connection_lost(self, exc: Exception | None) -> None:
            self._unbound()
            super().connection_lost(exc)

    return CappedProtocol


def _waiting(connection: Any) -> bool:
    """Whether a connection waits on its client: no request yet, one not yet whole, or
    between two (not one being answered)."""
    if connection.transport is None or connection.transport.is_closing():
        return False
    import h11

    if connection.conn.their_state is not h11.DONE:
        return True
    cycle = connection.cycle
    return cycle is not None and cycle.response_complete


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
