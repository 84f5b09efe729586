"""Helpers shared by the tests: driving a Textual app to rest, reading what a screen shows,
and the one-line error a command prints."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from textual.widgets import Static


async def settle(pilot: Any, rounds: int = 3) -> None:
    """Let the app's messages and workers finish (workers may start workers) and the screen
    redraw."""
    for _ in range(rounds):
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await _tables_measured(pilot)


async def until(pilot: Any, ok: Callable[[], bool], seconds: float = 60.0) -> None:
    """Let the app run until ``ok()`` holds: what a test waits for, not a guessed delay (the
    deadline only catches "never", generous for a loaded machine)."""
    deadline = time.monotonic() + seconds
    while not ok():
        assert time.monotonic() < deadline, f"not within {seconds:.0f} s"
        await pilot.pause(0.05)


async def _tables_measured(pilot: Any, seconds: float = 30.0) -> None:
    """Wait until every DataTable has measured its new rows and cells: it does so when its
    own message queue runs empty, which under load can come after the screen drew the rows
    at the header's widths (a picture then depends on the machine's load)."""
    from textual.widgets import DataTable

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        pending = [  # (every screen of the stack: a modal shows the one under it)
            table
            for screen in pilot.app.screen_stack
            for table in screen.query(DataTable)
            if getattr(table, "_require_update_dimensions", False)
            or getattr(table, "_updated_cells", None)
        ]
        if not pending:
            break
        await pilot.pause(0.02)
    await pilot.pause()


def static_text(screen: Any, selector: str) -> str:
    """What a Static widget shows."""
    return str(screen.query_one(selector, Static).render())


def one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    """The error a command printed: one line on stderr starting with ``error:``."""
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "\n" not in err, err
    return err
