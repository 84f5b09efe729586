"""The explorer's instance list: :class:`InstanceList`, a virtual list that renders only the
rows on screen (a run of 5,000 instances refilters and redraws per keystroke without delay);
what it shows is chosen by :mod:`haf_tui.tui.filters`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from haf_tui.methods.declare import LOW_MASS, LOW_MASS_SIGN, ListColumn
from haf_tui.reports import format_number
from haf_tui.tui.filters import DEFAULT_SCHEMA, ListSchema, Row
from haf_tui.tui.widgets.fit_columns import FitColumn, elide, fit_widths

ID_MIN_WIDTH = 8
"""The narrowest an instance id is cut to (in its middle: ``117…witter``)."""
TEXT_MIN_WIDTH = 6
"""The narrowest a text column (HAF's stance) is cut to, with "…"."""


class InstanceList(ScrollView, can_focus=True):
    """One line per instance (id, the columns the run's methods show, the sort metric, flags,
    why it stopped; ★ before a bookmarked one) under a fixed header; renders only the visible
    rows."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "cursor(-1000000000)", "First", show=False),
        Binding("end", "cursor(1000000000)", "Last", show=False),
    ]
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "instance-list--header",
        "instance-list--cursor",
        "instance-list--flag",
    }
    DEFAULT_CSS = """
    InstanceList { height: 1fr; background: $surface; overflow-x: hidden; }
    InstanceList > .instance-list--header { text-style: bold; background: $panel; }
    InstanceList > .instance-list--cursor {
        background: $block-cursor-blurred-background;
        color: $block-cursor-blurred-foreground;
    }
    InstanceList:focus > .instance-list--cursor {
        background: $block-cursor-background;
        color: $block-cursor-foreground;
        text-style: bold;
    }
    InstanceList > .instance-list--flag { color: $warning; }
    """

    @dataclass
    class Highlighted(Message):
        """The cursor is on another instance."""

        instance_list: InstanceList
        instance_id: str

        @property
        def control(self) -> InstanceList:
            """The list that posted it (lets ``@on(..., "#id")`` match)."""
            return self.instance_list

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: list[Row] = []
        self.cursor_row = 0
        self.extra: str | None = None
        self.schema: ListSchema = DEFAULT_SCHEMA
        """The run's columns (:meth:`set_rows` is given them)."""
        self._id_width = 4
        self._stopped_width = 0
        self._fitted: tuple[object, list[int | None]] | None = None
        self._styles = (Style(), Style(), Style(), Style())
        self._lines: dict[tuple[str, bool, int], Strip] = {}
        self._sizes: tuple[Size, Size, Size] | None = None

    def _size_updated(
        self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True
    ) -> bool:
        """As ScrollView's, but only when the list's sizes changed: Textual hands it the
        arranged size as the virtual size, which never equals its own, so every layout of the
        screen (a step of the explorer) redrew the 54-line scrollbar once more."""
        sizes = (size, self.virtual_size, container_size)
        if sizes == self._sizes:
            return False
        self._sizes = sizes
        return super()._size_updated(size, virtual_size, container_size, layout)

    @property
    def row_count(self) -> int:
        """How many rows are shown."""
        return len(self.rows)

    @property
    def row_ids(self) -> list[str]:
        """The instance ids shown, top to bottom."""
        return [str(row["instance_id"]) for row in self.rows]

    @property
    def current_id(self) -> str | None:
        """The instance under the cursor."""
        return str(self.rows[self.cursor_row]["instance_id"]) if self.rows else None

    def set_rows(
        self,
        rows: list[Row],
        keep: str | None,
        extra: str | None = None,
        schema: ListSchema | None = None,
    ) -> None:
        """Show ``rows`` (``extra``: one more metric column, unless shown already; ``schema``:
        the run's columns, default the last ones). The cursor stays on ``keep`` if it is shown,
        else goes to the first row (posting Highlighted)."""
        self.schema = schema or self.schema
        shown = {column.name for column in self.schema.shown}
        self.rows, self.extra = rows, None if extra in shown else extra
        self._id_width = max([4, *(len(str(r["instance_id"])) for r in rows[:2000])])
        self._stopped_width = max(
            [0, *(cell_len(str(r.get("stopped") or "")) for r in rows[:2000])]
        )
        self._lines.clear()
        self.virtual_size = Size(0, len(rows) + 1)
        index = next((i for i, r in enumerate(rows) if r["instance_id"] == keep), 0)
        self._place(index, redraw=True)
        if self.current_id is not None and self.current_id != keep:
            self.post_message(self.Highlighted(self, self.current_id))

    def move_cursor(self, row: int) -> None:
        """Put the cursor on a row (clamped), scroll it into view, post Highlighted."""
        before = self.current_id
        self._place(row)
        if self.current_id is not None and self.current_id != before:
            self.post_message(self.Highlighted(self, self.current_id))

    def _place(self, row: int, *, redraw: bool = False) -> None:
        """Move the cursor; redraw only its old and new lines unless it scrolled."""
        before, top = self.cursor_row, round(self.scroll_y)
        self.cursor_row = min(max(row, 0), max(len(self.rows) - 1, 0))
        height = max(self.size.height - 1, 1)
        if self.cursor_row < top:
            self.scroll_to(y=self.cursor_row, animate=False, immediate=True)
        elif self.cursor_row >= top + height:
            self.scroll_to(y=self.cursor_row - height + 1, animate=False, immediate=True)
        if redraw or round(self.scroll_y) != top:
            self.refresh()
        else:  # the header is line 0: row i is drawn on line i + 1
            self.refresh_lines(before + 1)
            self.refresh_lines(self.cursor_row + 1)

    def action_cursor(self, delta: int) -> None:
        """Move the cursor by ``delta`` rows."""
        self.move_cursor(self.cursor_row + delta)

    def action_page(self, direction: int) -> None:
        """Move the cursor by a screenful."""
        self.move_cursor(self.cursor_row + direction * max(self.size.height - 2, 1))

    def on_click(self, event: events.Click) -> None:
        """A click selects the row under the mouse."""
        if event.y >= 1:
            self.move_cursor(round(self.scroll_y) + event.y - 1)

    def _columns(self) -> list[ListColumn]:
        extra = self.schema.column(self.extra) if self.extra else None
        return [*self.schema.shown, *([extra] if extra else [])]

    def _fit(self, width: int) -> list[int | None]:
        """Each cell's width in ``width`` cells (None: left out): the id, the columns, the
        flags and why it stopped, as they fit. A number and a heading are drawn whole or not
        at all (0.623 showed as "0.6", "stopped" as "stoppe" at the list's edge): the id gives
        way first (cut in its middle: whole in the instance's header), then the text columns
        (cut with "…"), then the columns least asked for (why it stopped, the flags, the text
        columns, the numbers from the last; the sort's own column last of all)."""
        key = (width, self.schema, self.extra, self._id_width, self._stopped_width)
        if self._fitted is not None and self._fitted[0] == key:
            return self._fitted[1]
        columns = self._columns()
        sort = len(columns) - 1 if self.extra else None
        numbers = [i for i, c in enumerate(columns) if c.digits is not None and i != sort]
        texts = [i for i, c in enumerate(columns) if c.digits is None and i != sort]
        rank = {index: place for place, index in enumerate([*numbers, *texts], start=2)}
        fits = [FitColumn("id", min_width=ID_MIN_WIDTH, rank=0, cut_middle=True)]
        natural = ["x" * self._id_width]
        for index, column in enumerate(columns):
            cut = TEXT_MIN_WIDTH if column.digits is None else None
            fits.append(FitColumn(column.label, min_width=cut, rank=rank.get(index, 1)))
            natural.append("x" * column.width)
        fits.append(FitColumn("U!", rank=len(columns) + 2))
        natural.append("xx")
        fits.append(FitColumn("stopped", min_width=0, rank=len(columns) + 3))
        natural.append("x" * self._stopped_width)
        widths = fit_widths(fits, [natural], width - 1, padding=1)  # (★ takes a cell)
        self._fitted = (key, widths)
        return widths

    def _cells(self, row: Row | None) -> list[str]:
        columns = self._columns()
        if row is None:
            return ["id", *(c.label for c in columns), "U!", "stopped"]
        flags = ("U" if row.get("n_unclear") else "") + ("!" if row.get("n_contradictions") else "")
        cells = [str(row["instance_id"])]
        for column in columns:
            value = row.get(column.metric)
            if column.digits is None:
                cells.append(str(value or "—"))
            else:
                mass = row.get(column.mass) if column.mass else None
                low = isinstance(mass, int | float) and mass < LOW_MASS  # (NaN: not low)
                cells.append(format_number(value, column.digits) + (LOW_MASS_SIGN if low else ""))
        return [*cells, flags, str(row.get("stopped") or "")]

    def render_lines(self, crop: Region) -> list[Strip]:
        """Look the styles up once per frame (not per line); drop the cached lines when they
        changed (focus, theme)."""
        styles = (
            self.rich_style,
            self.get_component_rich_style("instance-list--header"),
            self.get_component_rich_style("instance-list--cursor"),
            self.get_component_rich_style("instance-list--flag", partial=True),
        )
        if styles != self._styles:
            self._styles = styles
            self._lines.clear()
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        """The header (line 0) or the row at this line, cropped to the width (each row drawn
        once while it looks the same)."""
        width = self.size.width
        base, header, cursor, flag = self._styles
        if y == 0:
            return self._draw(None, base + header, flag, width)
        index = round(self.scroll_y) + y - 1
        if index >= len(self.rows):
            return Strip.blank(width, base)
        row = self.rows[index]
        key = (str(row["instance_id"]), index == self.cursor_row, width)
        strip = self._lines.get(key)
        if strip is None:
            if len(self._lines) > 4 * max(self.size.height, 50):
                self._lines.clear()
            style = base + cursor if index == self.cursor_row else base
            strip = self._lines[key] = self._draw(row, style, flag, width)
        return strip

    def _draw(self, row: Row | None, style: Style, flag: Style, width: int) -> Strip:
        bookmarked = row is not None and row.get("bookmarked")  # (★: kept by the researcher)
        segments = [Segment("★", style + flag) if bookmarked else Segment(" ", style)]
        for index, (text, size) in enumerate(zip(self._cells(row), self._fit(width), strict=True)):
            if size is None:  # (left out; a heading fits its width: fit_widths)
                continue
            cell = str(elide(text, size, middle=index == 0)).ljust(size)
            cell_style = style
            if row is not None and text in ("U", "!", "U!"):  # the flags
                cell_style += flag
            segments.append(Segment(cell + " ", cell_style))
        return Strip(segments).crop_extend(0, width, style)
