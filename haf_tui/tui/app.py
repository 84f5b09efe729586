"""The haf-tui application: screens, key bindings, runs started here, the command palette and
the one handler for worker errors."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import signal
import sys
import termios
import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from haf_tui.methods.loader import ensure_methods
from haf_tui.methods.registry import left_out
from haf_tui.pipeline.events import ProgressEvent
from haf_tui.pipeline.runs import RunRequest, execute_run, start_or_resume
from haf_tui.store import Store, StoreError
from haf_tui.store.pending_annotations import PendingAnnotation, pending, pending_path
from haf_tui.store.pending_annotations import take_notices as pending_notices
from haf_tui.tui.live import EventBatcher, LiveSession, RunJob
from haf_tui.tui.messages import RunUpdate, WorkFailed
from haf_tui.tui.screens.confirm import ConfirmScreen
from haf_tui.tui.screens.help import HelpScreen
from haf_tui.tui.screens.home import HomeScreen
from haf_tui.tui.store_reader import StoreReader
from haf_tui.tui.store_writes import store_kept
from haf_tui.vocabulary import first_line

PENDING_SECONDS = 3.0
"""How often the annotations kept while another process writes are tried again."""


@dataclass
class PendingStored(Message):
    """Pending annotations were stored (``dropped``: those whose run or instance is gone)."""

    stored: list[PendingAnnotation]
    dropped: list[tuple[PendingAnnotation, str]]


REFREEZE_DELAY = 2.0
"""Seconds after a screen that froze its rows closes before they are collected."""


HANG_UP_SIGNALS = (signal.SIGHUP, signal.SIGTERM)
"""Signals that end the app at once (a closed terminal; a polite kill)."""


TERMINAL_CHECK_SECONDS = 1.0


def terminal_alive(stream: Any) -> bool | None:
    """Whether the terminal behind ``stream`` is still there (None: it is not a terminal)."""
    try:
        fd = stream.fileno()
        if not os.isatty(fd):
            return None
        termios.tcgetattr(fd)
    except (termios.error, OSError, ValueError, AttributeError):
        return False
    return True


class HafApp(App[None]):
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
        super().__init__()
        self.reader = reader
        self.session: LiveSession | None = None
        self._session_worker: Worker[None] | None = None
        self._holders: weakref.WeakSet[Screen[Any]] = weakref.WeakSet()

    def on_mount(self) -> None:
        """Start on the runs list; a closed terminal (SIGHUP) or SIGTERM ends the app."""
        self.push_screen(HomeScreen())
        for line in left_out():  # a broken plug-in: said once, the rest works
            self.notify(line, title="method left out", severity="warning", timeout=12)
        self.freeze_after_load()
        self.warm_imports()
        self._storing_pending = False
        self.store_pending_annotations()  # (kept at the last session: stored now if it can)
        self.set_interval(PENDING_SECONDS, self.store_pending_annotations)
        loop = asyncio.get_running_loop()
        for signum in HANG_UP_SIGNALS:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(signum, self.hang_up)
        if not self.is_headless and terminal_alive(sys.__stdin__) is not None:
            self.set_interval(TERMINAL_CHECK_SECONDS, self.check_terminal)

    def check_terminal(self) -> None:
        """A terminal can close without a SIGHUP reaching the app (it is not the process's
        controlling terminal): then its attributes can no longer be read, and the app ends."""
        if not terminal_alive(sys.__stdin__):  # (a hung-up terminal is no tty any more)
            self.hang_up()

    def hang_up(self) -> None:
        """The terminal is gone (SIGHUP) or the app is asked to stop (SIGTERM): cancel a run it
        runs (it stays resumable) and exit at once, asking nothing."""
        if self.session is not None and self.session.active:
            self.session.control.cancel()
        self.exit(return_code=129)

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
        freeze the rest again), not while its keys are still being handled."""
        if screen in self._holders:
            self._holders.discard(screen)
            self.set_timer(REFREEZE_DELAY, self._refreeze)

    @staticmethod
    def _refreeze() -> None:
        gc.unfreeze()
        gc.collect()
        gc.freeze()

    @work(thread=True, exclusive=True, exit_on_error=False, group="warm")
    def warm_imports(self) -> None:
        """Import the other screens and what starting a run needs (llama.cpp, the pipeline) in
        the background, so that they open without waiting for it; posts nothing."""
        import haf_tui.pipeline.choices
        import haf_tui.pipeline.planning
        import haf_tui.pipeline.runs
        import haf_tui.tui.screens.explorer
        import haf_tui.tui.screens.metrics
        import haf_tui.tui.screens.monitor
        import haf_tui.tui.screens.sql
        import haf_tui.tui.screens.wizard  # noqa: F401

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

    def _exit_keeping_pending(self) -> None:
        """Exit; annotations still pending are kept, and a line after the app says so."""
        kept = pending(self.reader.path)
        if not kept:
            self.exit()
            return
        self.exit(
            message=f"{len(kept)} annotation{'s' if len(kept) > 1 else ''} pending (the "
            f"database was in use): kept in {pending_path()}, stored the next time the "
            "workbench opens it"
        )

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

        self.push_screen(WizardScreen())

    def action_sql(self) -> None:
        """The SQL screen."""
        from haf_tui.tui.screens.sql import SqlScreen

        self.push_screen(SqlScreen())

    def action_metrics(self) -> None:
        """The metric panels of every run."""
        from haf_tui.tui.screens.metrics import MetricsScreen

        self.push_screen(MetricsScreen())

    def action_monitor(self, run_id: str | None = None) -> None:
        """The live progress of ``run_id`` (or of the runs started here)."""
        from haf_tui.tui.screens.monitor import MonitorScreen

        self.push_screen(MonitorScreen(run_id))

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

    # -- runs started here ------------------------------------------------------------------------

    def start_runs(self, jobs: list[RunJob]) -> None:
        """Run ``jobs`` one after another in a thread worker and show the monitor."""
        if self.session is not None and self.session.active:
            self.notify("a run is still going: wait for it or cancel it first", severity="error")
            return
        self.session = LiveSession.of(jobs)
        self._session_worker = self.execute_session(self.session)
        self.action_monitor()

    def resume_run(self, run_id: str) -> None:
        """Resume an unfinished run here (its stored config; no duplicates)."""
        self.start_runs([RunJob(f"resume {run_id}", RunRequest(resume_run_id=run_id))])

    @work(thread=True, exclusive=True, exit_on_error=False, group="runs")
    def execute_session(self, session: LiveSession) -> None:
        """Load, create (or resume) and run each job; posts :class:`RunUpdate` messages only."""
        try:
            store = self.reader.writable("run: starting")
        except StoreError as exc:
            for index in range(len(session.jobs)):
                self.post_message(RunUpdate(index, status="failed", log=str(exc)))
            self.post_message(WorkFailed(str(exc)))
            return
        try:  # (the file is held for writing only while the runs write)
            self._run_jobs(store, session)
        finally:
            self.reader.release_writer()

    def _run_jobs(self, store: Store, session: LiveSession) -> None:
        """Each job in turn, on the app's writer."""
        for index, job in enumerate(session.jobs):
            if session.control.stop.is_set():
                self.post_message(RunUpdate(index, status="interrupted", log="not started"))
                continue
            self.post_message(RunUpdate(index, status="loading", log=f"loading {job.label}"))
            try:
                started = start_or_resume(store, job.request)
                run_id, config, models = started.run_id, started.config, started.models
                job.request.preloaded = None
                self.post_message(RunUpdate(index, status="running", run_id=run_id))
                if job.request.resume_run_id:  # named by its model, timed from its start
                    self.post_message(RunUpdate.resumed(index, store.get_run(run_id)))
                batcher = EventBatcher(partial(self._post_events, index))
                summary = execute_run(
                    store,
                    run_id,
                    config,
                    models,
                    listener=batcher,
                    control=session.control,
                    stream_tokens=True,
                )
                batcher.flush()
                self.post_message(RunUpdate(index, status=summary.status))
                if job.close_models:
                    models.backend.close()
            except Exception as exc:
                line = first_line(exc)
                self.post_message(RunUpdate(index, status="failed", log=f"failed: {line}"))
                self.post_message(WorkFailed(f"{job.label}: {line}"))

    def _post_events(self, index: int, events: list[ProgressEvent]) -> None:
        self.post_message(RunUpdate(index, events))

    def on_run_update(self, message: RunUpdate) -> None:
        """Apply a run's progress to its live record and redraw who shows it."""
        if self.session is None:
            return
        live = self.session.runs[message.job_index]
        for event in message.events:
            live.apply(event)
        if message.run_id is not None:
            live.run_id = message.run_id
        live.label = message.label or live.label
        live.seconds_before = message.seconds_before or live.seconds_before
        if message.log:
            live.add_log(message.log)
        if message.status is not None:
            live.status = message.status
            if message.status in {"finished", "interrupted", "failed"} and live.run_id:
                live.add_log(self._ended_line(live.status, live.run_id))
        refresh = getattr(self.screen, "refresh_live", None)
        if callable(refresh):
            refresh(status_changed=message.status is not None or message.run_id is not None)

    @staticmethod
    def _ended_line(status: str, run_id: str) -> str:
        if status == "finished":
            return f"run {run_id} finished: e explores it, m shows its metrics"
        return f"run {run_id} {status}: it is resumable (haf run --resume {run_id}, or R here)"

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A failed app worker becomes one error line (as screens forward theirs)."""
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            error = event.worker.error
            self.post_message(WorkFailed(first_line(error)))

    async def action_quit(self) -> None:
        """Quit; with text typed and not saved in a dialog, or while a run started here is
        going, ask first (quitting cancels the run and leaves it resumable)."""
        lost = [
            what
            for screen in self.screen_stack
            if callable(unsaved := getattr(screen, "unsaved_edits", None)) and (what := unsaved())
        ]
        if lost:
            if isinstance(self.screen, ConfirmScreen) and self.screen.quit_question:
                return  # (already asking)
            self.push_screen(
                ConfirmScreen(
                    "Quit and lose your edits?",
                    f"Quitting loses {lost[-1]}: it is not saved.",
                    yes="quit",
                    no="go back",
                    quit_question=True,
                ),
                self._quit_with_edits_answered,
            )
            return
        await self._quit_now()

    async def _quit_with_edits_answered(self, quit_now: bool | None) -> None:
        if quit_now:
            await self._quit_now()

    async def _quit_now(self) -> None:
        """Quit (the edits' question answered); while a run is going, ask about it."""
        for screen in self.screen_stack:  # (a screen that keeps its edits keeps them now)
            keep = getattr(screen, "keep_on_quit", None)
            if callable(keep):
                keep()
        session = self.session
        if session is None or not session.active or self._session_worker is None:
            self._exit_keeping_pending()
            return
        if isinstance(self.screen, ConfirmScreen):
            return
        question = (
            "Quitting stops the run going now; it stays resumable: R on the runs list (or "
            "haf run --resume RUN_ID) resumes it later."
        )
        self.push_screen(
            ConfirmScreen("Quit while a run is going?", question, yes="quit", no="keep running"),
            self._quit_answered,
        )

    async def _quit_answered(self, quit_now: bool | None) -> None:
        """Cancel the run (it stays resumable), wait for its worker, then exit."""
        if not quit_now:
            return
        session, worker = self.session, self._session_worker
        if session is not None and session.active and worker is not None:
            session.control.cancel()
            self.notify("cancelling the run: it stays resumable", timeout=3)
            await worker.wait()
        self._exit_keeping_pending()

    def on_work_failed(self, message: WorkFailed) -> None:
        """The one handler for worker errors (screens forward theirs): a notification."""
        self.notify(message.message, title="error", severity="error", timeout=8)

    def on_unmount(self) -> None:
        """Stop a run still going (it stays resumable) and close the database."""
        if self.session is not None and self.session.active:
            self.session.control.cancel()
        with contextlib.suppress(RuntimeError):
            loop = asyncio.get_running_loop()
            for signum in HANG_UP_SIGNALS:
                loop.remove_signal_handler(signum)
        self.reader.close()
        gc.unfreeze()


def create_app(db_path: str | Path | None = None) -> HafApp:
    """The app factory shared by ``haf`` and the tests (the methods loaded first, unless the
    program has loaded them)."""
    ensure_methods()
    return HafApp(StoreReader(db_path))
