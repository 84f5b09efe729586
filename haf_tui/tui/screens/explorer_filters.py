"""The explorer's filters: the search box (the texts and the model's answers), the ranges box
(any instance metric of the run's methods, the gold label; an unreadable one keeps the focus
and says why) and the keys that change the filter or the order (``t u x * o O a``).

:class:`FilteredScreen` is the explorer's base below its instance views: it needs from the
explorer only its filter, its rows, the list and :meth:`fill_table`."""

from __future__ import annotations

from dataclasses import replace
from time import monotonic
from typing import Any

from rich.text import Text
from textual import on
from textual.widgets import Input, Static

from haf_tui.tui.filters import FilterError, InstanceFilter, add_answers, parse_ranges
from haf_tui.tui.instance_reader import AnswersRead
from haf_tui.tui.screens.instance_notes import InstanceNotesScreen
from haf_tui.tui.widgets.instance_list import InstanceList

TYPING_PAUSE = 0.3
"""While typing a search or ranges, the instance under the cursor is read this long after
the last keystroke (the list itself follows every keystroke)."""


class FilteredScreen(InstanceNotesScreen):
    """The explorer's search, ranges and filter keys (see the module)."""

    filter: InstanceFilter
    instances: list[dict[str, Any]]
    typing_until: float

    @property
    def instance_list(self) -> InstanceList:
        """The list of instances."""
        return self.query_one("#ex-instances", InstanceList)

    def set_filter(self, new: InstanceFilter) -> None:
        """Apply another filter / order."""
        if new != self.filter:
            self.filter = new
            self.fill_table()

    @on(AnswersRead)
    def answers_read(self, message: AnswersRead) -> None:
        """The search reads the model's answers too (the list follows a search typed already)."""
        if message.run_id == self.run_id:
            add_answers(self.instances, message.answers)
            if self.filter.text.strip():
                self.fill_table()

    @on(Input.Changed, "#ex-search")
    def search_changed(self, event: Input.Changed) -> None:
        """Filter the list as you type."""
        self.typing_until = monotonic() + TYPING_PAUSE
        self.set_filter(replace(self.filter, text=event.value))

    @on(Input.Changed, "#ex-ranges")
    def ranges_changed(self, event: Input.Changed) -> None:
        """Apply the ranges as you type; an unreadable one shows why (the last good ones stay)."""
        self.typing_until = monotonic() + TYPING_PAUSE
        error = self.query_one("#ex-filter-error", Static)
        try:
            ranges = parse_ranges(event.value, self.filter.schema)
        except FilterError as exc:
            error.update(Text(str(exc)))
            error.remove_class("-empty")
            return
        error.update("")
        error.add_class("-empty")
        self.set_filter(replace(self.filter, ranges=ranges))

    @on(Input.Submitted)
    def input_submitted(self, event: Input.Submitted) -> None:
        """Enter in a text box goes to the list, unless its ranges cannot be read: then the
        box keeps the focus (the correction's keys are typed, not taken as commands)."""
        if event.input.id != "ex-ranges" or self.query_one("#ex-filter-error").has_class("-empty"):
            self.instance_list.focus()

    def action_filter(self, change: str) -> None:
        """o: next sort metric, O: reverse, t: next stance, u: UNCLEAR only, x: contradictions
        only, a: every filter off (see InstanceFilter.changed)."""
        if change == "clear":
            self.query_one("#ex-search", Input).value = ""
            self.query_one("#ex-ranges", Input).value = ""
        self.set_filter(self.filter.changed(change))

    def action_ranges(self) -> None:
        """Focus the ranges box."""
        self.query_one("#ex-ranges", Input).focus()

    def action_search(self) -> None:
        """Focus the search box."""
        self.query_one("#ex-search", Input).focus()
