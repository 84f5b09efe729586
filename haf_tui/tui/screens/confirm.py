"""A yes/no question before a verb that loses or destroys something (quit during a run,
discard edits, delete or cancel a run)."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static


class ConfirmScreen(ModalScreen[bool]):
    """Asks one question; dismisses with True on `y`, False on `n` or `escape`.

    Push it with a callback: ``app.push_screen(ConfirmScreen(title, question), on_answer)``.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]
    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen > Vertical { width: auto; max-width: 76; height: auto;
        border: round $warning; background: $surface; padding: 0 1; }
    ConfirmScreen .confirm-title { text-style: bold; }
    ConfirmScreen .confirm-keys { color: $text-muted; }
    """

    def __init__(self, title: str, question: str, *, yes: str = "yes", no: str = "no"):
        super().__init__()
        self.title_text = title
        self.question = question
        self.yes_label = yes
        self.no_label = no

    def compose(self) -> ComposeResult:
        """The title, the question and the two keys."""
        with Vertical():
            yield Static(self.title_text, classes="confirm-title", markup=False)
            yield Static(self.question, classes="confirm-question", markup=False)
            yield Static(
                f"y {self.yes_label} · n / esc {self.no_label}",
                classes="confirm-keys",
                markup=False,
            )

    def action_answer(self, answer: bool) -> None:
        """Close with the answer."""
        self.dismiss(answer)
