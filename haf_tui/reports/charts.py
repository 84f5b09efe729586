"""Text charts as rich renderables: labelled horizontal bars, histograms, HAF's charts and heat
grids (laid out in a width by :mod:`haf_tui.reports.chart_layout`).

Everything here is a pure function of its arguments (no Textual), so the charts can be tested
by rendering them to plain text. Colours are the 16 ANSI names, which Textual maps to the
dark or light theme in use.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from haf_tui.reports import (
    NULL_TEXT,
    format_number,
)

_EIGHTHS = " ▏▎▍▌▋▊▉"
FULL_BLOCK = "█"
NO_BREAK_SPACE = "\u00a0"


def bar_text(fraction: float, width: int) -> str:
    """A bar ``fraction`` (clamped to [0, 1]) of ``width`` cells long, in eighths of a cell."""
    if width <= 0 or math.isnan(fraction):
        return ""
    eighths = round(max(0.0, min(1.0, fraction)) * width * 8)
    full, rest = divmod(eighths, 8)
    return FULL_BLOCK * full + (_EIGHTHS[rest] if rest else "")


def is_undefined(value: float | None) -> bool:
    """True for None and NaN: a metric value that is not defined."""
    return value is None or math.isnan(value)


# ---------------------------------------------------------------- bar charts


@dataclass(frozen=True)
class Bar:
    """One bar: its label, its value (None: undefined, no bar) and a note after the value."""

    label: str
    value: float | None
    note: str = ""
    style: str = "blue"


@dataclass(frozen=True)
class BarGroup:
    """Bars shown together under one label (e.g. one stance)."""

    label: str
    bars: tuple[Bar, ...]


def bar_chart(
    groups: Sequence[BarGroup],
    *,
    width: int,
    max_value: float = 1.0,
    title: str | None = None,
    digits: int = 3,
    value_suffix: str = "",
) -> Table:
    """Horizontal bars scaled to ``max_value``, each after its label, value and note.

    ``width`` is the whole chart's width; the bars get what the labels leave. An undefined value
    shows "—" and no bar. The bar comes last, so whatever cuts the chart (a squeezing container,
    the edge of a view) cuts a bar, never a value or a count.
    """
    group_width = max((len(g.label) for g in groups), default=0)
    label_width = max((len(b.label) for g in groups for b in g.bars), default=0)
    values = [format_number(b.value, digits) + value_suffix for g in groups for b in g.bars]
    value_width = max((len(v) for v in values), default=1)
    note_width = max((len(b.note) for g in groups for b in g.bars), default=0)
    used = group_width + label_width + value_width + note_width + (4 if group_width else 3)
    bar_width = max(4, width - used)
    table = Table.grid(padding=(0, 1))
    table.title = title
    table.title_justify = "left"
    table.title_style = "bold"
    if group_width:
        table.add_column(width=group_width, no_wrap=True, style="bold")
    # a label gives way next (cut with "…"): a wrapable column whose cells never wrap
    table.add_column(min_width=1, overflow="ellipsis")
    table.add_column(width=value_width, justify="right", no_wrap=True)
    table.add_column(width=note_width, no_wrap=True, style="dim")
    # the bar column alone gives way when a container squeezes the chart: a wrapable column
    # (no width of its own) is what rich narrows first; its bar is cropped, never wrapped, so
    # the value and the note (a count, a share) before it stay whole
    table.add_column(min_width=0, overflow="crop")
    scale = max_value if max_value > 0 else 1.0
    for group in groups:
        for index, bar in enumerate(group.bars):
            shown = format_number(bar.value, digits) + value_suffix
            drawn = (
                "" if is_undefined(bar.value) else bar_text((bar.value or 0.0) / scale, bar_width)
            )
            cells = [group.label if index == 0 else ""] if group_width else []
            # (padded with no-break spaces: the column is as wide as the bars' room, one word)
            padded = drawn + NO_BREAK_SPACE * (bar_width - len(drawn))
            table.add_row(
                *cells,
                Text(bar.label.ljust(label_width), no_wrap=True, overflow="ellipsis"),
                shown,
                bar.note,
                Text(padded, style=bar.style, overflow="crop", no_wrap=False),
            )
    return table


# ---------------------------------------------------------------- histograms


@dataclass(frozen=True)
class Histogram:
    """Counts of defined values in equal bins over [lo, hi], and how many were undefined."""

    lo: float
    hi: float
    counts: tuple[int, ...]
    undefined: int

    @property
    def defined(self) -> int:
        """How many values fell in a bin."""
        return sum(self.counts)

    @property
    def total(self) -> int:
        """Defined and undefined values together."""
        return self.defined + self.undefined

    def edges(self) -> list[float]:
        """The bin edges, ``len(counts) + 1`` of them."""
        step = (self.hi - self.lo) / len(self.counts)
        return [self.lo + step * k for k in range(len(self.counts))] + [self.hi]


def value_range(values: Iterable[float | None]) -> tuple[float, float]:
    """[0, 1] when every defined value lies in it, else the data's own range."""
    defined = [v for v in values if not is_undefined(v)]
    if not defined:
        return 0.0, 1.0
    low, high = min(defined), max(defined)  # type: ignore[type-var]
    assert low is not None and high is not None
    if low >= 0.0 and high <= 1.0:
        return 0.0, 1.0
    if low == high:
        return low - 0.5, high + 0.5
    return low, high


