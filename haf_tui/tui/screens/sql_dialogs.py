"""The SQL screen's dialogs (the path of an export or of a ``.sql`` file, the search of past
queries; each dismisses with its answer, or None on ``escape``), and the parameter form's
values."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from haf_tui.reports import QueryError, QueryParam, coerce_param, resolve_run_id
from haf_tui.store import Store, TargetExistsError
from haf_tui.tui.screens.confirm import ConfirmScreen
from haf_tui.tui.sql_history import HistoryEntry, load_history, search_history, take_notices
from haf_tui.tui.sql_messages import ExportExists, ExportFinished, HistoryRead, SqlFailed
from haf_tui.tui.widgets.sql_params import ParamField
from haf_tui.vocabulary import first_line

RUN_PARAMS = ("run_id", "run_ids")
"""Parameters that take run ids (a unique prefix is resolved, as ``haf report`` does)."""

DIALOG_CSS = """
{name} {{ align: center middle; background: $background; }}
{name} > Vertical {{ width: 90%; max-width: 100; height: auto; max-height: 90%;
    border: round $primary; background: $surface; padding: 0 1; }}
{name} .dialog-title {{ text-style: bold; }}
{name} .dialog-keys, {name} .dialog-note {{ color: $text-muted; }}
{name} .dialog-error {{ color: $error; }}
"""
"""The dialogs' look. Their background is opaque: the SQL screen need not be seen while a path
is typed or a past query looked for, and under a translucent one Textual lays that screen out
and blends every cell of it into each frame (~40 of a key's ~75 ms at paper scale)."""


class ExportScreen(ModalScreen[tuple[Path, int] | None]):
    """Where to write an export: a path prefilled with a default file name, relative to the
    current directory (shown). It writes there (``write(path, overwrite)``, in a thread
    worker) and closes with the full path and the rows written; a failure stays in the dialog,
    to fix the path. An existing file is replaced only after asking (the store refuses the
    database's own files whatever the answer, and writes atomically)."""

    DEFAULT_CSS = DIALOG_CSS.format(name="ExportScreen")
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, kind: str, default: Path, cwd: Path, write: Callable[[Path, bool], int]):
        super().__init__()
        self.kind = kind
        self.default = default
        self.cwd = cwd
        self.write = write

    def compose(self) -> ComposeResult:
        """The title, the current directory, the path, an error line, the keys."""
        with Vertical():
            yield Static(Text(f"Export the whole result as {self.kind}"), classes="dialog-title")
            yield Static(Text(f"current directory: {self.cwd}"), classes="dialog-note")
            yield Input(str(self.default), id="export-path", compact=True)
            yield Static("", id="export-error", classes="dialog-error")
            yield Static("enter write · esc cancel", classes="dialog-keys")

    def on_mount(self) -> None:
        """Focus the path."""
        self.query_one("#export-path", Input).focus()

    def say(self, text: str) -> None:
        """The dialog's error line."""
        self.query_one("#export-error", Static).update(Text(text))

    @on(Input.Submitted)
    def submit(self, event: Input.Submitted) -> None:
        """Write to the path given (relative to the current directory), unless it is empty
        or a folder."""
        text = event.value.strip()
        path = (self.cwd / Path(text).expanduser()).resolve() if text else None
        if path is None or path.is_dir():
            self.say("a file name is needed" if path is None else f"{path} is a folder")
            return
        self.say(f"writing {path} …")
        self.export(path, overwrite=False)

    @work(thread=True, exclusive=True, exit_on_error=False, group="sql-export")
    def export(self, path: Path, overwrite: bool) -> None:
        """Write the export (thread worker: posts a message)."""
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            rows = self.write(path, overwrite)
        except TargetExistsError:
            self.post_message(ExportExists(path))
            return
        except Exception as exc:
            self.post_message(SqlFailed("export", f"export failed: {first_line(exc)}"))
            return
        self.post_message(ExportFinished("export", path, rows))

    @on(ExportFinished)
    def written(self, message: ExportFinished) -> None:
        """Close with where it went."""
        self.dismiss((message.path, message.rows))

    @on(SqlFailed)
    def failed(self, message: SqlFailed) -> None:
        """Say why, and stay open."""
        self.say(message.message)

    @on(ExportExists)
    def ask_overwrite(self, message: ExportExists) -> None:
        """The file exists: replace it only if the user says so."""

        def answered(replace: bool | None) -> None:
            if replace:
                self.say(f"writing {message.path} …")
                self.export(message.path, overwrite=True)
            else:
                self.say(f"{message.path} exists and was kept: give another name")
                self.query_one("#export-path", Input).focus()

        question = f"{message.path} exists. Replace it with this export?"
        self.app.push_screen(
            ConfirmScreen("Replace the file?", question, yes="replace", no="keep it"), answered
        )

    def action_cancel(self) -> None:
        """Close without exporting."""
        self.dismiss(None)


