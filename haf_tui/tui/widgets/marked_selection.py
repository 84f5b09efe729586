"""A selection list whose chosen entries carry a mark, not only a colour (issue 34 §9):
Textual's SelectionList draws the same "X" in every toggle and tells them apart by colour,
which a monochrome terminal, a screenshot in print or a colour-blind reader loses."""

from __future__ import annotations

from typing import TypeVar

from rich.segment import Segment
from textual.strip import Strip
from textual.widgets import SelectionList
from textual.widgets._toggle_button import ToggleButton
from textual.widgets.option_list import OptionDoesNotExist

CHOSEN_MARK = "✓"
"""Drawn in the toggle of a chosen entry (an unchosen one's toggle is blank)."""

ValueT = TypeVar("ValueT")


class MarkedSelectionList(SelectionList[ValueT]):
    """A :class:`SelectionList` drawing :data:`CHOSEN_MARK` in a chosen entry's toggle."""

    def render_line(self, y: int) -> Strip:
        """The line as SelectionList draws it, its toggle's inner cell replaced by the mark."""
        strip = super().render_line(y)
        segments = list(strip)
        if len(segments) < 3 or segments[1].text != ToggleButton.BUTTON_INNER:
            return strip
        try:
            option = self.get_option_at_index(self.scroll_offset.y + y)
        except OptionDoesNotExist:
            return strip
        chosen = option.value in self._selected
        inner = segments[1]
        segments[1] = Segment(CHOSEN_MARK if chosen else " ", inner.style, inner.control)
        return Strip(segments, strip.cell_length)
