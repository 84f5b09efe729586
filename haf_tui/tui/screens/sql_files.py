"""The SQL editor's buffers and files, as harlequin and DBeaver have them: several buffers
(``f8`` a new one, ``f3`` the next), a ``.sql`` file opened into a buffer (``f2``) or a buffer
saved to one (``ctrl+s``: a temporary file renamed into place, over another existing file only
after asking, never over the database), and the SQL laid out by sqlfmt (``f4``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from textual.app import App

from haf_tui.store import StoreError, check_target, write_text_atomically
from haf_tui.tui.screens.confirm import ConfirmScreen
from haf_tui.tui.screens.sql_dialogs import PathScreen
from haf_tui.tui.sql_text import FormatError, format_sql
from haf_tui.tui.widgets.sql_editor import SqlEditor

SQL_FILE_LIMIT = 1 << 20
"""The largest ``.sql`` file opened (bytes): a bigger one is not a query to edit here."""


def read_sql_file(path: Path) -> str:
    """A ``.sql`` file's text; OSError or ValueError with one line when it cannot be opened."""
    size = path.stat().st_size
    if size > SQL_FILE_LIMIT:
        raise ValueError(f"{path} is {size:,} bytes: more than the editor opens (1 MiB)")
    raw = path.read_bytes()
    if b"\x00" in raw:
        raise ValueError(f"{path} is a binary file, not SQL text")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text ({exc.reason})") from exc


class SqlFileHost(Protocol):
    """What the verbs use of the SQL screen."""

    @property
    def app(self) -> App[Any]:
        """The app (to push dialogs)."""
        ...

    @property
    def editor(self) -> SqlEditor:
        """The editor."""
        ...

    @property
    def database_path(self) -> Path:
        """The open database (never written over)."""
        ...

    def show_error(self, message: str) -> None:
        """The error line."""

    def show_hint(self, message: str) -> None:
        """The hint line."""


class SqlFileActions:
    """The SQL screen's buffer, file and format verbs (``SqlScreen`` inherits them)."""

    def action_new_buffer(self: SqlFileHost) -> None:
        """A new, empty buffer."""
        self.editor.new_buffer()
        self.editor.focus()

    def action_next_buffer(self: SqlFileHost) -> None:
        """The next buffer (an empty one left is closed)."""
        self.editor.next_buffer()
        self.editor.focus()

    def action_format_sql(self: SqlFileHost) -> None:
        """Lay out the selection, or the whole text, with sqlfmt."""
        editor = self.editor
        selected = editor.selected_text
        try:
            laid_out = format_sql(selected if selected.strip() else editor.text)
        except FormatError as exc:
            self.show_error(str(exc))
            return
        if selected.strip():
            editor.replace(laid_out, *editor.selection)
        else:
            editor.load_text(laid_out)
        self.show_hint("formatted with sqlfmt (ctrl+z undoes it)")

    def action_open_file(self: SqlFileHost) -> None:
        """Ask for a ``.sql`` file and open it in a new buffer (in this one when it is empty)."""

        def opened(path: Path | None) -> None:
            self.editor.focus()
            if path is None:
                return
            try:
                text = read_sql_file(path)
            except (OSError, ValueError) as exc:
                self.show_error(f"cannot open {path}: {getattr(exc, 'strerror', None) or exc}")
                return
            editor = self.editor
            if not editor.text.strip() and editor.buffer.path is None:
                editor.load_text(text)
                editor.saved_as(path)
            else:
                editor.new_buffer(text, str(path))
            self.show_error("")
            self.show_hint(f"opened {path} · ctrl+s saves it")

        self.app.push_screen(PathScreen("Open a .sql file", "", Path.cwd(), "open"), opened)

    def action_save(self: SqlFileHost) -> None:
        """Ask where to save the buffer (its own file first); over another existing file only
        after asking."""
        editor = self.editor
        own = editor.buffer.path
        default = own or "query.sql"

        def chosen(path: Path | None) -> None:
            editor.focus()
            if path is None:
                return
            try:  # (never the database, its WAL or holder note; never a folder)
                check_target(path, [self.database_path], overwrite=True)
            except StoreError as exc:
                self.show_error(str(exc))
                return
            if path.exists() and str(path) != own:
                question = f"{path} exists. Write the buffer over it?"
                self.app.push_screen(
                    ConfirmScreen("Overwrite the file?", question, yes="overwrite", no="keep it"),
                    lambda yes: write_buffer(self, path) if yes else None,
                )
                return
            write_buffer(self, path)

        self.app.push_screen(PathScreen("Save the buffer as", default, Path.cwd(), "save"), chosen)


def write_buffer(host: SqlFileHost, path: Path) -> None:
    """Write the editor's text to ``path`` (a temporary file renamed into place)."""
    try:
        write_text_atomically(path, host.editor.text)
    except OSError as exc:
        host.show_error(f"cannot save {path}: {exc.strerror or exc}")
        return
    host.editor.saved_as(path)
    host.show_error("")
    host.show_hint(f"saved {path}")
