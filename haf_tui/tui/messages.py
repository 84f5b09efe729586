"""Messages that thread workers post to the app (workers never touch widgets directly)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from textual.message import Message
from textual.strip import Strip

from haf_tui.pipeline.events import ProgressEvent
from haf_tui.store.records import RunRecord
from haf_tui.tui.metrics_data import MetricsData


@dataclass
class QueryFinished(Message):
    """A read query finished: its columns and rows (or one page of them)."""

    request: str
    columns: list[str]
    rows: list[tuple[Any, ...]]
    total: int | None = None


@dataclass
class WorkFailed(Message):
    """A worker failed; ``message`` is one line for the user."""

    message: str


@dataclass
class RunUpdate(Message):
    """A run the app executes moved on: pipeline events and/or a new status or run id."""

    job_index: int
    events: list[ProgressEvent] = field(default_factory=list)
    status: str | None = None
    run_id: str | None = None
    log: str | None = None
    label: str | None = None
    """What the monitor names the run by (a resumed run: its model file, once read)."""
    seconds_before: float | None = None
    """A resumed run's running time before this session."""
    reason: str | None = None
    """Why the run waits or failed, in full (the monitor shows it); "" clears it."""

    @classmethod
    def resumed(cls, job_index: int, record: RunRecord) -> RunUpdate:
        """A resumed run, read: named by its model file, timed from its first start."""
        return cls(job_index, label=record.model_file, seconds_before=record.seconds_running)


@dataclass
class DownloadProgress(Message):
    """Bytes of a model download done so far (``total`` None while unknown)."""

    done: int
    total: int | None


@dataclass
class FullValueRequested(Message):
    """A widget asks its screen to show a value in full (a row or cell shown cut with "…")."""

    title: str
    value: str


DrawKey = tuple[str, tuple[str, ...], str, int, int]
"""What a drawn panel depends on: pane, runs, pooling, histogram metric, width."""


@dataclass
class MetricsLoaded(Message):
    """The worker's prepared data."""

    data: MetricsData


@dataclass
class PanelDrawn(Message):
    """A panel rendered to lines off the event loop."""

    key: DrawKey
    lines: list[Strip]
