"""Runs started in the workbench (:class:`~haf_tui.tui.app.HafApp` is this app): jobs run one
after another in a thread worker on the app's writer, their progress posted as
:class:`RunUpdate` messages and applied to their live records, shown by the monitor.

While another process writes the database the jobs wait, queued: the monitor shows "waiting
for haf.duckdb — held by PID … (…)" until the file frees, then they start by themselves (C
stops waiting: nothing started); an error stays on the monitor in full, not only in a toast."""

from __future__ import annotations

from functools import partial

from textual import work
from textual.app import App
from textual.worker import Worker

from haf_tui.pipeline.events import ProgressEvent
from haf_tui.pipeline.models import LoadedModels
from haf_tui.pipeline.runs import RunRequest, execute_run, start_or_resume
from haf_tui.reports import first_with_reasons, instance_rows, rests_on, went_on_said
from haf_tui.store import Store, StoreError
from haf_tui.store.errors import StoppedWaitingError
from haf_tui.store.waiting import POLL_SECONDS, wait_for_writer
from haf_tui.tui.live import EventBatcher, LiveSession, RunJob
from haf_tui.tui.messages import RunUpdate, WorkFailed
from haf_tui.tui.store_reader import StoreReader
from haf_tui.vocabulary import first_line


class RunningApp(App[None]):
    """The app's runs: started, resumed, their progress applied, their monitor."""

    wait_poll_seconds = POLL_SECONDS
    """How often work waiting for the database looks at it again."""

    def __init__(self, reader: StoreReader):
        super().__init__()
        self.reader = reader
        self.session: LiveSession | None = None
        self._session_worker: Worker[None] | None = None

    def action_monitor(self, run_id: str | None = None) -> None:
        """The live progress of ``run_id`` (or of the runs started here)."""
        from haf_tui.tui.screens.monitor import MonitorScreen

        self.push_screen(MonitorScreen(run_id))

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
        """Wait for the database (another process may write it), then load, create (or
        resume) and run each job; posts :class:`RunUpdate` messages only."""
        try:
            self._wait_and_run(session)
        finally:  # (a job never started, the wait stopped or refused: its model freed now)
            for job in session.jobs:
                self._free(job, job.request.preloaded)

    def _wait_and_run(self, session: LiveSession) -> None:
        """Wait for the database, then run the jobs on the app's writer."""
        jobs = range(len(session.jobs))

        def waiting(line: str) -> None:
            for index in jobs:
                self.post_message(RunUpdate(index, status="waiting", log=line, reason=line))

        try:
            store = wait_for_writer(
                lambda: self.reader.writable("run: starting", wait_seconds=0),
                self.reader.path,
                on_waiting=waiting,
                stop=session.control.stop,
                poll_seconds=self.wait_poll_seconds,
            )
        except StoppedWaitingError as exc:
            for index in jobs:
                self.post_message(RunUpdate(index, status="interrupted", log=str(exc), reason=""))
            return
        except StoreError as exc:
            for index in jobs:
                self.post_message(RunUpdate(index, status="failed", log=str(exc), reason=str(exc)))
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
                self._free(job, job.request.preloaded)  # (the wizard's, never used)
                continue
            self.post_message(
                RunUpdate(index, status="loading", log=f"loading {job.label}", reason="")
            )
            models = job.request.preloaded  # (freed below when the job owns it)
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
                said = went_on_line(store, run_id) if summary.status == "finished" else None
                self.post_message(RunUpdate(index, status=summary.status, log=said))
            except Exception as exc:
                line = first_line(exc)
                self.post_message(
                    RunUpdate(index, status="failed", log=f"failed: {line}", reason=line)
                )
                self.post_message(WorkFailed(f"{job.label}: {line}"))
            finally:  # (a run that failed frees its model too, not when garbage-collected)
                self._free(job, models)

    @staticmethod
    def _free(job: RunJob, models: LoadedModels | None) -> None:
        """Close ``models``' backend when the job owns it (:attr:`RunJob.close_models`)."""
        job.request.preloaded = None
        if job.close_models and models is not None:
            models.backend.close()

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
        if message.reason is not None:
            live.reason = message.reason
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


def went_on_line(store: Store, run_id: str) -> str | None:
    """What ``haf run`` says at its end of a finished run with HAF: how many instances went on
    after JUSTIFY, and how many each HAF number rests on (None: no HAF instance went on)."""
    rows = instance_rows(store, run_id)
    if first_with_reasons(rows) is None:
        return None
    return f"{went_on_said(rows)} {rests_on(rows)}"
