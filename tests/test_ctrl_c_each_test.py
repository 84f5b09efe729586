"""The suite's own guard (``tests/conftest.py``): each test starts with Ctrl-C delivered, as in
a fresh ``haf`` process, whatever an earlier test in the same process left behind."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading

from tests.conftest import _ctrl_c_delivered


def _blocked() -> bool:
    return signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])


def test_an_ignored_or_blocked_ctrl_c_is_delivered_again_and_a_pending_one_dropped() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT])
    try:
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)  # (pending: blocked here)
        assert signal.SIGINT in signal.sigpending()
        _ctrl_c_delivered()  # (raises KeyboardInterrupt if it delivers the pending one)
        assert not _blocked() and signal.SIGINT not in signal.sigpending()
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])
        signal.signal(signal.SIGINT, signal.default_int_handler)


def test_a_process_started_after_it_stops_on_ctrl_c() -> None:
    """What the campaign and ``--wait`` tests rely on: a child started after an earlier test
    blocked SIGINT hears it (a blocked mask passes through exec)."""
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT])
    try:
        _ctrl_c_delivered()
        child = subprocess.Popen(
            [sys.executable, "-c", "import sys, time; print('up', flush=True); time.sleep(60)"],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            assert child.stdout is not None and child.stdout.readline() == "up\n"
            child.send_signal(signal.SIGINT)
            assert child.wait(30) == -signal.SIGINT  # (ended by it, as Python does)
        finally:
            child.kill()
            child.wait(30)
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])
