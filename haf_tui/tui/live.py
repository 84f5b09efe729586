"""Runs the app executes: what to run (:class:`RunJob`), where each stands (:class:`LiveRun`,
updated from the pipeline's progress events) and how events reach the app in batches.

Plain Python (no widgets): the run worker posts batches of events, the app applies them to
the :class:`LiveRun` records, and the monitor screen draws those records.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from haf_tui.pipeline.events import ProgressEvent
from haf_tui.pipeline.runner import RunControl
from haf_tui.pipeline.runs import RunRequest

OUTPUT_KEEP_CHARS = 4000
LOG_KEEP_LINES = 500
ACTIVE = frozenset({"queued", "waiting", "loading", "running", "paused", "stopping"})


@dataclass
class RunJob:
    """One run to start or resume, as the monitor labels it."""

    label: str
    request: RunRequest
    close_models: bool = True
    """Free the model when the run ends (False: the caller keeps using ``preloaded``)."""
    estimate: str | None = None
    """The wizard's time estimate (shown until the run's first instances give an ETA)."""


@dataclass(frozen=True)
class StoredProgress:
    """What the store says of a run another process writes: counts, totals and time."""

    run_id: str
    status: str
    instances_done: int
    instances_total: int
    done: Mapping[str, int]
    """Generations stored per stage."""
    planned: Mapping[str, int]
    expected: Mapping[str, int]
    growing: tuple[str, ...]
    tokens: Mapping[str, int]
    """Output tokens stored per stage."""
    units: Mapping[str, str]
    """Each stage's rate unit (``tokens`` or ``texts``)."""
    seconds_running: float
    since_update: float


@dataclass
class LiveRun:
    """Where one job stands, as the monitor shows it."""

    label: str
    run_id: str | None = None
    status: str = "queued"
    reason: str = ""
    """Why it waits (the database's holder) or failed, in full, as the monitor shows it."""
    instances_done: int = 0
    instances_total: int = 0
    generations_done: dict[str, int] = field(default_factory=dict)
    generations_expected: dict[str, int] = field(default_factory=dict)
    generations_planned: dict[str, int] = field(default_factory=dict)
    """Per stage, the generations known to be needed (a stage absent: only estimated)."""
    growing: tuple[str, ...] = ()
    """The stages whose planned total may still grow."""
    rates: dict[str, float] = field(default_factory=dict)
    """The last measured rate per unit (``tokens``, ``texts``) per second."""
    current: str = ""
    output: str = ""
    log: deque[str] = field(default_factory=lambda: deque(maxlen=LOG_KEEP_LINES))
    log_total: int = 0
    started: float | None = None
    ended: float | None = None
    estimate: str | None = None
    """The wizard's estimate of the whole run, until the first instances finish."""
    done_at_start: int | None = None
    """Instances already done when this run (or resume) started."""
    generations_at_start: int = 0
    """Generations already stored when this run (or resume) started."""
    seconds_before: float = 0.0
    """The running time a resumed run had before this session (its stored record's)."""

    @classmethod
    def watched(
        cls,
        label: str,
        stored: StoredProgress,
        *,
        now: float | None = None,
    ) -> LiveRun:
        """A run another process writes (or one left unfinished), as its stored rows say: its
        running time is what its writers stored, and while one runs the seconds since it last
        wrote the run's row; rates and the ETA are paced over that whole time (every session:
        a resumed run's earlier ones too)."""
        now = time.monotonic() if now is None else now
        running = stored.status == "running"
        elapsed = stored.seconds_running + (stored.since_update if running else 0.0)
        work: dict[str, float] = {}
        for stage, made in stored.done.items():
            unit = stored.units.get(stage, "tokens")
            work[unit] = work.get(unit, 0.0) + (
                made if unit == "texts" else stored.tokens.get(stage, 0)
            )
        rates = {unit: value / elapsed for unit, value in work.items() if elapsed > 0}
        return cls(
            label,
            run_id=stored.run_id,
            status=stored.status,
            instances_done=stored.instances_done,
            instances_total=stored.instances_total,
            generations_done=dict(stored.done),
            generations_expected=dict(stored.expected),
            generations_planned=dict(stored.planned),
            growing=tuple(stored.growing),
            rates=rates,
            started=now - elapsed if elapsed > 0 or running else None,
            ended=None if running else now,
            done_at_start=0,
        )

    @property
    def active(self) -> bool:
        """Queued, waiting for the database, loading, running, paused or stopping."""
        return self.status in ACTIVE

    def elapsed(self) -> float:
        """Seconds since the run started (to its end when it ended)."""
        if self.started is None:
            return 0.0
        return (self.ended or time.monotonic()) - self.started

    def total_elapsed(self) -> float:
        """The run's whole running time: before a resume, and in this session."""
        return self.seconds_before + self.elapsed()

    def eta(self) -> float | None:
        """Seconds left: when every stage's total is exact (the judge's, classify's), at the
        pace of the generations made since the run started; else at that of the instances
        finished since (None before the first one). Revised at every look, so it counts down
        and follows the run."""
        if self.started is None or self.done_at_start is None:
            return None
        planned = sum(self.generations_planned.values())
        if planned and not self.growing:
            made = sum(self.generations_done.values())
            made_here = made - self.generations_at_start
            if made_here > 0:
                return self.elapsed() * max(planned - made, 0) / made_here
        finished_here = self.instances_done - self.done_at_start
        if finished_here <= 0:
            return None
        remaining = max(self.instances_total - self.instances_done, 0)
        return self.elapsed() * remaining / finished_here

    def add_log(self, line: str) -> None:
        """A time-stamped log line."""
        self.log.append(f"{time.strftime('%H:%M:%S')} {line}")
        self.log_total += 1

    def new_log_lines(self, seen: int) -> list[str]:
        """The lines added after the first ``seen`` (as many as are still kept)."""
        fresh = min(self.log_total - seen, len(self.log))
        return list(self.log)[len(self.log) - fresh :] if fresh > 0 else []

    def apply(self, event: ProgressEvent) -> None:
        """Take one progress event of the pipeline."""
        if event.kind == "token":
            self.output = (self.output + event.message)[-OUTPUT_KEEP_CHARS:]
            return
        self.instances_done = event.instances_done
        self.instances_total = event.instances_total
        self.generations_done = dict(event.generations_done)
        self.generations_expected = dict(event.generations_expected)
        self.generations_planned = dict(event.generations_planned)
        self.growing = tuple(event.growing)
        rates = event.rates or {"tokens": event.tokens_per_second}
        if any(rate > 0 for rate in rates.values()):
            self.rates = dict(rates)
        if event.kind == "instance":
            self.add_log(f"instance {event.instance_id}: {event.message}")
        elif event.kind == "generation-started":
            sub = f"[{event.sub_index + 1}]" if event.sub_index >= 0 else ""
            self.current = f"{event.instance_id} · {event.stage}{sub}"
            self.output = ""
        elif event.kind == "run-started":
            self.status = "running"
            self.started = self.started or time.monotonic()
            if self.done_at_start is None:
                self.done_at_start = event.instances_done
                self.generations_at_start = sum(event.generations_done.values())
            self.add_log(f"run {event.run_id} started: {event.message}")
        elif event.kind == "paused":
            self.status = "paused"
            self.add_log("paused before the next generation")
        elif event.kind == "resumed":
            self.status = "running"
            self.add_log("resumed")
        elif event.kind == "run-finished":
            self.status = event.message or "finished"
            self.ended = time.monotonic()
        elif event.kind == "log":
            self.add_log(event.message)


