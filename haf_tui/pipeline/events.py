"""Progress events a run publishes; the CLI draws them as progress bars, the TUI as widgets."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

EventKind = Literal[
    "run-started",
    "generation-started",
    "token",
    "generation",
    "instance",
    "paused",
    "resumed",
    "run-finished",
    "log",
]


@dataclass(frozen=True)
class ProgressEvent:
    """Where a run stands: the stage just finished, counts, speed and time left."""

    kind: EventKind
    run_id: str
    stage: str = ""
    instance_id: str = ""
    instances_done: int = 0
    instances_total: int = 0
    generations_done: dict[str, int] = field(default_factory=dict)
    generations_expected: dict[str, int] = field(default_factory=dict)
    """Per stage: the generations the run is expected to need (an estimate where growing)."""
    generations_planned: dict[str, int] = field(default_factory=dict)
    """Per stage: the generations the run is known to need (at least that many where
    growing): every instance's plans as far as they know."""
    growing: tuple[str, ...] = ()
    """The stages whose planned total may still grow (the others' are exact)."""
    sub_index: int = -1
    tokens_per_second: float = 0.0
    """Generated tokens per second (``rates["tokens"]``)."""
    rates: dict[str, float] = field(default_factory=dict)
    """Per second, for each rate unit of the run's stages: ``tokens`` generated, ``texts``
    scored by teacher forcing."""
    eta_seconds: float | None = None
    message: str = ""
    """A log line; for ``token`` events the token's text."""


class ProgressListener(Protocol):
    """Anything that takes progress events (called from the thread that runs the pipeline)."""

    def __call__(self, event: ProgressEvent) -> None: ...


def ignore_progress(event: ProgressEvent) -> None:
    """A listener that drops every event."""
