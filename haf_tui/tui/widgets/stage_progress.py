"""Progress bars of a run: instances, then one per stage with done / planned generations
(``≥``: the total may still grow, ``≈``: estimated); and its pace line: the observed rate in
each unit of the run's stages and the ETA once measured (the wizard's estimate until then).
Stages and their titles come from the registry: no suite is named here."""

from __future__ import annotations

from collections.abc import Collection

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Label, ProgressBar

from haf_tui.methods.registry import stage_titles
from haf_tui.pipeline.estimate import rough_duration
from haf_tui.pipeline.planning import format_duration
from haf_tui.pipeline.progress_text import StageTotal, rate_text, stage_total
from haf_tui.tui.live import LiveRun


class StageProgress(Vertical):
    """One labelled bar for the instances and one per stage of every method (those of other
    runs hidden)."""

    DEFAULT_CSS = """
    StageProgress { height: auto; padding: 0 1; }
    StageProgress > Horizontal { height: 1; }
    StageProgress .stage-name { width: 15; }
    StageProgress .stage-count { width: 16; }
    StageProgress ProgressBar { width: 1fr; }
    StageProgress ProgressBar Bar { width: 1fr; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.titles = stage_titles()

    def compose(self) -> ComposeResult:
        """A row per bar: name, count, bar."""
        for key, title in {"instances": "instances", **self.titles}.items():
            with Horizontal(id=f"row-{key}"):
                yield Label(title, classes="stage-name")
                yield Label("—", id=f"count-{key}", classes="stage-count")
                yield ProgressBar(total=None, show_eta=False, show_percentage=True, id=f"bar-{key}")

    def show(
        self,
        instances: tuple[int, int],
        done: dict[str, int],
        expected: dict[str, int],
        stages: tuple[str, ...] | None = None,
        *,
        planned: dict[str, int] | None = None,
        growing: Collection[str] = (),
    ) -> None:
        """Update every bar; stages not in ``stages`` (the run's) are hidden. A stage in
        ``planned`` and not ``growing`` has an exact total; others show ``≥`` what is planned
        or ``≈`` what is ``expected``."""
        self._set("instances", instances[0], StageTotal(instances[1] or None))
        for stage in self.titles:
            row = self.query_one(f"#row-{stage}", Horizontal)
            row.display = stages is None or stage in stages
            total = stage_total(stage, planned or {}, growing, expected)
            self._set(stage, done.get(stage, 0), total)

    def _set(self, key: str, done: int, total: StageTotal) -> None:
        self.query_one(f"#count-{key}", Label).update(total.count(done))
        bar = self.query_one(f"#bar-{key}", ProgressBar)
        bar.display = bool(total.total)  # no endless animation for an unknown total
        if total.total:
            bar.update(total=max(total.total, done), progress=done)


def pace_text(live: LiveRun) -> Text:
    """Status, then the observed rate in each unit of the run's stages (``measuring…`` before
    the first measurement, never a rate of 0), the ETA at the observed pace once an instance
    finished (until then the wizard's estimate, a range), and the time elapsed."""
    text = Text(live.status, style="bold")
    rates = rate_text(live.rates)
    if rates:
        text.append(f"  {rates}")
    elif live.active:
        text.append("  measuring…")
    eta = live.eta()
    if eta is not None and live.active:
        text.append(f"  ETA about {rough_duration(eta)} (observed pace)")
    elif live.estimate and live.active:
        text.append(f"  estimated {live.estimate} (until the first instance finishes)")
    if live.started is not None:
        text.append(f"  elapsed {format_duration(live.total_elapsed())}")
        if live.seconds_before:
            text.append(f" ({format_duration(live.elapsed())} since the resume)")
    return text
