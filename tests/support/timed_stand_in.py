"""A stand-in OpenAI-compatible server (tests/support/bad_server.py's, answering well) that
takes ``DELAY`` seconds over every run request and remembers when each came and went: a real
HTTP server process on 127.0.0.1 (``python -m tests.support.timed_stand_in DELAY`` prints its
port). ``GET /times`` gives every run request's ``[start, end]`` (``time.time()``), so a test
sees two servers serve at the same moment.

Two ways to hold still at a known point rather than guess a delay: ``meet`` (a folder shared
by two stand-ins): each one's first run request waits, before it is answered, until the
other's first came (so the two overlap if, and only if, both are asked at once); ``gate`` (a
file) and ``hold_after``: once ``hold_after`` run requests came, the others wait while the
gate file exists (a run cannot finish until the test removes it)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import httpx

from haf_tui.inference.server import PROBE_PROMPT
from tests.support.bad_server import StandIn


class TimedStandIn(StandIn):
    """Answers well, ``delay`` seconds after each run request came; keeps its times."""

    delay = 0.0
    times: ClassVar[list[tuple[float, float]]] = []
    times_lock = threading.Lock()
    run_requests = 0
    meet: Path | None = None
    gate: Path | None = None
    hold_after = 0

    def do_GET(self) -> None:  # noqa: N802 (the handler's own name)
        if self.path == "/times":
            with self.times_lock:
                self._send(list(self.times))
            return
        super().do_GET()

    def do_POST(self) -> None:  # noqa: N802
        raw = self.rfile.read(int(self.headers["Content-Length"]))
        self.rfile = io.BytesIO(raw)  # (read again by the stand-in's own handler)
        run = json.loads(raw).get("prompt") != PROBE_PROMPT  # (the probe: at once)
        started = time.time()
        if run:
            with self.times_lock:
                TimedStandIn.run_requests += 1
                number = TimedStandIn.run_requests
            self._hold(number)
            time.sleep(self.delay)
        super().do_POST()
        if run:
            with self.times_lock:
                self.times.append((started, time.time()))

    def _hold(self, number: int) -> None:
        ends = time.monotonic() + HOLD_LIMIT
        if self.meet is not None and number == 1:
            (self.meet / str(self.server.server_address[1])).touch()
            while len(list(self.meet.iterdir())) < 2 and time.monotonic() < ends:
                time.sleep(0.02)
        if self.gate is not None and number > self.hold_after:
            while self.gate.exists() and time.monotonic() < ends:
                time.sleep(0.02)


HOLD_LIMIT = 120.0
"""Seconds a request waits at most for the other stand-in or the gate."""


def main() -> None:
    """Serve with the delay, MEET (or -), GATE (or -) and HOLD_AFTER named on the command
    line; print the port."""
    delay, meet, gate, hold_after = sys.argv[1:]
    TimedStandIn.delay = float(delay)
    TimedStandIn.meet = None if meet == "-" else Path(meet)
    TimedStandIn.gate = None if gate == "-" else Path(gate)
    TimedStandIn.hold_after = int(hold_after)
    server = ThreadingHTTPServer(("127.0.0.1", 0), TimedStandIn)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()


@contextmanager
def timed_stand_in(
    delay: float, meet: Path | None = None, gate: Path | None = None, hold_after: int = 0
) -> Iterator[str]:
    """The timed stand-in process for a ``with`` block: its URL (``meet``, ``gate``,
    ``hold_after``: see the module)."""
    held = [str(meet or "-"), str(gate or "-"), str(hold_after)]
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.timed_stand_in", str(delay), *held],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        yield f"http://127.0.0.1:{int(process.stdout.readline())}"
    finally:
        process.kill()
        process.wait()


def request_times(url: str) -> list[tuple[float, float]]:
    """When each run request the stand-in served came and went."""
    return [(float(a), float(b)) for a, b in httpx.get(f"{url}/times", timeout=5).json()]


if __name__ == "__main__":
    main()
