"""The wizard's label rule, under a file's column mapping: how the chosen label column's values
become gold (guessed from the file's first values, or stated: a score's threshold, or
``toxic=A,B``), or why the column cannot be a label (free text, many values), in one line."""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Input, Label, Static

from haf_tui.pipeline.choices import ColumnLabel, label_check, no_label_line, parse_statement

PLACEHOLDER = "empty: guessed from the values"
HELP = "or state it: T (a score's threshold: above it is toxic), or toxic=A,B (the toxic values)"
"""What the field takes, on a line under it (whole at 80 columns; a placeholder was cut)."""


class LabelRuleField(Vertical):
    """The rule of the label column chosen: a line saying it, and a field to state it."""

    DEFAULT_CSS = """
    LabelRuleField { height: auto; }
    LabelRuleField #ds-label-line { padding: 0 1; }
    LabelRuleField #ds-label-line.-refused { color: $error; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.values: dict[str, list[Any]] = {}
        """The file's first values, per column (what a rule is guessed from)."""
        self.column: str | None = None
        self.taken: tuple[str | None, ...] = ()
        """The text and id columns (not offered as labels when none is chosen)."""
        self.check: ColumnLabel | None = None

    def compose(self) -> ComposeResult:
        """The statement field, then the line."""
        with Horizontal():
            yield Label("label rule", classes="field-label")
            yield Input(placeholder=PLACEHOLDER, id="ds-label-rule")
        yield Static(HELP, id="ds-label-help", classes="hint")
        yield Static("", id="ds-label-line")

    def statement(self) -> str:
        """What the user typed (empty: guess)."""
        return self.query_one("#ds-label-rule", Input).value.strip()

    def set_statement(self, text: str) -> None:
        """Fill the field (restored answers)."""
        self.query_one("#ds-label-rule", Input).value = text

    def set_values(self, values: dict[str, list[Any]]) -> None:
        """A file was read: its first values per column."""
        self.values = values
        self.show()

    def set_column(self, column: str | None, taken: tuple[str | None, ...] = ()) -> None:
        """The label column chosen (None: no label column), and the text and id columns."""
        self.column, self.taken = column, taken
        self.show()

    @on(Input.Changed, "#ds-label-rule")
    def _statement_changed(self) -> None:
        self.show()

    def show(self) -> None:
        """Check the column's values against the rule (stated or guessed) and say it."""
        line = self.query_one("#ds-label-line", Static)
        if self.column is None or self.column not in self.values:
            self.check = None
            line.update(no_label_line(self.values, self.taken) if self.values else "")
            line.set_class(False, "-refused")
            return
        self.check = label_check(self.values[self.column], self.column, self.statement())
        line.update(self.check.line())
        line.set_class(self.check.rule is None, "-refused")

    def stated(self) -> tuple[float | None, tuple[str, ...]]:
        """The statement as a threshold or a label map (ValueError: neither)."""
        return parse_statement(self.statement())

    def problem(self) -> str | None:
        """Why the chosen column cannot be read as a label (None: it can, or none chosen)."""
        return self.check.problem if self.check is not None else None
