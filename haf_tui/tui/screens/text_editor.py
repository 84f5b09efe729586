"""A small editor in a dialog: a note on an instance (several lines) or a run's label or tags
(one line). ``ctrl+s`` saves (``enter`` too on one line); ``escape`` closes, asking first when
the text was changed. Saving runs in a thread worker; when it fails (another process writes the
database) the dialog says why in one line and keeps the text."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Input, Static, TextArea

from haf_tui.tui.screens.confirm import ConfirmScreen
from haf_tui.vocabulary import HafError, first_line

Save = Callable[[str], str]
"""Stores the text (in a thread) and says in one line what it stored; HafError when it cannot."""


@dataclass
class Saved(Message):
    """The text was stored: ``summary`` says what."""

    summary: str


@dataclass
class SaveFailed(Message):
    """The text could not be stored: ``reason`` in one line."""

    reason: str


class TextEditorScreen(ModalScreen[str | None]):
    """Edits one text; dismisses with the save's summary, or None when closed unsaved."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Save", priority=True),
        Binding("escape", "close", "Close"),
    ]
    DEFAULT_CSS = """
    TextEditorScreen { align: center middle; }
    TextEditorScreen > Vertical { width: 72; max-width: 100%; height: auto; max-height: 100%;
        border: round $accent; background: $surface; padding: 0 1; }
    TextEditorScreen .editor-title { text-style: bold; }
    TextEditorScreen TextArea { height: 8; }
    TextEditorScreen Input { height: 3; }
    TextEditorScreen .editor-error { color: $error; }
    TextEditorScreen .editor-error.-empty { display: none; }
    TextEditorScreen .editor-error.-saving { color: $text-muted; }
    TextEditorScreen .editor-keys { color: $text-muted; }
    """

    def __init__(
        self, title: str, text: str, save: Save, *, multiline: bool = False, hint: str = ""
    ) -> None:
        super().__init__()
        self.title_text = title
        self.original = text
        self.save = save
        self.multiline = multiline
        self.hint = hint
        self.saving = False

    def compose(self) -> ComposeResult:
        """The title, the editor, a line for errors and the keys."""
        with Vertical():
            yield Static(self.title_text, classes="editor-title", markup=False)
            if self.multiline:
                yield TextArea(self.original, id="editor-text", soft_wrap=True)
            else:
                yield Input(self.original, id="editor-text")
            yield Static("", id="editor-error", classes="editor-error -empty", markup=False)
            keys = "ctrl+s save" + ("" if self.multiline else " (or enter)") + " · esc close"
            hint = f"{self.hint} · " if self.hint else ""  # (wrapped whole: no placeholder)
            yield Static(f"{hint}{keys}", classes="editor-keys")

    def on_mount(self) -> None:
        """Type at once."""
        self.query_one("#editor-text").focus()

    @property
    def text(self) -> str:
        """The text as edited."""
        if self.multiline:
            return self.query_one("#editor-text", TextArea).text
        return self.query_one("#editor-text", Input).value

    def unsaved_edits(self) -> str:
        """What quitting now would lose ("" when the text is as it came or being saved)."""
        if self.saving or self.text == self.original:
            return ""
        return f"the text typed in '{self.title_text}'"

    @on(Input.Submitted, "#editor-text")
    def submitted(self) -> None:
        """Enter in the one-line box saves."""
        self.action_save()

    def action_save(self) -> None:
        """Store the text (in a worker); the dialog closes once it is stored."""
        if not self.saving:
            self.saving = True
            status = self.query_one("#editor-error", Static)
            status.update("saving …")
            status.set_classes("editor-error -saving")
            self.store_text(self.text)

    @work(thread=True, exclusive=True, exit_on_error=False, group="text-editor")
    def store_text(self, text: str) -> None:
        """Run the save (thread worker: posts a message, touches no widget)."""
        try:
            summary = self.save(text)
        except HafError as exc:
            self.post_message(SaveFailed(first_line(exc)))
            return
        except Exception:
            self.post_message(SaveFailed("could not save: the text is kept"))
            raise
        self.post_message(Saved(summary))

    @on(Saved)
    def text_saved(self, message: Saved) -> None:
        """Stored: close with what was stored."""
        self.dismiss(message.summary)

    @on(SaveFailed)
    def save_failed(self, message: SaveFailed) -> None:
        """Say why in one line; the text stays for another try."""
        self.saving = False
        error = self.query_one("#editor-error", Static)
        error.update(f"{message.reason} (the text is kept: ctrl+s tries again)")
        error.set_classes("editor-error")

    def action_close(self) -> None:
        """Close; when the text was changed, ask before throwing it away."""
        if self.text == self.original:
            self.dismiss(None)
            return
        self.app.push_screen(
            ConfirmScreen(
                "Discard your changes?",
                "The text you changed is not saved (ctrl+s saves it).",
                yes="discard",
                no="keep editing",
            ),
            self._discard_answered,
        )

    def _discard_answered(self, discard: bool | None) -> None:
        if discard:
            self.dismiss(None)
