"""Progress bars of a run: instances, then one per stage with done / expected generations; and
its pace line: the observed rate and ETA once measured (the wizard's estimate until then)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Label, ProgressBar

from haf_tui.config import RunConfig
from haf_tui.methods.registry import SUITES, first_tasks, stage_titles
from haf_tui.pipeline.estimate import rough_duration
from haf_tui.pipeline.planning import format_duration
from haf_tui.tui.live import LiveRun

STAGE_TITLES = {"instances": "instances", **stage_titles()}
STAGE_NAMES = tuple(STAGE_TITLES)[1:]
EXACT_STAGES = frozenset(task.stage for _, task in first_tasks(RunConfig(suites=tuple(SUITES))))
"""Stages every instance asks for before any answer: their totals are known, not estimated."""


class StageProgress(Vertical):
    """One labelled bar for the instances and one per stage (``≈``: the total is estimated)."""

    DEFAULT_CSS = """
    StageProgress { height: auto; padding: 0 1; }
    StageProgress > Horizontal { height: 1; }
    StageProgress .stage-name { width: 15; }
    StageProgress .stage-count { width: 16; }
    StageProgress ProgressBar { width: 1fr; }
    StageProgress ProgressBar Bar { width: 1fr; }
    """

    def compose(self) -> ComposeResult:
        """A row per bar: name, count, bar."""
        for key in ("instances", *STAGE_NAMES):
            with Horizontal(id=f"row-{key}"):
                yield Label(STAGE_TITLES[key], classes="stage-name")
                yield Label("—", id=f"count-{key}", classes="stage-count")
                yield ProgressBar(total=None, show_eta=False, show_percentage=True, id=f"bar-{key}")

    def show(
        self,
        instances: tuple[int, int],
        done: dict[str, int],
        expected: dict[str, int],
        stages: tuple[str, ...] | None = None,
    ) -> None:
        """Update every bar; stages not in ``stages`` (the run's) are hidden."""
        self._set("instances", instances[0], instances[1] or None, estimated=False)
        for stage in STAGE_NAMES:
            row = self.query_one(f"#row-{stage}", Horizontal)
            row.display = stages is None or stage in stages
            total = expected.get(stage)
            estimated = stage not in EXACT_STAGES
            self._set(stage, done.get(stage, 0), total or None, estimated=estimated)

    def _set(self, key: str, done: int, total: int | None, *, estimated: bool) -> None:
        if total is not None and done > total:
            total = done
        approx = "≈" if estimated and total is not None else ""
        count = f"{done}/{approx}{total}" if total is not None else str(done)
        self.query_one(f"#count-{key}", Label).update(count)
        bar = self.query_one(f"#bar-{key}", ProgressBar)
        bar.display = total is not None  # no endless animation for an unknown total
        if total is not None:
            bar.update(total=total, progress=done)


def pace_text(live: LiveRun) -> Text:
    """Status, then the observed rate (``measuring…`` before the first measurement, never a
    rate of 0), the ETA at the observed pace once an instance finished (until then the
    wizard's estimate, a range), and the time elapsed."""
    text = Text(live.status, style="bold")
    if live.tokens_per_second > 0:
        text.append(f"  {live.tokens_per_second:.1f} tok/s")
    elif live.active:
        text.append("  measuring…")
    eta = live.eta()
    if eta is not None and live.active:
        text.append(f"  ETA about {rough_duration(eta)} (observed pace)")
    elif live.estimate and live.active:
        text.append(f"  estimated {live.estimate} (until the first instance finishes)")
    if live.started is not None:
        text.append(f"  elapsed {format_duration(live.elapsed())}")
    return text
