"""The haf-tui application: screens, key bindings, the command palette, quitting and the one
handler for worker errors; runs started here are :mod:`haf_tui.tui.app_runs`'s."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import importlib
import time
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from textual import events, work
from textual.app import SystemCommand
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from haf_tui.methods.loader import ensure_methods
from haf_tui.methods.registry import left_out
from haf_tui.store.pending_annotations import PendingAnnotation, pending_path
from haf_tui.store.pending_annotations import take_notices as pending_notices
from haf_tui.tui.app_stop import StoppingApp
from haf_tui.tui.closed_screens import forget_closed, job_context_executor
from haf_tui.tui.messages import WorkFailed
from haf_tui.tui.screens.base import HafScreen
from haf_tui.tui.screens.help import HelpScreen
from haf_tui.tui.screens.home import HomeScreen
from haf_tui.tui.screens_ahead import ScreensAhead
from haf_tui.tui.store_reader import StoreReader
from haf_tui.tui.store_writes import store_kept
from haf_tui.vocabulary import first_line, shown_text

PENDING_SECONDS = 3.0
"""How often the annotations kept while another process writes are tried again."""


@dataclass
class PendingStored(Message):
    """Pending annotations were stored (``dropped``: those whose run or instance is gone)."""

    stored: list[PendingAnnotation]
    dropped: list[tuple[PendingAnnotation, str]]


REFREEZE_DELAY = 2.0
"""Seconds after a screen that froze its rows closes before they are collected."""

KEYS_QUIET = 1.0
"""Seconds without a key before what a closed screen froze is collected (a full pass of the
collector, 120-145 ms on the paper-scale store: not in the keys being typed)."""

REBUILD_DELAY = 1.0
"""Seconds after a screen built ahead closes before the next one is built."""


WARM_YIELD_SECONDS = 3.0
"""The most the warm-up waits, all its steps together, for reads of the store to end (a long
query in the SQL screen does not hold it back for longer)."""

WARM_QUIET_SECONDS = 0.05
"""How long the store has gone unread before the warm-up's next step starts."""

KEY_QUIET_SECONDS = 0.3
"""How long after a key the warm-up's next step and the next screen built ahead wait (the
key's screen reads and draws meanwhile)."""

WARM_MODULES = (
    "haf_tui.tui.screens.explorer",
    "haf_tui.tui.screens.metrics",
    "haf_tui.tui.screens.sql",
    "haf_tui.tui.screens.wizard",
    "haf_tui.tui.screens.monitor",
    "haf_tui.pipeline.choices",
    "haf_tui.pipeline.planning",
    "haf_tui.pipeline.runs",
)
"""What the warm-up imports first, one step each: the screens (those a key on the runs list
opens first), then what starting a run needs."""


FIRST_KEY_STEPS = 3
"""The warm-up's first steps, taken at once as the app starts (what the first key on the runs
list needs: the explorer, its methods' parts, DuckDB's parser); the others wait their turn."""


def _warm_steps() -> list[Callable[[], object]]:
    """The warm-up's steps, in order: the explorer and the methods' parts of it, DuckDB's
    parser (the check every named query passes: 24 ms its first time), the other screens and
    what starting a run needs, the named queries, then numpy's and scipy's versions (the key of
    the comparison's kept intervals: read from their metadata, nothing imported).

    Each step is short (at most ~60 ms here): a step cannot be stopped once begun, and a key
    that comes during one shares the interpreter with it. scipy's statistics are not imported
    here (0.75–1.0 s of the interpreter's time in one import): a key 1.0–1.4 s after the runs
    list appeared opened its screen in 250–980 ms beside that import, 150–320 ms without it.
    The comparison imports them where it first computes an interval, in its worker, once its
    means are shown."""
    from haf_tui.methods.registry import methods
    from haf_tui.reports import QueryError, load_queries
    from haf_tui.reports.bootstrap import method_versions
    from haf_tui.store.connection import check_reading_sql
    from haf_tui.tui.method_parts import explorer_parts

    def read_queries() -> None:
        with contextlib.suppress(QueryError):  # (a broken library is said where it is used)
            load_queries()

    explorer, *others = [functools.partial(importlib.import_module, m) for m in WARM_MODULES]
    return [
        explorer,
        lambda: explorer_parts(methods().values()),
        lambda: check_reading_sql("SELECT 1"),
        *others,
        read_queries,
        method_versions,
    ]


