"""A legend line: the six metrics with their better direction and the marks a screen draws
(their meanings come from :mod:`haf_tui.tui.definitions`; ``?`` says them in full)."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from haf_tui.tui.definitions import marks_legend, metrics_legend


class Legend(Static):
    """The metrics' directions and ``marks`` (names of :data:`~haf_tui.tui.definitions.MARKS`)
    in a dim line that wraps; ``show`` changes the marks."""

    DEFAULT_CSS = """
    Legend { height: auto; max-height: 3; padding: 0 1; color: $text-muted; }
    """

    def __init__(self, marks: tuple[str, ...] = (), *, id: str | None = None) -> None:
        super().__init__(self.legend_text(marks), id=id, markup=False)
        self.marks = marks
        self.metrics: str | None = None

    @staticmethod
    def legend_text(marks: tuple[str, ...], metrics: str | None = None) -> Text:
        """The legend: metrics (``metrics``: the line of other metrics than the six; empty:
        none), then the marks, then where the definitions are."""
        shown = metrics_legend() if metrics is None else metrics
        parts = [shown] if shown else []
        if marks:
            parts.append(marks_legend(marks))
        parts.append("? definitions")
        return Text(" · ".join(parts))

    def show(self, marks: tuple[str, ...], metrics: str | None = None) -> None:
        """Show other marks (and ``metrics``: another metrics line; None: the six), redrawn
        only when they change."""
        if (marks, metrics) != (self.marks, self.metrics):
            self.marks, self.metrics = marks, metrics
            self.update(self.legend_text(marks, metrics))
