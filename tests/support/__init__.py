"""Helpers shared by the tests: driving a Textual app to rest, reading what a screen shows,
and the one-line error a command prints."""

from __future__ import annotations

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


def static_text(screen: Any, selector: str) -> str:
    """What a Static widget shows."""
    return str(screen.query_one(selector, Static).render())


def one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    """The error a command printed: one line on stderr starting with ``error:``."""
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "\n" not in err, err
    return err
