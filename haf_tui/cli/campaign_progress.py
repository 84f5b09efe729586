"""``haf campaign run``'s progress while cells run side by side: one line per cell that runs
(its label, a bar of its instances, done/planned, time, generations, rates and ETA) under the
lines the campaign prints; a cell's line goes when it ends (its ✓ line stays)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from haf_tui.pipeline.events import ProgressEvent, ProgressListener
from haf_tui.pipeline.progress_text import rate_text


class CellLines:
    """The live lines of the cells that run (a context: shown while it is entered)."""

    def __init__(self, console: Console) -> None:
        self.progress = Progress(
            TextColumn("{task.description}", markup=False),  # (a label is text, never markup)
            BarColumn(bar_width=20),
            TextColumn("{task.fields[count]}"),
            TimeElapsedColumn(),
            TextColumn("{task.fields[detail]}", markup=False),
            console=console,
            transient=True,
        )

    def __enter__(self) -> CellLines:
        self.progress.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.progress.stop()

    @contextmanager
    def cell(self, label: str) -> Iterator[ProgressListener]:
        """A line for the cell ``label`` while its run runs; the listener that moves it."""
        task = self.progress.add_task(label, total=None, count="", detail="starting …")
        try:
            yield lambda event: self._show(task, event)
        finally:
            self.progress.remove_task(task)

    def _show(self, task: TaskID, event: ProgressEvent) -> None:
        generations = sum(event.generations_done.values())
        rates = rate_text(event.rates) or "measuring…"
        eta = f" · ETA {event.eta_seconds:.0f}s" if event.eta_seconds is not None else ""
        self.progress.update(
            task,
            completed=event.instances_done,
            total=event.instances_total or None,
            count=f"{event.instances_done}/{event.instances_total} instances",
            detail=f"{generations} generations · {rates}{eta}",
        )
