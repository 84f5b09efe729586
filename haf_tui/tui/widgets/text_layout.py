"""Plain-text layout for the workbench's dense views (rich ``Text`` lines, no widgets): the
theme's heat and share colours (:class:`Palette`), numbers and cells fitted to a width, small
tables and blocks side by side. Pure, so views built on it test as plain text."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rich.style import Style
from rich.text import Text
from textual.color import Color, ColorParseError

from haf_tui.reports import format_number

GAP = 3
"""Columns between blocks shown side by side."""
DIM = Style(dim=True)
BOLD = Style(bold=True)
FLAG = Style(bold=True, reverse=True)
"""A flag's style (the flag is also its words: "≠ stance", "low")."""


# ---------------------------------------------------------------- colours


@dataclass(frozen=True)
class Palette:
    """The theme's colours the view blends its heat and shares from."""

    background: Color
    warm: Color
    cool: Color
    share: Color

    @classmethod
    def of(cls, variables: Mapping[str, str]) -> Palette:
        """From the app's CSS variables (``background``, ``error``, ``primary``,
        ``success``)."""

        def get(name: str, default: str) -> Color:
            try:
                return Color.parse(variables.get(name, default))
            except ColorParseError:  # a variable that is no plain colour
                return Color.parse(default)

        return cls(
            get("background", "#121212"),
            get("error", "#B93C5B"),
            get("primary", "#0178D4"),
            get("success", "#4EBF71"),
        )

    def _on(self, colour: Color, amount: float) -> Style:
        back = self.background.blend(colour, min(1.0, max(0.0, amount)))
        fore = back + back.get_contrast_text(0.95)
        return Style(bgcolor=back.rich_color, color=fore.rich_color)

    def heat(self, score: float, top: float) -> Style:
        """A leave-one-out score: warm when it raised the log-odds of ŷ (a_i > 0), cool when
        not (a_i ≤ 0), stronger the larger |a_i| is against the instance's largest."""
        strength = min(1.0, abs(score) / top) if top > 0 else 0.0
        return self._on(self.warm if score > 0 else self.cool, 0.1 + 0.7 * strength)

    def shade(self, share: float) -> Style:
        """An annotators' share (0 – 1)."""
        return self._on(self.share, 0.08 + 0.72 * share) if share > 0 else Style()


DEFAULT_PALETTE = Palette.of({})


# ---------------------------------------------------------------- formatting


def fmt(value: Any, digits: int = 2) -> str:
    """A number to ``digits`` decimals, "—" when undefined."""
    return format_number(value, digits)


def fit(text: str, width: int) -> str:
    """``text`` cut to ``width`` cells, ending in "…" when cut."""
    if width <= 0:
        return ""
    cut = Text(text)
    cut.truncate(width, overflow="ellipsis")
    return cut.plain


def cell(
    value: str, width: int, align: str = "right", style: Style | str = "", *, fill: bool = False
) -> Text:
    """One table cell: ``value`` fitted to ``width`` and aligned; ``style`` on the value, or
    on the whole cell (``fill``: a background)."""
    text = Text(style=style) if fill else Text()
    text.append(fit(value, width), style="" if fill else style)
    pad = max(0, width - text.cell_len)
    if align == "right":
        text.pad_left(pad)
    elif align == "center":
        text.pad_left(pad // 2)
        text.pad_right(pad - pad // 2)
    else:
        text.pad_right(pad)
    return text


def line(*parts: Text | str) -> Text:
    """One line of a table (never wrapped: cut with "…" if too wide)."""
    text = Text(no_wrap=True, overflow="ellipsis", end="")
    for part in parts:
        text.append(part)
    return text


def styled(text: Text, style: Style) -> Text:
    """``text`` with ``style`` under its own styles."""
    text.stylize_before(style)
    return text


def prose(*parts: tuple[str, Style | str] | str) -> Text:
    """Text that wraps."""
    text = Text(end="")
    for part in parts:
        if isinstance(part, str):
            text.append(part)
        else:
            text.append(part[0], part[1])
    return text


@dataclass(frozen=True)
class Column:
    """A table column: its header, width, alignment and how a row's value is shown."""

    header: str
    width: int
    value: Callable[[Any], Any]
    digits: int = 2
    align: str = "right"
    spread: bool = True
    """Whether a line of standard deviations shows this column's."""


def table(columns: Sequence[Column], rows: Sequence[tuple[str, Sequence[Any]]]) -> list[Text]:
    """A table: one line per (name, records) — one record as it is, several (e.g. RANDOM's
    seeds) as their mean and a line of standard deviations under it."""
    name_width = max([len("source"), *(len(name) for name, _ in rows)])
    head = [cell("source", name_width, "left")]
    for column in columns:
        head += [Text(" "), cell(column.header, column.width, column.align)]
    lines = [styled(line(*head), BOLD)]
    for name, group in rows:
        means, spreads = [cell(name, name_width, "left")], [cell("  ± sd", name_width, "left")]
        for column in columns:
            values = [column.value(r) for r in group]
            defined = [float(v) for v in values if not undefined(v)]
            if len(group) == 1:
                shown = fmt(values[0], column.digits)
                spread = ""
            else:
                shown = fmt(statistics.fmean(defined), column.digits) if defined else fmt(None)
                sd = statistics.stdev(defined) if len(defined) > 1 else None
                spread = fmt(sd, column.digits) if sd is not None and column.spread else ""
            means += [Text(" "), cell(shown, column.width, column.align)]
            spreads += [Text(" "), cell(spread, column.width, column.align, DIM)]
        lines.append(line(*means))
        if len(group) > 1:
            lines.append(styled(line(*spreads), DIM))
    return lines


def undefined(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def width_of(lines: Sequence[Text]) -> int:
    """The widest of some lines."""
    return max((text.cell_len for text in lines), default=0)


def beside(left: Sequence[Text], right: Sequence[Text], gap: int = GAP) -> list[Text]:
    """Two columns of lines side by side (the left padded to its widest line)."""
    left_width = width_of(left)
    out = []
    for i in range(max(len(left), len(right))):
        text = line(left[i] if i < len(left) else "")
        if i < len(right):
            text.pad_right(left_width - text.cell_len + gap)
            text.append(right[i])
        out.append(text)
    return out
