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
import threading
import time
from pathlib import Path

import pytest

from haf_tui.store import open_store
from tests.support.held_run import held_command, wait_until_held


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


class _Output:
    """A child's output, read as it comes (a thread), so that a test waits for a line."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdout is not None
        self.text = b""
        self._stdout = process.stdout
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while chunk := self._stdout.read1(4096):
            self.text += chunk

    def wait_for(self, said: bytes, seconds: float) -> None:
        ends = time.monotonic() + seconds
        while said not in self.text:
            assert time.monotonic() < ends, self.text[-2000:]
            time.sleep(0.05)

    def rest(self) -> bytes:
        self._reader.join(timeout=30)
        return self.text


@pytest.mark.real_model
@pytest.mark.real_similarity
def test_two_ctrl_c_close_together_stop_at_once(tmp_path: Path) -> None:
    """The second Ctrl-C, while the run still has work (the first's orderly stop waits for
    it), stops the run at once (it stays resumable). The run holds still after its first
    stored generation until it has heard both, so the first comes while work is left and
    the second before that work is done, however fast or slow the machine."""
    db, marker = tmp_path / "haf.duckdb", tmp_path / "held"
    process = subprocess.Popen(
        held_command(marker, "take", 1, "ctrl-c:2", "--db", str(db), "run", "--demo"),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        output = _Output(process)
        wait_until_held(marker, process)
        process.send_signal(signal.SIGINT)
        output.wait_for(b"stopping after the generations in flight", 120)  # (heard)
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=120) == 130  # (a guard against a hang, not a speed check)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    seen = output.rest()
    # the second Ctrl-C's line, not the orderly stop's ("resume with: haf run --resume")
    assert b"interrupted: resume the run with haf run --resume" in seen, seen[-2000:]
    with open_store(db, read_only=True) as store:
        (run,) = store.list_runs()
        assert run["status"] == "interrupted" and run["n_done"] < 8


def test_ctrl_c_before_a_run_exists_says_nothing_to_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import importlib

    from haf_tui.cli import main

    runs = importlib.import_module("haf_tui.pipeline.runs")

    def interrupted_load(config: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(runs, "load_models", interrupted_load)
    assert main(["--db", str(tmp_path / "haf.duckdb"), "run", "--demo"]) == 130
    err = capsys.readouterr().err
    assert "nothing to resume" in err and "--resume" not in err


def test_a_ctrl_c_after_the_run_stopped_is_absorbed() -> None:
    """A second Ctrl-C that lands after the run has already stopped (its first Ctrl-C asked
    for that) does not turn the orderly exit into a traceback; the old handler comes back
    when the CLI's main returns."""
    from rich.console import Console

    from haf_tui.cli.run_command import _CtrlC

    def raising(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, raising)
    try:
        with _CtrlC(Console(quiet=True)) as ctrl_c:
            os.kill(os.getpid(), signal.SIGINT)  # the first: stop after the work in flight
            time.sleep(0.05)
            assert ctrl_c.event.is_set()
        os.kill(os.getpid(), signal.SIGINT)  # the run has stopped: nothing is raised
        time.sleep(0.05)
        signal.signal(signal.SIGINT, raising)  # (what the CLI's main does on its way out)
        with _CtrlC(Console(quiet=True)):
            pass  # no stop asked for: the handler before it comes back
        assert signal.getsignal(signal.SIGINT) is raising
    finally:
        signal.signal(signal.SIGINT, previous)


def test_the_haf_process_ignores_a_ctrl_c_once_main_has_returned(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Between main's return and the process's end (the model being freed) a late Ctrl-C has
    nothing to stop: it must not end the process by a signal (exit -2 instead of 130)."""
    import haf_tui.cli as cli

    monkeypatch.setattr(cli, "main", lambda: 130)
    previous = signal.getsignal(signal.SIGINT)
    try:
        with pytest.raises(SystemExit) as exited:
            cli.entry()
        assert exited.value.code == 130
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)
