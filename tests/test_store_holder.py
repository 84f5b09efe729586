"""Who holds a database file (``haf_tui.store.holder``), against real processes: a note of
another PID is never told as the lock holder's, a live holder's note is changed or removed by
no other process, and a writer's note goes with it when it is sent SIGTERM (issue 42 §5)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from haf_tui.store import holder
from haf_tui.store.holder import (
    describe_holder,
    holder_note_path,
    read_holder_note,
    update_holder_purpose,
    write_holder_note,
)

ROOT = Path(__file__).resolve().parents[1]
DEADLINE = 60  # (generous: only "never" fails it)

NOTE_WRITER = """\
import sys
import time
from pathlib import Path
from haf_tui.store.holder import write_holder_note

write_holder_note(Path(sys.argv[1]), sys.argv[2])
print("ready", flush=True)
sys.stdin.readline()
"""

STORE_WRITER = """\
import sys
import time
import time
from haf_tui.store import open_store

store = open_store(sys.argv[1], purpose="run ab12: writing")
print("ready", flush=True)
while True:
    time.sleep(1)
"""


def _start(script: str, *args: str) -> subprocess.Popen[str]:
    child = subprocess.Popen(
        [sys.executable, "-c", script, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "ready"
    return child


@pytest.fixture
def other_holder(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[str]]]:
    """A database path whose note a live child process wrote ("theirs: writing")."""
    db = tmp_path / "h.duckdb"
    child = _start(NOTE_WRITER, str(db), "theirs: writing")
    try:
        yield db, child
    finally:
        child.kill()
        child.wait(DEADLINE)


def test_a_note_of_another_pid_is_not_told_as_the_lock_holder_s(
    other_holder: tuple[Path, subprocess.Popen[str]],
) -> None:
    db, child = other_holder
    mine = describe_holder(db, os.getpid())  # the lock says: this process holds it
    assert mine.startswith(f"PID {os.getpid()}") and "theirs" not in mine, mine
    theirs = describe_holder(db, child.pid)
    assert theirs.startswith(f"PID {child.pid}") and ", theirs: writing, since " in theirs


def test_a_live_holder_s_note_is_neither_changed_nor_removed_by_another_process(
    other_holder: tuple[Path, subprocess.Popen[str]],
) -> None:
    db, child = other_holder
    note = read_holder_note(db)
    assert note is not None and note.pid == child.pid
    update_holder_purpose(db, "mine: deleting")  # (this process's note: there is none)
    assert read_holder_note(db) == note
    holder_note_path(db).unlink()  # this process writes its note, the child's is gone …
    remove_mine = write_holder_note(db, "mine: writing")
    child_again = _start(NOTE_WRITER, str(db), "theirs again")  # … and another takes over
    try:
        theirs = read_holder_note(db)
        assert theirs is not None and theirs.pid == child_again.pid
        update_holder_purpose(db, "mine: still writing")
        remove_mine()  # (this process lets the file go late: the note is no longer its own)
        assert read_holder_note(db) == theirs
    finally:
        child_again.kill()
        child_again.wait(DEADLINE)


def test_a_writer_sent_sigterm_leaves_no_note(tmp_path: Path) -> None:
    db = tmp_path / "h.duckdb"
    writer = _start(STORE_WRITER, str(db))
    try:
        note = read_holder_note(db)
        assert note is not None and note.pid == writer.pid and note.purpose == "run ab12: writing"
        writer.terminate()
        assert writer.wait(DEADLINE) == -signal.SIGTERM  # (it still ends by the signal)
    finally:
        writer.kill()
        writer.wait(DEADLINE)
    assert not holder_note_path(db).exists()
    assert [p.name for p in tmp_path.iterdir() if "holder" in p.name] == []


def test_a_forked_child_s_cleanup_leaves_its_parent_s_note(tmp_path: Path) -> None:
    """A child forked while this process holds the file inherits the cleanup (at exit, on
    SIGTERM), not the note: its cleanup removes nothing of its parent's."""
    db = tmp_path / "h.duckdb"
    before = signal.signal(signal.SIGTERM, signal.SIG_DFL)  # (whatever an earlier test left)
    remove = write_holder_note(db, "parent: writing")
    try:
        assert signal.getsignal(signal.SIGTERM) is holder._on_sigterm
        child = os.fork()
        if child == 0:  # (the child: what its SIGTERM or exit runs, then gone)
            holder._remove_live_notes()
            os._exit(0)
        _, status = os.waitpid(child, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        note = read_holder_note(db)
        assert note is not None and note.pid == os.getpid()
    finally:
        remove()
        signal.signal(signal.SIGTERM, before)
    assert not holder_note_path(db).exists()


def test_sigterm_s_cleanup_comes_back_after_a_program_set_sigterm_back_to_default(
    tmp_path: Path,
) -> None:
    """The cleanup is registered once a process, its SIGTERM handler checked at every note:
    a program (a test, an app) that set SIGTERM back to its default since the last note still
    gets the note removed on SIGTERM (a once-only install left it at the default)."""
    before = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        write_holder_note(tmp_path / "a.duckdb", "first")()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        remove = write_holder_note(tmp_path / "b.duckdb", "second")
        assert signal.getsignal(signal.SIGTERM) is holder._on_sigterm
        remove()
    finally:
        signal.signal(signal.SIGTERM, before)


def test_a_child_forked_from_a_holder_and_sent_sigterm_at_once_ends_leaving_the_note(
    tmp_path: Path,
) -> None:
    """A child forked from a holder has SIGTERM's default action, however soon the signal
    comes (one that came before Python's state was ready in the child was lost to a Python
    handler, and the child waited for ever)."""
    db = tmp_path / "h.duckdb"
    remove = write_holder_note(db, "parent: writing")
    try:
        for _ in range(20):  # (the signal at once, each time: the window is the fork's own)
            child = os.fork()
            if child == 0:
                while True:
                    signal.pause()
            os.kill(child, signal.SIGTERM)
            deadline = time.monotonic() + DEADLINE
            while (ended := os.waitpid(child, os.WNOHANG))[0] == 0:
                if time.monotonic() > deadline:
                    os.kill(child, signal.SIGKILL)
                    os.waitpid(child, 0)
                    pytest.fail("the child sent SIGTERM did not end")
                time.sleep(0.05)
            assert os.WIFSIGNALED(ended[1]) and os.WTERMSIG(ended[1]) == signal.SIGTERM
        note = read_holder_note(db)
        assert note is not None and note.pid == os.getpid()
    finally:
        remove()
