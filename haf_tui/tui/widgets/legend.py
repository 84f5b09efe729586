"""A legend line: metrics with their better direction and the marks a screen draws (their
meanings come from :mod:`haf_tui.tui.definitions`; ``?`` says them in full)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets import Static

from haf_tui.methods.declare import MetricSpec
from haf_tui.tui.definitions import marks_legend, metrics_legend

MetricsShown = Sequence[MetricSpec] | str | None
"""What a legend says of metrics: their specs, a line made already (empty: none), or None: the
default methods' metrics."""


def _metrics_line(metrics: MetricsShown) -> str:
    if isinstance(metrics, str):
        return metrics
    return metrics_legend(metrics)


class Legend(Static):
    """The directions of ``metrics`` and ``marks`` (names of
    :data:`~haf_tui.tui.definitions.MARKS`) in a dim line that wraps; ``show`` changes them."""

    DEFAULT_CSS = """
    Legend { height: auto; max-height: 3; padding: 0 1; color: $text-muted; }
    """

    def __init__(
        self, marks: tuple[str, ...] = (), *, metrics: MetricsShown = None, id: str | None = None
    ) -> None:
        super().__init__(self.legend_text(marks, metrics), id=id, markup=False)
        self.marks = marks
        self.metrics: tuple[MetricSpec, ...] | str | None = (
            metrics if metrics is None or isinstance(metrics, str) else tuple(metrics)
        )

    @staticmethod
    def legend_text(marks: tuple[str, ...], metrics: MetricsShown = None) -> Text:
        """The legend: metrics, then the marks, then where the definitions are."""
        parts = [_metrics_line(metrics)]
        if marks:
            parts.append(marks_legend(marks))
        parts.append("? definitions")
        return Text(" · ".join(part for part in parts if part))

    def show(self, marks: tuple[str, ...], metrics: MetricsShown = None) -> None:
        """Show other marks and metrics (None: the default ones; redrawn only on a change)."""
        shown = metrics if metrics is None or isinstance(metrics, str) else tuple(metrics)
        if marks != self.marks or shown != self.metrics:
            self.marks = marks
            self.metrics = shown
            self.update(self.legend_text(marks, shown))