class HafApp(StoppingApp):
    """Run HAF evaluations, browse stored runs, explore explanations, query them with SQL."""

    TITLE = "haf-tui"
    SUB_TITLE = "Human-Aligned Faithfulness workbench"
    CSS_PATH = "app.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("question_mark", "help", "Help"),
        Binding("h", "home", "Runs"),
        Binding("q", "quit", "Quit"),
    ]

    def __init__(self, reader: StoreReader):
        super().__init__(reader)
        self._holders: weakref.WeakSet[Screen[Any]] = weakref.WeakSet()
        self._last_key = 0.0
        """When the last key came (``time.monotonic``)."""
        self.ahead = ScreensAhead(self, self.key_quiet_in)
        """The metrics, SQL and wizard screens, built before their keys."""

    def on_mount(self) -> None:
        """Start on the runs list; a closed terminal (SIGHUP) or SIGTERM ends the app."""
        job_context_executor(asyncio.get_running_loop())  # (before any thread worker starts)
        self.push_screen(HomeScreen())
        for line in left_out():  # a broken plug-in: said once, the rest works
            self.notify(line, title="method left out", severity="warning", timeout=12)
        self.freeze_after_load()
        self.warm_imports()
        self._storing_pending = False
        self.store_pending_annotations()  # (kept at the last session: stored now if it can)
        self.set_interval(PENDING_SECONDS, self.store_pending_annotations)
        self.stop_on_hang_up()

    def freeze_after_load(self, screen: Screen[Any] | None = None) -> None:
        """Leave what is loaded now (the app, its libraries, the rows ``screen`` just read)
        out of the collector's full passes: they re-scanned ~150k long-lived objects for
        100-200 ms, the slowest keypresses. The one place the app freezes; once ``screen``
        closes, what it held goes back to the collector (:meth:`screen_closed`)."""
        gc.freeze()
        if screen is not None:
            self._holders.add(screen)

    def screen_closed(self, screen: Screen[Any]) -> None:
        """A screen closed: if it froze a load, collect what it held a moment later (and
        freeze the rest again), not while its keys are still being handled; what Textual
        kept of it is let go (:mod:`haf_tui.tui.closed_screens`)."""
        forget_closed(self)
        if screen in self._holders:
            self._holders.discard(screen)
            self.set_timer(REFREEZE_DELAY, self._refreeze_when_quiet)
        if isinstance(screen, HafScreen) and screen.built_ahead and self.is_running:
            kind = type(screen)
            self.set_timer(REBUILD_DELAY, lambda: self.ahead.build((kind,)))

    async def on_event(self, event: events.Event) -> None:
        """(Notes when the last key came: see :meth:`_refreeze_when_quiet`.)"""
        if isinstance(event, events.Key):
            self._last_key = time.monotonic()
        await super().on_event(event)

    def key_quiet_in(self, quiet: float | None = None) -> float:
        """Seconds until no key has come for ``quiet`` s (default :data:`KEY_QUIET_SECONDS`;
        0: none has): what the app does in the background waits for it (a key's screen opens
        meanwhile)."""
        quiet = KEY_QUIET_SECONDS if quiet is None else quiet
        return max(0.0, quiet - (time.monotonic() - self._last_key))

    def _refreeze_when_quiet(self) -> None:
        """Collect what closed screens froze once no key has come for ``KEYS_QUIET`` s."""
        wait = self.key_quiet_in(KEYS_QUIET)
        if wait:
            self.set_timer(wait, self._refreeze_when_quiet)
            return
        self._refreeze()

    @staticmethod
    def _refreeze() -> None:
        gc.unfreeze()
        gc.collect()
        gc.freeze()

    @work(thread=True, exclusive=True, exit_on_error=False, group="warm")
    def warm_imports(self) -> None:
        """Import the other screens, the methods' parts of the explorer and the pipeline's
        modules, read the named queries and numpy's and scipy's versions, in the background, so
        that screens open without waiting for it (a screen's first report then only looks at
        the query files); posts nothing (:func:`_warm_steps`: short steps, scipy not imported).
        Its first :data:`FIRST_KEY_STEPS` steps are taken at once; each later one waits while
        the store is being read or a key has just come (:data:`WARM_YIELD_SECONDS` in all): a
        screen opened early reads without sharing the interpreter with the imports (an explorer
        opened as the runs list appeared showed its data in 294–441 ms with the imports beside
        it, 258–282 ms without)."""
        deadline = time.monotonic() + WARM_YIELD_SECONDS
        for number, step in enumerate(_warm_steps()):
            if number >= FIRST_KEY_STEPS:
                self._wait_for_quiet(deadline)
            step()

    def _wait_for_quiet(self, deadline: float) -> None:
        """Wait (in the warm-up's thread) until no key has come for :data:`KEY_QUIET_SECONDS`
        and the store has gone unread for :data:`WARM_QUIET_SECONDS`, or until ``deadline``
        (``time.monotonic``). (A key's screen starts reading some 30–70 ms after it: the store
        unread alone would let a step in between.)"""
        while (left := deadline - time.monotonic()) > 0:
            if not self.reader.wait_quiet(WARM_QUIET_SECONDS, left):
                return
            wait = self.key_quiet_in()
            if not wait:
                return
            time.sleep(min(wait, left))

    # -- annotations kept while another process writes ------------------------------------------

    def store_pending_annotations(self) -> None:
        """Store the annotations kept while another process wrote the database, once it lets
        go (a worker; tried every few seconds while any are pending)."""
        for notice in pending_notices():  # (its file set aside: said once)
            self.notify(notice, severity="warning", timeout=12)
        if not self._storing_pending and pending_path().exists():  # (a stat when none)
            self._storing_pending = True
            self._store_pending_now()

    @work(thread=True, exit_on_error=False, group="pending")
    def _store_pending_now(self) -> None:
        """(thread worker: posts a message, touches no widget)"""
        try:
            result = store_kept(self.reader)
        finally:
            self._storing_pending = False
        if result is not None and (result[0] or result[1]):
            self.post_message(PendingStored(*result))

    def on_pending_stored(self, message: PendingStored) -> None:
        """Say what was stored (and what could not be: its run or instance is gone); the
        screens that mark pending annotations drop the mark."""
        if message.stored:
            count = len(message.stored)
            self.notify(f"stored {count} pending annotation{'s' if count > 1 else ''}")
        for item, reason in message.dropped:
            self.notify(f"pending {item.describe()} dropped: {reason}", severity="warning")
        for screen in self.screen_stack:
            stored = getattr(screen, "pending_stored", None)
            if callable(stored):
                stored(message.stored)

    # -- navigation ------------------------------------------------------------------------------

    def action_home(self) -> None:
        """Back to the runs list."""
        while len(self.screen_stack) > 2:
            self.pop_screen()

    def action_help(self) -> None:
        """Keys (the current screen's first) and what the numbers mean."""
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    def action_new_run(self) -> None:
        """The guided new-run wizard."""
        from haf_tui.tui.screens.wizard import WizardScreen

        self.push_screen(self.ahead.take(WizardScreen))

    def action_sql(self) -> None:
        """The SQL screen."""
        from haf_tui.tui.screens.sql import SqlScreen

        self.push_screen(self.ahead.take(SqlScreen))

    def action_metrics(self) -> None:
        """The metric panels of every run."""
        from haf_tui.tui.screens.metrics import MetricsScreen

        self.push_screen(self.ahead.take(MetricsScreen))

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """Command palette: the app's actions, then every key binding of the current screen."""
        yield from super().get_system_commands(screen)
        yield SystemCommand("New evaluation", "the guided new-run wizard", self.action_new_run)
        yield SystemCommand("Runs", "the runs in the database", self.action_home)
        yield SystemCommand("SQL", "query the stored runs", self.action_sql)
        yield SystemCommand(
            "Metrics", "Tables 1, 2, 4, Figure 2, distributions", self.action_metrics
        )
        if self.session is not None:
            yield SystemCommand("Run monitor", "the runs started here", self.action_monitor)
        yield SystemCommand("Help", "keys of every screen", self.action_help)
        name = type(screen).__name__.removesuffix("Screen")
        for binding in screen.BINDINGS:
            if isinstance(binding, Binding) and binding.description:
                action = binding.action

                async def run_action(action: str = action) -> None:
                    await screen.run_action(action)

                yield SystemCommand(
                    f"{name}: {binding.description}",
                    f"key {binding.key.split(',')[0]}",
                    run_action,
                )

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A failed app worker becomes one error line (as screens forward theirs); once the
        warm-up is done, the screens built ahead are built."""
        if event.worker.group == "warm" and event.state == WorkerState.SUCCESS:
            self.ahead.build()
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            error = event.worker.error
            self.post_message(WorkFailed(first_line(error)))

    def on_work_failed(self, message: WorkFailed) -> None:
        """The one handler for worker errors (screens forward theirs): a notification, its
        line as text (never markup) with its control characters shown as escapes."""
        line = shown_text(message.message.replace("\n", " "))
        self.notify(line, title="error", severity="error", timeout=8, markup=False)

    def on_unmount(self) -> None:
        """Stop a run still going (it stays resumable) and close the database."""
        if self.session is not None and self.session.active:
            self.session.control.cancel()
        self.forget_hang_up()
        self.reader.close()
        gc.unfreeze()


def create_app(db_path: str | Path | None = None) -> HafApp:
    """The app factory shared by ``haf`` and the tests (the methods loaded first, unless the
    program has loaded them)."""
    ensure_methods()
    return HafApp(StoreReader(db_path))