def histogram(
    values: Iterable[float | None],
    *,
    bins: int = 10,
    value_range_: tuple[float, float] | None = None,
) -> Histogram:
    """Bin ``values`` (None / NaN counted as undefined) over ``value_range_`` (default
    :func:`value_range`); a value on the top edge goes in the last bin, values outside the
    range in the nearest end bin."""
    items = list(values)
    lo, hi = value_range_ if value_range_ is not None else value_range(items)
    counts = [0] * bins
    undefined = 0
    span = hi - lo if hi > lo else 1.0
    for value in items:
        if value is None or math.isnan(value):
            undefined += 1
            continue
        counts[min(bins - 1, max(0, math.floor((value - lo) / span * bins)))] += 1
    return Histogram(lo, hi, tuple(counts), undefined)


def render_histogram(
    data: Histogram,
    *,
    width: int,
    title: str = "",
    undefined_reason: str = "",
    digits: int = 2,
) -> RenderableType:
    """One labelled bar per bin with its count, then a line on the undefined values; when no
    value is defined, one "—" line saying why instead of empty bins."""
    heading = Text(title, style="bold") if title else Text()
    why = f": {undefined_reason}" if undefined_reason else ""
    if data.defined == 0:
        line = Text(f"{NULL_TEXT} no defined value among {data.total} instances{why}")
        return Group(heading, line) if title else line
    edges = data.edges()
    last = len(data.counts) - 1
    labels = [
        f"[{edges[k]:.{digits}f}, {edges[k + 1]:.{digits}f}{']' if k == last else ')'}"
        for k in range(len(data.counts))
    ]
    peak = max(data.counts)
    bars = tuple(
        Bar(label, float(count), f"{100 * count / data.defined:.0f}%", style="cyan")
        for label, count in zip(labels, data.counts, strict=True)
    )
    chart = bar_chart([BarGroup("", bars)], width=width, max_value=peak, digits=0)
    summary = f"{data.defined} defined"
    if data.undefined:
        summary += f", {data.undefined} undefined (NaN / no value){why}"
    parts: list[RenderableType] = [chart, Text(summary, style="dim")]
    return Group(heading, *parts) if title else Group(*parts)


# ---------------------------------------------------------------- HAF charts

BAND_STYLES = {"low": "red", "medium": "yellow", "high": "green", "undefined": "bright_black"}
STANCE_STYLES = {"toxic": "red", "maybe": "yellow", "non-toxic": "green", "unclear": "magenta"}


def figure2_chart(
    rows: Sequence[dict[str, object]], metric: str, *, width: int, title: str = ""
) -> Table:
    """Figure 2 for one run and one metric ("SoS" or "DiS"): a group of bars per stance, one bar
    per confidence band, with the mean and its n. ``rows`` are the ``figure2`` report's rows of
    that run (keys ``stance``, ``confidence``, ``metric`` and ``metric n``)."""
    groups: dict[str, list[Bar]] = {}
    for row in rows:
        value = row[metric]
        band = str(row["confidence"])
        bar = Bar(
            band,
            float(value) if isinstance(value, int | float) else None,
            f"n={row[f'{metric} n']}",
            BAND_STYLES.get(band, "blue"),
        )
        groups.setdefault(str(row["stance"]), []).append(bar)
    return bar_chart(
        [BarGroup(stance, tuple(bars)) for stance, bars in groups.items()],
        width=width,
        title=title or metric,
    )