class PathScreen(ModalScreen[Path | None]):
    """Asks for a file's path (relative to the current directory, shown); dismisses with the
    full path, or None on ``escape``. A folder or an empty path is said in the dialog."""

    DEFAULT_CSS = DIALOG_CSS.format(name="PathScreen")
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, default: str, cwd: Path, verb: str):
        super().__init__()
        self.title_text = title
        self.default = default
        self.cwd = cwd
        self.verb = verb

    def compose(self) -> ComposeResult:
        """The title, the current directory, the path, an error line, the keys."""
        with Vertical():
            yield Static(Text(self.title_text), classes="dialog-title")
            yield Static(Text(f"current directory: {self.cwd}"), classes="dialog-note")
            yield Input(self.default, id="file-path", compact=True)
            yield Static("", id="file-error", classes="dialog-error")
            yield Static(f"enter {self.verb} · esc cancel", classes="dialog-keys")

    def on_mount(self) -> None:
        """Focus the path."""
        self.query_one("#file-path", Input).focus()

    @on(Input.Submitted)
    def submit(self, event: Input.Submitted) -> None:
        """Close with the path given, unless it is empty or a folder."""
        text = event.value.strip()
        path = (self.cwd / Path(text).expanduser()).resolve() if text else None
        if path is None or path.is_dir():
            error = "a file name is needed" if path is None else f"{path} is a folder"
            self.query_one("#file-error", Static).update(Text(error))
            return
        self.dismiss(path)

    def action_cancel(self) -> None:
        """Close without a path."""
        self.dismiss(None)


