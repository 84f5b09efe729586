"""``haf`` in a child process that holds still at a known point of its run, so that a test
stops it there (a kill, a Ctrl-C) instead of after a guessed delay, which on a faster or a
slower machine falls elsewhere (after the last generation, before the first, between two)::

    python -m tests.support.held_run MARKER AT AFTER UNTIL HAF-ARGUMENTS...

``AT`` ``save``: the thread that stores a run's ``AFTER``-th generation holds once it is
stored (no further generation of the run is stored meanwhile); ``take``: once ``AFTER`` of
a run's generations are stored, the run hands out no new generation (none starts
meanwhile). As it begins to hold, the run's id is written to ``MARKER`` as a line.
``UNTIL``: ``kill`` holds until the process is killed; ``ctrl-c:N`` until ``haf run``'s
Ctrl-C handler has heard N of them (the N-th, raising KeyboardInterrupt, may end the hold
in the held thread itself). A run holds once; never longer than :data:`HOLD_LIMIT`."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from types import FrameType
from typing import Any

HOLD_LIMIT = 600.0
"""Seconds a hold lasts at most (a test that forgets to act on it then fails on its own)."""


class Hold:
    """Where the run holds, and for how long."""

    def __init__(self, marker: Path, at: str, after: int, until: str) -> None:
        assert at in ("save", "take") and after >= 1, (at, after)
        assert until == "kill" or until.startswith("ctrl-c:"), until
        self.marker, self.at, self.after = marker, at, after
        self.ctrl_c = int(until.split(":", 1)[1]) if until != "kill" else None
        self.saved: dict[str, int] = {}
        self.held: set[str] = set()
        self.heard = 0
        self.lock = threading.Lock()

    def stored(self, run_id: str) -> None:
        """One generation of ``run_id`` is stored (in the thread that stored it)."""
        with self.lock:
            count = self.saved[run_id] = self.saved.get(run_id, 0) + 1
        if self.at == "save" and count == self.after:
            self.hold(run_id)

    def taking(self) -> None:
        """A run is about to hand out new generations (in the thread that asks for them)."""
        with self.lock:
            due = [r for r, n in self.saved.items() if n >= self.after and r not in self.held]
        if self.at == "take" and due:
            self.hold(due[0])

    def hold(self, run_id: str) -> None:
        with self.lock:
            if run_id in self.held:
                return
            self.held.add(run_id)
        with self.marker.open("a", encoding="utf-8") as marker:
            marker.write(run_id + "\n")
        ends = time.monotonic() + HOLD_LIMIT
        while time.monotonic() < ends:
            if self.ctrl_c is not None and self.heard >= self.ctrl_c:
                return
            time.sleep(0.02)


def install(hold: Hold) -> None:
    """Wrap the store's generation writes, the run queue's hand-out and ``haf run``'s Ctrl-C
    handler with ``hold``'s counting."""
    from haf_tui.cli import run_command
    from haf_tui.pipeline.scheduler import RunQueue
    from haf_tui.store.result_rows import ResultRows

    save = ResultRows.save_generation
    take = RunQueue.take
    handle = run_command._CtrlC._handle

    def save_generation(self: ResultRows, record: Any) -> None:
        save(self, record)
        hold.stored(str(record.run_id))

    def held_take(self: RunQueue, limit: int, *, wait: bool) -> Any:
        hold.taking()
        return take(self, limit, wait=wait)

    def counted(self: Any, signum: int, frame: FrameType | None) -> None:
        hold.heard += 1
        handle(self, signum, frame)

    ResultRows.save_generation = save_generation  # type: ignore[method-assign]
    RunQueue.take = held_take  # type: ignore[method-assign]
    run_command._CtrlC._handle = counted  # type: ignore[method-assign]


def main() -> None:
    marker, at, after, until, *haf = sys.argv[1:]
    install(Hold(Path(marker), at, int(after), until))
    from haf_tui.cli import entry

    sys.argv = ["haf", *haf]
    entry()


def held_command(marker: Path, at: str, after: int, until: str, *haf: str) -> list[str]:
    """The command line of ``haf HAF...`` held as the module says."""
    return [
        sys.executable,
        "-m",
        "tests.support.held_run",
        str(marker),
        at,
        str(after),
        until,
        *haf,
    ]


def wait_until_held(marker: Path, process: Any, runs: int = 1, seconds: float = 600) -> list[str]:
    """The ids of the runs held once ``runs`` of them hold (the process still running), a
    generous deadline for a loaded machine: the model loads first."""
    ends = time.monotonic() + seconds
    while time.monotonic() < ends:
        assert process.poll() is None, "the run ended before it held"
        if marker.exists():
            held = marker.read_text(encoding="utf-8").split("\n")[:-1]  # (whole lines)
            if len(held) >= runs:
                return held
        time.sleep(0.1)
    raise AssertionError(f"the run did not hold within {seconds:.0f} s")


if __name__ == "__main__":
    main()
