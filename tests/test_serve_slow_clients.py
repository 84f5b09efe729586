"""``haf serve``'s connection limits against real slow clients on 127.0.0.1 (issue 42 §6):
uvicorn with haf's capped protocol serving a small ASGI app in a thread (no model: the
limits are the protocol's). Clients that drip a request body, or a second request head on a
kept-alive connection, one byte at a time, never lock a normal client out: past the cap the
one that waited longest on its client goes; and each such request is closed once its head
or body is overdue, the first request and a kept-alive one alike, while a request that came
whole and takes longer than both to answer is answered."""

from __future__ import annotations

import asyncio
import json
import select
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest

uvicorn = pytest.importorskip("uvicorn", reason="llama-cpp-python's [server] extra is missing")

DRIP_EVERY = 0.1
DRIP_LIMIT = 120.0
"""A dripper gives up after this (the test has failed long before)."""
NEVER = 60.0
"""A bound that only catches "never" (the deadlines below are 3 s)."""
BOUND = 3.0
"""The head's and the body's deadline where they act (a loaded machine still gets a whole
request at once through in it)."""
SLOW = 8.0
"""How long ``/slow`` takes to answer: past both deadlines."""
LONG = 10 * NEVER
"""A deadline that does not act within a test."""


async def _app(scope: Any, receive: Any, send: Any) -> None:
    """Reads the whole body, then answers its length (``/slow``: after :data:`SLOW` s)."""
    if scope["type"] != "http":
        return
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        size += len(message.get("body", b""))
        if not message.get("more_body", False):
            break
    if scope["path"] == "/slow":
        await asyncio.sleep(SLOW)
    data = json.dumps({"got": size}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(data))]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": data})


@contextmanager
def _serving(cap: int, head_s: float, body_s: float) -> Iterator[tuple[int, Any]]:
    """uvicorn on a free 127.0.0.1 port with haf's protocol; its port and server."""
    from haf_tui.inference.serve_limits import capped_protocol

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(
        _app,
        http=capped_protocol(cap, head_s, body_s),
        log_config=None,
        lifespan="off",
        access_log=False,
        timeout_keep_alive=60,  # (an idle kept-alive connection stays: the head bound acts)
        timeout_graceful_shutdown=1,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + NEVER
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started
    try:
        yield sock.getsockname()[1], server
    finally:
        server.should_exit = True
        thread.join(timeout=NEVER)
        sock.close()


REQUEST = b"GET /ok HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


class Dripper:
    """A client that sends ``opening`` (after one whole request and its answer, when
    ``kept_alive``), then one more byte every :data:`DRIP_EVERY` seconds until the server
    closes the connection."""

    def __init__(self, port: int, opening: bytes, *, kept_alive: bool = False):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=NEVER)
        if kept_alive:
            self.sock.sendall(REQUEST)
            answer = b""
            while not (answer.count(b"\r\n\r\n") and answer.endswith(b"}")):
                chunk = self.sock.recv(4096)
                assert chunk, f"closed before its first answer came whole: {answer!r}"
                answer += chunk
            assert answer.startswith(b"HTTP/1.1 200"), answer
        self.sock.sendall(opening)
        self.began = time.monotonic()
        self.closed_after: float | None = None
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._drip, daemon=True)
        self.thread.start()

    def _drip(self) -> None:
        while not self.stop.wait(DRIP_EVERY) and time.monotonic() - self.began < DRIP_LIMIT:
            try:
                readable, _, _ = select.select([self.sock], [], [], 0)
                if readable and not self.sock.recv(4096):
                    break  # closed by the server
                self.sock.sendall(b"x")
            except OSError:
                break
        else:
            return
        self.closed_after = time.monotonic() - self.began

    def end(self) -> None:
        self.stop.set()
        self.thread.join(timeout=NEVER)
        self.sock.close()


BODY = b"POST /ok HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
BODY += b"Content-Length: 100000\r\n\r\n"
HEAD = b"GET /ok HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "


def _normal_request(port: int, path: str = "/ok") -> httpx.Response:
    with httpx.Client(timeout=NEVER) as client:
        return client.post(f"http://127.0.0.1:{port}{path}", content=b"0123456789")


def test_a_normal_client_is_served_while_slow_ones_drip() -> None:
    cap = 4
    with _serving(cap, head_s=NEVER * 4, body_s=NEVER * 4) as (port, server):
        drippers: list[Dripper] = []
        try:
            drippers += [Dripper(port, BODY) for _ in range(cap)]  # (deadlines far: they drip)
            drippers += [Dripper(port, HEAD, kept_alive=True) for _ in range(cap)]
            for _ in range(3):
                answer = _normal_request(port)
                assert answer.status_code == 200 and answer.json() == {"got": 10}
                assert len(server.server_state.connections) <= cap
            # (a dripper sees its connection closed at its next drip: waited for, under load)
            deadline = time.monotonic() + NEVER
            while time.monotonic() < deadline:
                still = [d for d in drippers if d.closed_after is None]
                if len(still) <= cap:
                    break
                time.sleep(DRIP_EVERY)
            assert 1 <= len(still) <= cap  # the cap held; some still drip
        finally:
            for dripper in drippers:
                dripper.end()


@pytest.mark.parametrize(("head_s", "body_s"), [(BOUND, LONG), (LONG, BOUND)], ids=["head", "body"])
def test_an_overdue_head_or_body_is_closed_the_first_request_and_a_kept_alive_one(
    head_s: float, body_s: float
) -> None:
    with _serving(16, head_s=head_s, body_s=body_s) as (port, _):
        heads: list[Dripper] = []
        bodies: list[Dripper] = []
        try:
            heads.append(Dripper(port, HEAD))  # the first request's head
            heads.append(Dripper(port, HEAD, kept_alive=True))  # a kept-alive one's second
            bodies.append(Dripper(port, BODY))  # the first request's body
            bodies.append(Dripper(port, BODY.replace(b"/ok", b"/k"), kept_alive=True))
            answer = _normal_request(port, "/slow")  # whole at once, answered after SLOW s
            assert answer.status_code == 200 and answer.json() == {"got": 10}
            overdue = heads if head_s == BOUND else bodies
            deadline = time.monotonic() + NEVER
            while any(d.closed_after is None for d in overdue) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert all(d.closed_after is not None for d in overdue), [
                d.closed_after for d in overdue
            ]
        finally:
            for dripper in heads + bodies:
                dripper.end()
