"""The workbench ends with its terminal: SIGHUP (a closed terminal) or SIGTERM stops ``haf``
within seconds, in a real pseudo-terminal, and leaves the database readable."""

from __future__ import annotations

import fcntl
import os
import pty
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from haf_tui.store import open_store


def _start_workbench(db: Path) -> tuple[subprocess.Popen[bytes], int]:
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    env = {**os.environ, "TERM": "xterm-256color"}
    process = subprocess.Popen(
        [sys.executable, "-m", "haf_tui.cli", "--db", str(db)],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        start_new_session=True,  # its own session and controlling terminal, as in tmux
    )
    os.close(slave)
    return process, master


def _drain_until(master: int, marker: bytes, seconds: float) -> bytes:
    """Read the screen until ``marker`` shows (the app is up)."""
    seen, deadline = b"", time.monotonic() + seconds
    while time.monotonic() < deadline and marker not in seen:
        try:
            import select

            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                seen += os.read(master, 65536)
        except OSError:
            break
    return seen


@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGTERM, None])
def test_the_workbench_exits_when_its_terminal_closes(tmp_path: Path, signum: int | None) -> None:
    """A signal, or only the terminal closing (no SIGHUP reaches a process the terminal does
    not control: it then reads end-of-file from it)."""
    db = tmp_path / "haf.duckdb"
    open_store(db).close()
    process, master = _start_workbench(db)
    try:
        screen = _drain_until(master, b"no runs yet", 60)
        assert b"no runs yet" in screen, screen[-500:]
        if signum is not None:
            process.send_signal(signum)
        os.close(master)  # the terminal is gone as well
        master = -1
        process.wait(timeout=15)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
            pytest.fail("the workbench kept running after its terminal closed")
        if master >= 0:
            os.close(master)
    with open_store(db, read_only=True) as store:  # the lock is released
        assert store.list_runs() == []
