"""Screens composed and mounted before the key that shows them: one metrics, SQL and wizard
screen each, built once the app's warm-up is done and again a moment after one closes.

Composing and mounting a screen's widgets (and styling each as it mounts) was a third of its
opening key (25-45 ms of ~100 on the paper-scale store); a screen built ahead is only restyled,
laid out and drawn when its key pushes it. What it shows is read when it is first shown, not
when it is built (:meth:`~haf_tui.tui.screens.base.HafScreen.when_shown`): a database or a
file written in between is read as it is then.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from textual.app import App

    from haf_tui.tui.screens.base import HafScreen

ScreenType = TypeVar("ScreenType", bound="HafScreen[Any]")

STOP_WAIT = 2.0
"""Seconds the app's stop waits at most for a screen being built ahead to be mounted (one takes
25-45 ms; the bound only keeps a compose that never ends from holding the stop)."""


def kinds_ahead() -> tuple[type[HafScreen[Any]], ...]:
    """The screens built ahead (imported here: the warm-up worker has imported them)."""
    from haf_tui.tui.screens.metrics import MetricsScreen
    from haf_tui.tui.screens.sql import SqlScreen
    from haf_tui.tui.screens.wizard import WizardScreen

    return (MetricsScreen, SqlScreen, WizardScreen)


class ScreensAhead:
    """At most one screen of each kind built ahead, mounted off the screen stack."""

    def __init__(self, app: App[Any], key_quiet_in: Callable[[], float] = lambda: 0.0) -> None:
        self._app = app
        self._key_quiet_in = key_quiet_in
        """Seconds until the last key is a moment old (0: it is): a screen is built only then."""
        self._kept: dict[type[HafScreen[Any]], HafScreen[Any]] = {}
        self._stopped = False

    def build(self, kinds: tuple[type[HafScreen[Any]], ...] | None = None) -> None:
        """Compose and mount a screen of the first of ``kinds`` (every kind built ahead: None)
        that has none kept, then, once it is mounted and the keys waiting then are handled,
        the next (one screen at a time: building all three at once held a key pressed then
        ~100 ms); none once the app stops (:meth:`stop`). Each waits until the last key is a
        moment old, as each of the warm-up's steps does (with no deadline: keys typed less
        than that apart put the builds off while they come): a screen built on the main
        thread while a key's screen opens delays it (a key 0.6 s after the runs list
        appeared, its screen still opening as the warm-up ended and the builds began: the
        metrics screen's data 248 ms after the key against 203 ms before the warm-up ended
        sooner, four pairs)."""
        if self._stopped or not self._app.is_running:
            return
        wait = self._key_quiet_in()
        if wait > 0:
            self._app.set_timer(wait, lambda: self.build(kinds))
            return
        wanted = kinds_ahead() if kinds is None else kinds
        missing = [kind for kind in wanted if kind not in self._kept]
        if not missing:
            return
        kind, rest = missing[0], tuple(missing[1:])
        screen = kind()
        screen.built_ahead = True
        self._app._load_screen_css(screen)  # (as a push does before it mounts one)
        self._app._register(self._app, screen)
        self._kept[kind] = screen
        if rest:  # (the screen's queue is read once it is mounted; then the app's keys first)
            screen.call_later(self._app.call_later, self.build, rest)

    def building(self) -> bool:
        """Whether a screen built ahead is composing or mounting now."""
        return any(not screen.is_mounted for screen in self._kept.values())

    def stop_building(self) -> None:
        """Build nothing more (the app stops)."""
        self._stopped = True

    async def stop(self) -> None:
        """Build nothing more, and return once every screen being built is mounted.

        The app stops only then: a screen still composing as the app stops has its widgets'
        mounts skipped by Textual, yet it and its widgets still take Mount, and their handlers
        fail on the widgets that are not there (the app ended on an error, the SQL screen's
        "No nodes match '#sql-editor'", when ``q`` came as one was built)."""
        self.stop_building()
        deadline = time.monotonic() + STOP_WAIT
        while self.building() and time.monotonic() < deadline:
            await asyncio.sleep(0.005)

    def take(self, kind: type[ScreenType]) -> ScreenType:
        """The screen of ``kind`` built ahead (given once), else a new one. One whose own task
        has not started yet is given too: pushed, it composes and then is shown (a key right
        after its build got a new screen, and the one built was kept, never shown)."""
        screen = self._kept.pop(kind, None)
        if isinstance(screen, kind) and not (screen._closing or screen._closed):
            return screen
        return kind()

    def kept(self) -> list[HafScreen[Any]]:
        """The screens built ahead and not taken yet."""
        return list(self._kept.values())
