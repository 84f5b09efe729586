"""Run monitor: progress per stage, speed and time left, the answer being generated, a log;
pause, cancel (the run stays resumable) and resume.

Live mode shows the runs this app executes (drawn from the app's :class:`LiveSession`).
Watch mode shows a run another process writes (or one left unfinished), read from the database
every few seconds.
"""

from __future__ import annotations

from collections import Counter
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import DataTable, Header, Static

from haf_tui.methods.registry import run_stages, stage_units
from haf_tui.pipeline.planning import format_duration
from haf_tui.pipeline.totals import InstanceCounts, fresh_counts, stored_totals
from haf_tui.store.readers import run_progress
from haf_tui.tui.live import LiveRun, LiveSession, StoredProgress
from haf_tui.tui.messages import QueryFinished
from haf_tui.tui.screens.base import HafScreen
from haf_tui.tui.screens.confirm import ConfirmScreen
from haf_tui.tui.widgets.fit_columns import FitColumn
from haf_tui.tui.widgets.key_footer import KeyFooter
from haf_tui.tui.widgets.measured_table import MeasuredTable
from haf_tui.tui.widgets.stage_progress import StageProgress, pace_text
from haf_tui.tui.widgets.wrapped_log import WrappedLog

WATCH_SECONDS = 3.0
JOB_COLUMNS = ("model", "run", "status", "instances", "elapsed")
JOB_FIT = (
    FitColumn("model", min_width=12, rank=0),
    FitColumn("run", min_width=10, rank=3, cut_middle=True),
    FitColumn("status", rank=1),
    FitColumn("instances", rank=2),
    FitColumn("elapsed", rank=4),
)
"""The jobs table on a narrow screen: the model and run cut with "…" before anything goes."""