class HistoryScreen(ModalScreen[str | None]):
    """Past queries, newest first, filtered by the words typed; ``enter`` takes one (over an
    opaque background, as every dialog of :data:`DIALOG_CSS`)."""

    DEFAULT_CSS = (
        DIALOG_CSS.format(name="HistoryScreen")
        + """
    HistoryScreen OptionList { height: 1fr; max-height: 18; text-wrap: nowrap;
        text-overflow: ellipsis; }
    """
    )
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        Binding("down", "move(1)", show=False),
        Binding("up", "move(-1)", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.entries: list[HistoryEntry] = []
        self.shown: list[HistoryEntry] = []

    def compose(self) -> ComposeResult:
        """The filter, the list, the keys."""
        with Vertical():
            yield Static(Text("Query history"), classes="dialog-title")
            yield Input(placeholder="type words to filter", id="history-filter", compact=True)
            yield OptionList(id="history-list")
            yield Static("↑↓ choose · enter put in the editor · esc cancel", classes="dialog-keys")

    def on_mount(self) -> None:
        """Read the history (in a worker); focus the filter."""
        self.read()
        self.query_one("#history-filter", Input).focus()

    @work(thread=True, exclusive=True, exit_on_error=False, group="sql-history")
    def read(self) -> None:
        """Read the history file (thread worker: posts a message)."""
        self.post_message(HistoryRead(load_history()))

    @on(HistoryRead)
    def listed(self, message: HistoryRead) -> None:
        """List every entry (or say there are none yet)."""
        self.entries = message.entries
        for notice in take_notices():  # (the history set aside: said once)
            self.notify(notice, severity="warning", timeout=12)
        self.fill(self.query_one("#history-filter", Input).value)
        if not self.entries:
            self.query_one("#history-list", OptionList).add_option(
                Option("no queries run yet: ctrl+r runs the editor's SQL", disabled=True)
            )

    @on(Input.Changed, "#history-filter")
    def refilter(self, event: Input.Changed) -> None:
        """Keep the entries that hold every typed word."""
        self.fill(event.value)

    def fill(self, text: str) -> None:
        """List the matching entries (each on one line, with when it ran)."""
        self.shown = search_history(self.entries, text)
        options = self.query_one("#history-list", OptionList)
        options.clear_options()
        options.add_options(_history_option(entry) for entry in self.shown)
        if self.shown:
            options.highlighted = 0

    def action_move(self, step: int) -> None:
        """Move the highlight while typing in the filter."""
        options = self.query_one("#history-list", OptionList)
        if self.shown:
            current = options.highlighted or 0
            options.highlighted = max(0, min(current + step, len(self.shown) - 1))

    @on(Input.Submitted, "#history-filter")
    def take_highlighted(self) -> None:
        """Close with the highlighted query."""
        highlighted = self.query_one("#history-list", OptionList).highlighted
        if highlighted is not None and highlighted < len(self.shown):
            self.dismiss(self.shown[highlighted].sql)

    @on(OptionList.OptionSelected, "#history-list")
    def take_selected(self, event: OptionList.OptionSelected) -> None:
        """Close with the chosen query."""
        self.dismiss(self.shown[event.option_index].sql)

    def action_cancel(self) -> None:
        """Close without a query."""
        self.dismiss(None)


def _history_option(entry: HistoryEntry) -> Option:
    when = entry.at.astimezone().strftime("%Y-%m-%d %H:%M")
    text = Text(when + "  ", style="dim")
    text.append(" ".join(entry.sql.split()))
    text.no_wrap = True
    text.overflow = "ellipsis"
    return Option(text)


def param_fields(
    names: list[str], specs: dict[str, QueryParam], last: dict[str, str]
) -> list[ParamField]:
    """The form's fields: each name with its declared type and default (from ``specs``, a
    named query's params by name), or the value used last time."""
    fields = []
    for name in names:
        spec = specs.get(name)
        value = last.get(name)
        if value is None and spec is not None and not spec.required:
            value = _as_text(spec.default)
        fields.append(
            ParamField(
                name,
                spec.type if spec is not None else "VARCHAR",
                value or "",
                spec.description if spec is not None else "",
            )
        )
    return fields


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    return str(value)


def typed_params(values: dict[str, str], specs: dict[str, QueryParam]) -> dict[str, Any]:
    """The form's text as each parameter's declared type (VARCHAR when undeclared).

    QueryError (one line) for an empty required value or a value of the wrong type."""
    typed: dict[str, Any] = {}
    for name, text in values.items():
        spec = specs.get(name) or QueryParam(name=name, type="VARCHAR")
        if not text.strip() and not spec.type.endswith("[]"):
            if spec.required:
                raise QueryError(f"parameter ${name} needs a value")
            typed[name] = None
            continue
        typed[name] = coerce_param(spec, text.strip())
    return typed


def with_run_ids(store: Store, params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with run ids given as unique prefixes resolved to full ids."""
    resolved = dict(params)
    for name in RUN_PARAMS:
        value = resolved.get(name)
        if isinstance(value, list):
            resolved[name] = [resolve_run_id(store, v) for v in value]
        elif value is not None:
            resolved[name] = resolve_run_id(store, value)
    return resolved