@dataclass
class LiveSession:
    """The jobs one start of the wizard queued, run one after another."""

    jobs: list[RunJob]
    runs: list[LiveRun]
    control: RunControl = field(default_factory=RunControl)

    @classmethod
    def of(cls, jobs: list[RunJob]) -> LiveSession:
        """A session with a queued :class:`LiveRun` per job."""
        return cls(
            jobs,
            [
                LiveRun(job.label, run_id=job.request.resume_run_id, estimate=job.estimate)
                for job in jobs
            ],
        )

    @property
    def active(self) -> bool:
        """Whether any of its runs is still going or waiting."""
        return any(run.active for run in self.runs)

    def current(self) -> LiveRun:
        """The run going now (else the last one)."""
        return next((run for run in self.runs if run.active), self.runs[-1])

    def find(self, run_id: str) -> LiveRun | None:
        """The live run with this id, if this session runs it."""
        return next((run for run in self.runs if run.run_id == run_id), None)


class EventBatcher:
    """Collects progress events from the pipeline's thread and hands them on in batches: at
    once for events that change counts, at most every ``interval`` seconds for tokens."""

    def __init__(self, send: Callable[[list[ProgressEvent]], None], interval: float = 0.05):
        self.send = send
        self.interval = interval
        self._pending: list[ProgressEvent] = []
        self._last_sent = 0.0
        self._lock = threading.Lock()

    def __call__(self, event: ProgressEvent) -> None:
        """Take one event (from the pipeline's thread)."""
        with self._lock:
            self._pending.append(event)
            now = time.monotonic()
            if event.kind == "token" and now - self._last_sent < self.interval:
                return
            batch, self._pending = self._pending, []
            self._last_sent = now
        self.send(batch)

    def flush(self) -> None:
        """Send what is left."""
        with self._lock:
            batch, self._pending = self._pending, []
        if batch:
            self.send(batch)
