"""A scrolling view of rich text rendered once per change (new content, a new width) into
lines it draws as they scroll into view: new content changes the scroll height, never the
screen's layout. A subclass says what it shows at a width (:meth:`LinesView.pieces`)."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.strip import Strip


class LinesView(ScrollView):
    """Rendered lines, cropped to the width and drawn one visible line at a time."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.lines: list[Strip] = []
        self._base_style = Style()

    @property
    def text_width(self) -> int:
        """The width the lines are fitted to."""
        return self.scrollable_content_region.width

    def pieces(self, width: int) -> list[Text]:
        """What the view shows at ``width`` (each piece wraps to it)."""
        raise NotImplementedError

    def rebuild(self) -> None:
        """Render the pieces again (new content, width or colours)."""
        if not self.is_mounted:
            return
        width = self.text_width
        self.lines = []
        if width > 0:
            console = self.app.console
            options = console.options.update_width(width)
            for text in self.pieces(width):
                rendered = console.render_lines(text, options, pad=False)
                self.lines.extend(Strip(segments) for segments in rendered)
        self.virtual_size = Size(width, len(self.lines))
        self.refresh()

    def on_resize(self) -> None:
        """Fit the lines to the new width."""
        self.rebuild()

    def render_lines(self, crop: Region) -> list[Strip]:
        """Look the base style up once per frame, not once per line."""
        self._base_style = self.rich_style
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        """One visible line."""
        index, width, style = round(self.scroll_y) + y, self.text_width, self._base_style
        if index >= len(self.lines):
            return Strip.blank(width, style)
        return self.lines[index].crop_extend(0, width, style).apply_style(style)


class PanelView(LinesView):
    """A bordered, focusable :class:`LinesView` panel (the explorer's rationale and judge
    blocks)."""

    DEFAULT_CSS = """
    PanelView {
        height: 1fr;
        min-height: 5;
        border: round $primary-darken-2;
        border-title-color: $text-muted;
        padding: 0 1;
        scrollbar-size-vertical: 1;
        scrollbar-gutter: stable;
        overflow-x: hidden;
    }
    PanelView:focus { border: round $accent; }
    """
