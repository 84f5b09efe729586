"""A run's progress on a terminal as rich bars: one for the instances (rates and ETA) and one
per stage (done / planned), for ``haf run`` and ``haf campaign run``."""

from __future__ import annotations

from rich.progress import (
    BarColumn,
    Progress,
    ProgressColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from haf_tui.methods.registry import stage_titles
from haf_tui.pipeline.events import ProgressEvent
from haf_tui.pipeline.progress_text import rate_text, stage_total


def progress_columns() -> tuple[ProgressColumn, ...]:
    """A run's progress bars' columns: what, the bar, done/planned, time, rates and ETA."""
    return (
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.fields[count]}"),
        TimeElapsedColumn(),
        TextColumn("{task.fields[detail]}"),
    )


class ProgressBars:
    """One bar for the instances (with the rate in each unit of the run's stages and the
    ETA) and one per stage of the run: done / planned (``≥``: may still grow, ``≈``:
    estimated)."""

    def __init__(self, progress: Progress, stages: list[str]):
        self.progress = progress
        self.instances = progress.add_task("instances", total=None, count="", detail="")
        titles = stage_titles()
        self.stages: dict[str, TaskID] = {
            stage: progress.add_task(
                f"  {titles.get(stage, stage)}", total=None, count="", detail=""
            )
            for stage in stages
        }

    def show(self, event: ProgressEvent) -> None:
        """Draw one progress event."""
        eta = f" · ETA {event.eta_seconds:.0f}s" if event.eta_seconds is not None else ""
        rates = rate_text(event.rates) or "measuring…"
        self.progress.update(
            self.instances,
            completed=event.instances_done,
            total=event.instances_total,
            count=f"{event.instances_done}/{event.instances_total}",
            detail=f"{rates}{eta}",
        )
        for stage, task in self.stages.items():
            done = event.generations_done.get(stage, 0)
            total = stage_total(
                stage, event.generations_planned, event.growing, event.generations_expected
            )
            self.progress.update(
                task,
                completed=done,
                total=max(total.total, done) if total.total else None,
                count=total.count(done),
            )
