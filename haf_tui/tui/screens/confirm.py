"""A yes/no question before a verb that loses or destroys something (quit during a run,
discard edits, delete or cancel a run).

It draws as a box of fixed width over whatever screen or dialog is below it: the title, the
question, its two choices as buttons that name their keys, and a line of keys. (A box of
``width: auto`` around widgets of fractional width measured its content as zero: a 4×2 empty
box, issue 25 §1.)"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class ConfirmScreen(ModalScreen[bool]):
    """Asks one question; dismisses with True on `y`, False on `n` or `escape`; `enter`
    chooses the highlighted button (the safe one, `n`, at first; `tab` moves).

    Push it with a callback: ``app.push_screen(ConfirmScreen(title, question), on_answer)``.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
        Binding("q", "app.quit", "Quit", show=False),  # (asks when quitting loses edits)
    ]
    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen > Vertical { width: 64; max-width: 100%; height: auto; max-height: 100%;
        border: round $warning; background: $surface; padding: 0 1; }
    ConfirmScreen .confirm-title { text-style: bold; }
    ConfirmScreen .confirm-choices { height: auto; margin-top: 1; }
    ConfirmScreen .confirm-choices Button { margin-right: 2; min-width: 10; }
    ConfirmScreen .confirm-keys { color: $text-muted; }
    """

    def __init__(
        self,
        title: str,
        question: str,
        *,
        yes: str = "yes",
        no: str = "no",
        quit_question: bool = False,
    ):
        super().__init__()
        self.quit_question = quit_question
        """Whether this asks about quitting (``q`` again does not ask twice)."""
        self.title_text = title
        self.question = question
        self.yes_label = yes
        self.no_label = no

    def compose(self) -> ComposeResult:
        """The title, the question, the two choices and the keys."""
        with Vertical():
            yield Static(self.title_text, classes="confirm-title", markup=False)
            yield Static(self.question, classes="confirm-question", markup=False)
            with Horizontal(classes="confirm-choices"):
                yield Button(f"y {self.yes_label}", id="confirm-yes", compact=True)
                yield Button(f"n {self.no_label}", id="confirm-no", compact=True, variant="primary")
            yield Static(
                f"y {self.yes_label} · n / esc {self.no_label} · enter the highlighted one",
                classes="confirm-keys",
                markup=False,
            )

    def on_mount(self) -> None:
        """The safe choice is highlighted: enter keeps what is there."""
        self.query_one("#confirm-no", Button).focus()

    @on(Button.Pressed)
    def chosen(self, event: Button.Pressed) -> None:
        """A button pressed (enter on it, or a click): its answer."""
        event.stop()
        self.dismiss(event.button.id == "confirm-yes")

    def action_answer(self, answer: bool) -> None:
        """Close with the answer."""
        self.dismiss(answer)
