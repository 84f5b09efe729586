"""Pre-rendered lines in a view that scrolls both ways (the metric panels, the comparison
view). Text wraps at the view's width; each table or chart is drawn at its natural width, so a
wide one scrolls sideways instead of being squeezed or cut at the view's edge."""

from __future__ import annotations

import io
from collections.abc import Iterator

from rich.console import Console, Group, RenderableType
from rich.measure import Measurement
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

MAX_DRAWN_WIDTH = 800
"""The widest a table or chart is drawn (wider ones wrap); the view scrolls sideways to it.
Cells are cut at :data:`chart_layout.CELL_WIDTH`, so only many columns get this wide."""


def _parts(renderable: RenderableType | list[RenderableType]) -> Iterator[RenderableType]:
    """The renderables a (nested) group or a list stacks, in order."""
    if isinstance(renderable, list):
        for child in renderable:
            yield from _parts(child)
    elif isinstance(renderable, Group):
        for child in renderable.renderables:
            yield from _parts(child)
    else:
        yield renderable


def render_strips(renderable: RenderableType | list[RenderableType], width: int) -> list[Strip]:
    """``renderable`` (or the parts of a list, one under the other) rendered once into lines
    (thread-safe: its own console): text wrapped at ``width``, each table or chart at its
    natural width (at least ``width``, at most :data:`MAX_DRAWN_WIDTH`)."""
    console = Console(
        width=width,
        file=io.StringIO(),
        color_system="truecolor",
        force_terminal=True,
        legacy_windows=False,
        highlight=False,
        emoji=False,
    )
    strips: list[Strip] = []
    for part in _parts(renderable):
        drawn = width
        if not isinstance(part, Text):
            natural = Measurement.get(console, console.options.update_width(MAX_DRAWN_WIDTH), part)
            drawn = max(width, min(natural.maximum, MAX_DRAWN_WIDTH))
        lines = console.render_lines(part, console.options.update_width(drawn), pad=False)
        strips.extend(Strip(line) for line in lines)
    return strips


class PanelView(ScrollView, can_focus=True):
    """Pre-rendered lines in a view that scrolls both ways (arrows, page keys, the mouse):
    drawing a frame only picks and crops strips."""

    DEFAULT_CSS = "PanelView { height: 1fr; padding: 0 1; }"

    def __init__(self, *, id: str, placeholder: str = "loading …") -> None:
        super().__init__(id=id)
        self.lines: list[Strip] = [Strip([Segment(placeholder)])]
        self._base_style = Style()

    def show(self, lines: list[Strip], *, from_top: bool = False) -> None:
        """Show other lines (``from_top``: scrolled back to the first)."""
        self.lines = lines
        self.virtual_size = Size(max((s.cell_length for s in lines), default=0), len(lines))
        if from_top:
            self.scroll_to(0, 0, animate=False)
        self.refresh()

    def text(self) -> str:
        """The lines as plain text (for tests and copying)."""
        return "\n".join(line.text.rstrip() for line in self.lines)

    def render_lines(self, crop: Region) -> list[Strip]:
        """Look the base style up once per frame, not once per line."""
        self._base_style = self.rich_style
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        """One visible line, cropped to the horizontal scroll."""
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        style = self._base_style
        index = scroll_y + y
        if index >= len(self.lines):
            return Strip.blank(width, style)
        return self.lines[index].crop_extend(scroll_x, scroll_x + width, style).apply_style(style)
