"""The base of every screen: read access to the store, and worker errors sent to the app."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar, cast

from rich.text import Text
from textual import events, on
from textual.geometry import Size
from textual.reactive import Reactive
from textual.screen import Screen
from textual.widget import Widget
from textual.worker import Worker, WorkerState

from haf_tui.methods.declare import MetricSpec
from haf_tui.tui.messages import FullValueRequested, WorkFailed
from haf_tui.tui.screens.full_value import FullValueScreen
from haf_tui.tui.store_reader import StoreReader
from haf_tui.vocabulary import error_line, first_line

if TYPE_CHECKING:
    from haf_tui.tui.app import HafApp

ResultType = TypeVar("ResultType")
SNAPSHOT_SECONDS = 5.0
"""While another process writes, how often a polling screen takes a fresh snapshot."""


def failure_text(what: str, error: BaseException) -> Text:
    """What a screen says where it waited for ``what`` that failed: "could not ``what``: " and
    the error in one line (plain text: the error's brackets are not markup)."""
    return Text(f"could not {what}: {error_line(error)}")


class HafScreen(Screen[ResultType]):
    """A screen whose failed workers become one :class:`WorkFailed` message for the app.

    Worker state changes do not bubble in Textual, so each screen forwards its own; the app's
    ``on_work_failed`` is the one place errors are shown.
    """

    _snapshot_taken = 0.0
    """When :meth:`poll_due` last took a fresh snapshot (``time.monotonic``)."""

    built_ahead = False
    """Composed and mounted before the key that shows it (:mod:`haf_tui.tui.screens_ahead`):
    what it reads to show waits until it is first shown (:meth:`when_shown`)."""
    _shown_once = False
    _starts_waiting: list[Callable[[], object]] | None = None

    focused: Reactive[Widget | None] = Reactive(None, repaint=False)
    """As Screen's, without repainting the whole screen on every focus change (~25 ms at
    200×60): the widgets that gain or lose the focus restyle and repaint themselves."""

    async def _compose(self) -> None:
        """Take the breakpoint classes of the app's size before composing: the widgets are
        styled once, for the layout they are shown in. (Textual sets them on the screen's first
        resize, after its first layout: every widget was restyled and the screen laid out
        again: 5-10 ms of a screen's opening key.)"""
        self.update_classes(self.breakpoint_classes(self.app.size), update=False)
        await super()._compose()

    def _update_auto_focus(self) -> None:
        """Textual's auto-focus, but a widget these classes hide does not keep it: it gives it
        up as it did when the first resize hid it (Textual's ``focusable`` looks at the
        visibility, not at the display)."""
        super()._update_auto_focus()
        focused = self.focused
        if focused is not None and not all(
            node.display
            for node in focused.ancestors_with_self
            if isinstance(node, Widget) and node is not self
        ):
            focused.blur()

    def when_shown(self, start: Callable[[], object]) -> None:
        """Run ``start`` (what the screen reads to show: the database, a file) now; on a
        screen built ahead and not shown yet, as it is first shown, before its first layout."""
        if self.built_ahead and not self._shown_once:
            self._starts_waiting = [*(self._starts_waiting or []), start]
        else:
            start()

    @on(events.Mount)
    def _frozen_once_built_ahead(self) -> None:
        """A screen built ahead, mounted: its widgets stay out of the collector's full passes
        (kept off the stack, they were re-scanned in the keys of every other screen: the runs
        list's ``r`` 35 -> 90 ms p95); given back once it closes."""
        if self.built_ahead:
            self.haf_app.freeze_after_load(self)

    @on(events.ScreenResume)
    def _start_on_first_show(self) -> None:
        """(Before Textual's own handler, which restyles, lays out and draws the screen.)"""
        self._shown_once = True
        starts, self._starts_waiting = self._starts_waiting or [], None
        for start in starts:
            start()

    def breakpoint_classes(self, size: Size) -> dict[str, bool]:
        """Which of the screen's breakpoint classes apply at ``size`` (as Textual's resize
        sets them)."""
        horizontal = self.HORIZONTAL_BREAKPOINTS
        vertical = self.VERTICAL_BREAKPOINTS
        horizontal = (self.app.HORIZONTAL_BREAKPOINTS if horizontal is None else horizontal) or []
        vertical = (self.app.VERTICAL_BREAKPOINTS if vertical is None else vertical) or []
        classes = {name: False for _, name in [*horizontal, *vertical]}
        for name in self._get_breakpoint_classes(size.width, horizontal):
            classes[name] = True
        for name in self._get_breakpoint_classes(size.height, vertical):
            classes[name] = True
        return classes

    @property
    def haf_app(self) -> HafApp:
        """The app, with its runs and database access."""
        return cast("HafApp", self.app)

    def shown_metrics(self) -> Sequence[MetricSpec]:
        """The metrics this screen shows, which ``?`` defines (empty: the default ones)."""
        return ()

    def shown_to_user(self) -> bool:
        """Whether any of this screen shows: it is on top, or every screen above it lets it
        show through (a dialog's see-through background). Textual's ``is_current`` also holds
        for the screen right under an opaque one, which the user does not see."""
        stack = self.app.screen_stack
        if self not in stack:
            return False
        above = stack[stack.index(self) + 1 :]
        return all(screen.styles.background.a < 1 for screen in above)

    def poll_due(self) -> bool:
        """Whether a periodic re-read should run now (the screen is shown); while another
        process writes, a fresh snapshot is taken first, at most every
        :data:`SNAPSHOT_SECONDS`."""
        if not self.shown_to_user():
            return False
        reader = self.reader
        if reader.reads_copy and time.monotonic() - self._snapshot_taken >= SNAPSHOT_SECONDS:
            self._snapshot_taken = time.monotonic()
            reader.refresh()
        return True

    def open_run(self, run_id: str, status: str | None) -> None:
        """A run still going (started here, or stored as running or created) opens its live
        progress; any other run, the explorer."""
        session = self.haf_app.session
        live = session.find(run_id) if session is not None else None
        if (live is not None and live.active) or status in {"running", "created"}:
            from haf_tui.tui.screens.monitor import MonitorScreen

            self.app.push_screen(MonitorScreen(run_id))
        else:
            from haf_tui.tui.screens.explorer import ExplorerScreen

            self.app.push_screen(ExplorerScreen(run_id))

    @property
    def reader(self) -> StoreReader:
        """The app's read access to the database."""
        return self.haf_app.reader

    def on_unmount(self) -> None:
        """Tell the app (it may hand what this screen held back to the collector)."""
        self.haf_app.screen_closed(self)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Forward a failed worker's error, as one line, to the app."""
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            error = event.worker.error
            self.post_message(WorkFailed(first_line(error)))
            self.worker_failed(event.worker.group, error)

    def worker_failed(self, group: str, error: BaseException) -> None:
        """Say so where this screen waits for a worker of ``group`` that failed (its
        "loading …" line would stay forever): screens with such a line say what failed there
        (:func:`failure_text`); the app's notification comes all the same."""

    @on(FullValueRequested)
    def show_full_value(self, message: FullValueRequested) -> None:
        """A value a widget shows cut, in full in a modal."""
        message.stop()
        self.app.push_screen(FullValueScreen(message.title, message.value))