def stance_chart(rows: Sequence[dict[str, object]], *, width: int, title: str = "") -> Table:
    """One run's stance distribution: a bar per stance with its share and "n/of" (rows of the
    ``stances`` report of that run: keys ``stance``, ``n``, ``%``, ``of``)."""
    bars = []
    for row in rows:
        share = row["%"]
        bars.append(
            Bar(
                str(row["stance"]),
                float(share) if isinstance(share, int | float) else None,
                f"{row['n']}/{row['of']}",
                STANCE_STYLES.get(str(row["stance"]), "blue"),
            )
        )
    return bar_chart(
        [BarGroup("", tuple(bars))],
        width=width,
        max_value=100.0,
        title=title,
        digits=1,
        value_suffix="%",
    )


# ---------------------------------------------------------------- heat grids

HEAT_SHADES = " ░▒▓█"
"""Cell shades from empty to the fullest cell."""


@dataclass(frozen=True)
class HeatGrid:
    """Counts of (x, y) pairs: x in equal bins over [lo, hi], y one of ``levels`` (shown top
    to bottom in this order); ``n`` = the pairs with both values, ``left_out`` the others."""

    lo: float
    hi: float
    levels: tuple[int, ...]
    counts: tuple[tuple[int, ...], ...]
    n: int
    left_out: int

    def edges(self) -> list[float]:
        """The x bins' edges."""
        bins = len(self.counts[0]) if self.counts else 0
        step = (self.hi - self.lo) / max(1, bins)
        return [self.lo + step * k for k in range(bins)] + [self.hi]


def heat_grid(
    pairs: Iterable[tuple[float | None, float | None]], levels: Sequence[int], *, bins: int = 5
) -> HeatGrid:
    """Bin ``pairs`` (x continuous, y a level) into a :class:`HeatGrid` over the data's own
    x range (a single value: ± 0.05 around it); a y outside ``levels`` or a missing value
    counts as left out."""
    items = list(pairs)
    kept = [
        (x, round(y))
        for x, y in items
        if x is not None
        and y is not None
        and not math.isnan(x)
        and not math.isnan(y)
        and round(y) in levels
    ]
    xs = [x for x, _ in kept]
    lo, hi = (min(xs), max(xs)) if xs else (0.0, 1.0)
    if hi <= lo:
        lo, hi = lo - 0.05, hi + 0.05
    counts = [[0] * bins for _ in levels]
    row_of = {level: i for i, level in enumerate(levels)}
    for x, y in kept:
        column = min(bins - 1, max(0, math.floor((x - lo) / (hi - lo) * bins)))
        counts[row_of[y]][column] += 1
    return HeatGrid(
        lo, hi, tuple(levels), tuple(tuple(c) for c in counts), len(kept), len(items) - len(kept)
    )


def render_heat_grid(
    grid: HeatGrid, *, title: str, x_label: str, y_label: str, note: str = ""
) -> RenderableType:
    """A heat grid as text: a row per level (its label on the left), a column per x bin
    (headed by its lower edge), each cell its count shaded by its share of the fullest cell
    ("·": none); ``note`` (e.g. ρ and n) and the binning below."""
    peak = max((c for row in grid.counts for c in row), default=0)
    table = Table.grid(padding=(0, 1))
    table.title = title
    table.title_justify = "left"
    table.title_style = "bold"
    table.add_column(justify="right", no_wrap=True, style="bold")
    edges = grid.edges()
    for _ in edges[:-1]:
        table.add_column(justify="right", no_wrap=True, min_width=5)
    table.add_row(Text(f"{y_label} ╲ {x_label}", style="dim"), *(f"{e:.2f}" for e in edges[:-1]))
    for level, row in zip(grid.levels, grid.counts, strict=True):
        cells: list[Text] = []
        for count in row:
            if count == 0:
                cells.append(Text("·", style="dim"))
                continue
            shade = HEAT_SHADES[max(1, round(count / peak * (len(HEAT_SHADES) - 1)))]
            cells.append(Text(f"{shade * 2}{count:>3}", style="cyan"))
        table.add_row(str(level), *cells)
    lines = [note] if note else []
    lines.append(
        f"{x_label} bins from {grid.lo:.2f} to {grid.hi:.2f}; n = {grid.n} pairs"
        + (f", {grid.left_out} without both values" if grid.left_out else "")
    )
    return Group(table, Text("\n".join(lines), style="dim"))