class MonitorScreen(HafScreen[None]):
    """Live progress of the runs started here, or of one run another process writes."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back"),
        Binding("p", "pause", "Pause/resume"),
        Binding("C", "cancel", "Cancel run"),
        Binding("R", "resume", "Resume run"),
        Binding("e", "explore", "Explore"),
        Binding("m", "metrics", "Metrics"),
    ]
    DEFAULT_CSS = """
    MonitorScreen #mon-stats { height: auto; padding: 0 1; }  /* (wraps: elapsed whole) */
    MonitorScreen #mon-note { height: auto; padding: 0 1; color: $text-muted; }
    MonitorScreen #mon-panes { height: 1fr; min-height: 6; }
    MonitorScreen #mon-output-box { width: 1fr; border: round $primary; }
    MonitorScreen #mon-log { width: 1fr; border: round $secondary; }
    MonitorScreen.-narrow #mon-panes { layout: vertical; }
    """

    def __init__(self, run_id: str | None = None) -> None:
        super().__init__()
        self.watch_run_id = run_id
        self.HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]
        self._log_seen: dict[int, int] = {}
        self._shown_index: int | None = None
        self._watch_status = ""
        self._watch_fresh: dict[str, InstanceCounts] | None = None
        """What the watched run's instances' plans knew before any answer (read once)."""

    @property
    def session(self) -> LiveSession | None:
        """The app's runs (None in watch mode)."""
        session = self.haf_app.session
        if session is None or (self.watch_run_id and session.find(self.watch_run_id) is None):
            return None
        return session

    def compose(self) -> ComposeResult:
        """Jobs, bars, a stats line, the output and the log."""
        yield Header()
        yield MeasuredTable(id="mon-jobs", cursor_type="row", show_cursor=False)
        yield StageProgress(id="mon-bars")
        yield Static("", id="mon-stats")
        yield Static("", id="mon-note")
        with Horizontal(id="mon-panes"):
            with VerticalScroll(id="mon-output-box"):
                yield Static("", id="mon-output")
            yield WrappedLog(id="mon-log", max_lines=500)
        yield KeyFooter()

    def on_mount(self) -> None:
        """Draw the session, or start watching the database."""
        self.query_one("#mon-jobs", DataTable).add_columns(*JOB_COLUMNS)  # (until a run shows)
        self.query_one("#mon-output-box").border_title = "output"
        self.query_one("#mon-log").border_title = "log"
        if self.session is not None:
            self.sub_title = "runs started here"
            self.refresh_live(status_changed=True)
            self.set_interval(1.0, self.tick)
        else:
            self.sub_title = f"run {self.watch_run_id} (read from the database)"
            self.query_one("#mon-jobs").display = False
            self.query_one("#mon-panes").display = False
            self.poll_database()
            self.set_interval(WATCH_SECONDS, self.poll_database)

    # -- live mode -------------------------------------------------------------------------------

    def tick(self) -> None:
        """Once a second: elapsed times move on."""
        if self.session is not None:
            self.refresh_live(status_changed=True)

    def shown_run(self) -> tuple[int, LiveRun] | None:
        """The run drawn in detail: the one going, else the last."""
        session = self.session
        if session is None:
            return None
        current = session.current()
        return session.runs.index(current), current

    def refresh_live(self, *, status_changed: bool = False) -> None:
        """Redraw from the app's live records (called by the app on every update)."""
        session, shown = self.session, self.shown_run()
        if session is None or shown is None:
            return
        index, live = shown
        if status_changed:
            self._draw_jobs(session)
        stages = tuple(live.generations_expected) or None
        self.query_one(StageProgress).show(
            (live.instances_done, live.instances_total),
            live.generations_done,
            live.generations_expected,
            stages,
            planned=live.generations_planned,
            growing=live.growing,
        )
        self.query_one("#mon-stats", Static).update(self._stats(live))
        self.query_one("#mon-note", Static).update(self._note(live))
        if self._shown_index != index:
            self._shown_index = index
            self.query_one("#mon-log", WrappedLog).clear()
            self._log_seen[index] = max(live.log_total - len(live.log), 0)
        lines = live.new_log_lines(self._log_seen.get(index, 0))
        self._log_seen[index] = live.log_total
        log = self.query_one("#mon-log", WrappedLog)
        for line in lines:
            log.add_line(line)
        box = self.query_one("#mon-output-box", VerticalScroll)
        box.border_title = f"output · {live.current}" if live.current else "output"
        self.query_one("#mon-output", Static).update(Text(live.output))
        box.scroll_end(animate=False)

    def _draw_jobs(self, session: LiveSession) -> None:
        rows = [
            (
                run.label,
                run.run_id or "—",
                run.status,
                f"{run.instances_done}/{run.instances_total or '?'}",
                format_duration(run.total_elapsed()) if run.started else "—",
            )
            for run in session.runs
        ]
        self.query_one("#mon-jobs", MeasuredTable).fill_fitted(JOB_FIT, rows)

    def on_resize(self) -> None:
        """Another width: the jobs table fitted again."""
        session = self.session
        if session is not None:
            self.call_after_refresh(self._draw_jobs, session)

    @staticmethod
    def _stats(live: LiveRun) -> Text:
        return pace_text(live)

    @staticmethod
    def _note(live: LiveRun) -> str:
        if live.status == "waiting":  # (who holds the file, in full: it wraps)
            return f"{live.reason} It starts by itself when the file frees · C stops waiting"
        if live.status == "failed" and live.reason:
            resume = f" · R resumes it here, or haf run --resume {live.run_id}"
            return f"failed: {live.reason}{resume if live.run_id else ''}"
        if live.active:
            return (
                "p pauses · C cancels (the run stays resumable) · quitting the app cancels it "
                "too: a run started here survives the app only as a resumable run"
            )
        if live.status == "finished":
            return "finished: e explores the run, m shows its metrics"
        if live.run_id and live.status in {"interrupted", "failed"}:
            return f"{live.status}: R resumes it here, or haf run --resume {live.run_id}"
        return ""

    # -- watch mode ------------------------------------------------------------------------------

    def poll_database(self) -> None:
        """Read the watched run's counts (thread worker)."""
        if self.session is None and self.watch_run_id:
            self.load_counts(self.watch_run_id)

    @work(thread=True, exclusive=True, exit_on_error=False, group="monitor-watch")
    def load_counts(self, run_id: str) -> None:
        """The run's status, generations per stage, totals and time, from a fresh read: the
        totals from its stored generations (an instance's plans read once)."""
        self.reader.refresh()  # (reading a snapshot: a fresh one if the file moved on)
        with self.reader.reading(linger=False) as store:
            progress = run_progress(store, run_id)
            if progress is None:
                return
            config = progress.config
            if self._watch_fresh is None:
                self._watch_fresh = fresh_counts(
                    config, store.instances(config.dataset_id, config.limit)
                )
            keys, finished = store.generation_keys(run_id), store.finished_instances(run_id)
        totals = stored_totals(config, self._watch_fresh, keys, finished)
        stored = StoredProgress(
            run_id, progress.status, progress.done, progress.planned,
            dict(Counter(progress.stages)), totals.planned(), totals.expected(),
            totals.growing(), progress.stage_tokens, dict(stage_units(config)),
            progress.seconds_running, progress.since_update,
        )  # fmt: skip
        rows = [(stored, progress.model_file, tuple(run_stages(config)))]
        self.post_message(QueryFinished("watch", [], rows))

    @on(QueryFinished)
    def show_counts(self, message: QueryFinished) -> None:
        """Draw the watched run: its bars, and its pace and time from the stored rows."""
        if message.request != "watch" or not message.rows:
            return
        stored, model, its_stages = message.rows[0]
        live = LiveRun.watched(model, stored)
        self._watch_status = live.status
        self.query_one(StageProgress).show(
            (live.instances_done, live.instances_total),
            live.generations_done,
            live.generations_expected,
            its_stages,
            planned=live.generations_planned,
            growing=live.growing,
        )
        self.query_one("#mon-stats", Static).update(pace_text(live))
        status = live.status
        note = f"{model}: " + (
            f"counts and time read every {WATCH_SECONDS:.0f} s from the database (another "
            "process writes this run). If no process runs it any more (it was killed), R "
            "resumes it here."
            if status in {"running", "created"}
            else f"{status}: R resumes it here"
            if status in {"interrupted", "failed"}
            else status
        )
        self.query_one("#mon-note", Static).update(note)

    # -- actions ---------------------------------------------------------------------------------

    def action_back(self) -> None:
        """Back (a run started here goes on; the runs list shows it)."""
        self.app.pop_screen()

    def action_pause(self) -> None:
        """Pause before the next generation, or go on."""
        session = self.session
        if session is None or not session.active:
            return
        pause = session.control.pause
        if pause.is_set():
            pause.clear()
            self.notify("resuming")
        else:
            pause.set()
            self.notify("pausing after the generation in flight")

    def action_cancel(self) -> None:
        """Ask, then cancel now: the generation in flight is dropped, the run stays resumable."""
        session = self.session
        if session is None or not session.active:
            return
        question = "Stop the run now? The answer in flight is dropped; R resumes it later."
        if session.current().status == "waiting":
            question = "Stop waiting for the database? Nothing has started; n starts it again."
        self.app.push_screen(
            ConfirmScreen("Cancel the run?", question, yes="cancel it", no="keep running"),
            self._cancel_answered,
        )

    def _cancel_answered(self, cancel: bool | None) -> None:
        session = self.session
        if cancel and session is not None and session.active:
            session.control.cancel()
            self.notify("cancelled: the run stays resumable (R, or haf run --resume)")

    def _run_id(self) -> str | None:
        shown = self.shown_run()
        return shown[1].run_id if shown is not None else self.watch_run_id

    def action_resume(self) -> None:
        """Resume an interrupted (or orphaned) run in this app."""
        run_id = self._run_id()
        shown = self.shown_run()
        if run_id is None or (shown is not None and shown[1].active):
            return
        if shown is None and self._watch_status == "finished":
            self.notify("that run is finished", severity="warning")
            return
        self.app.pop_screen()
        self.haf_app.resume_run(run_id)

    def action_explore(self) -> None:
        """Explore the run shown."""
        run_id = self._run_id()
        if run_id:
            from haf_tui.tui.screens.explorer import ExplorerScreen

            self.app.push_screen(ExplorerScreen(run_id))

    def action_metrics(self) -> None:
        """The metric panels of the run shown."""
        run_id = self._run_id()
        if run_id:
            from haf_tui.tui.screens.metrics import MetricsScreen

            self.app.push_screen(MetricsScreen([run_id]))
