"""The wizard's model step: GGUF files with their metadata (several may be picked: one run
each), and a Hugging Face download form (a worker downloads, with progress)."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, DataTable, Input, ProgressBar, Static

from haf_tui.defaults import haf_home
from haf_tui.pipeline.choices import ModelEntry, download_model
from haf_tui.tui.messages import DownloadProgress
from haf_tui.tui.widgets.fit_columns import Cell, FitColumn
from haf_tui.tui.widgets.measured_table import MeasuredTable

LOOKING = "looking for models…"
"""What the models step says when asked to go on before the model folders were read."""
COLUMNS = ("use", "file", "size", "arch", "quant", "ctx", "template")
FIT_COLUMNS = (
    FitColumn("use", rank=0),
    FitColumn("file", min_width=16, rank=1),
    FitColumn("size", rank=3),
    FitColumn("arch", min_width=8, rank=4),
    FitColumn("quant", rank=2),
    FitColumn("ctx", rank=5),
    FitColumn("template", min_width=3, rank=6),
)
"""The model table on a narrow screen: the file name cut with "…" before the quantisation."""


def _size(num_bytes: int) -> str:
    return f"{num_bytes / 2**30:.1f} GiB" if num_bytes >= 2**30 else f"{num_bytes / 2**20:.0f} MiB"


DOWNLOAD_LABEL = (
    "Download from Hugging Face, e.g. repository unsloth/gemma-3-1b-it-GGUF, "
    "file gemma-3-1b-it-Q4_K_M.gguf:"
)
"""Above the download fields: the examples (the fields' placeholders are short, so that
they fit the fields at 80 columns)."""


class ModelPicker(Vertical):
    """A table of GGUF files (space or enter toggles one) and the download form."""

    DEFAULT_CSS = """
    ModelPicker { height: 1fr; }
    ModelPicker #models { height: 1fr; min-height: 4; }
    ModelPicker #download-form { height: auto; }
    ModelPicker #download-form Input { width: 1fr; }
    ModelPicker #download-form Button { width: auto; min-width: 12; }
    ModelPicker #download-bar { display: none; }
    ModelPicker #download-bar.-active { display: block; }
    """

    @dataclass
    class DownloadEnded(Message):
        """A model download ended: its path (the wizard lists the files again), or why not."""

        path: str | None
        error: str | None = None

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.entries: list[ModelEntry] = []
        self.chosen: set[str] = set()
        self.listed = False
        """Whether the model folders were read (until then the list is empty, not none)."""

    def compose(self) -> ComposeResult:
        """The table, a hint, the download form and its progress bar."""
        yield Static("GGUF models (space: pick or drop; several: one run each)", classes="hint")
        yield MeasuredTable(id="models", cursor_type="row", zebra_stripes=True)
        yield Static(DOWNLOAD_LABEL, id="download-label")  # (wraps: a Label is one line)
        with Horizontal(id="download-form"):
            yield Input(placeholder="owner/repo", id="dl-repo")
            yield Input(placeholder="file.gguf", id="dl-file")
            yield Button("Download", id="dl-start")
        yield ProgressBar(total=None, id="download-bar")
        yield Static("", id="download-note", classes="hint")

    def on_mount(self) -> None:
        """Columns of the table."""
        self.query_one("#models", DataTable).add_columns(*COLUMNS)

    def set_entries(self, entries: list[ModelEntry], *, pick: str | None = None) -> None:
        """Show ``entries``; the embedded default (or ``pick``) is picked when none is."""
        self.entries, self.listed = entries, True
        paths = {str(e.path) for e in entries}
        self.chosen &= paths
        if pick is not None and pick in paths:
            self.chosen.add(pick)
        if not self.chosen:
            default = next((e for e in entries if e.embedded and e.info), None)
            if default is not None:
                self.chosen.add(str(default.path))
        self._fill()

    def _fill(self) -> None:
        table = self.query_one("#models", MeasuredTable)
        row = table.cursor_row
        rows: list[tuple[Cell, ...]] = []
        for entry in self.entries:
            info = entry.info
            mark = "●" if str(entry.path) in self.chosen else "○"
            if info is None:
                error = Text(entry.error or "unreadable", style="red")
                rows.append((mark, entry.label, "", error, "", "", ""))
                continue
            rows.append(
                (
                    mark,
                    entry.label,
                    _size(info.size_bytes),
                    info.architecture,
                    info.quantization,
                    str(info.context_length or "?"),
                    "yes" if info.has_chat_template else "no (format by arch)",
                )
            )
        table.fill_fitted(FIT_COLUMNS, rows, [str(entry.path) for entry in self.entries])
        if self.entries:
            table.move_cursor(row=min(max(row, 0), len(self.entries) - 1))

    def on_resize(self) -> None:
        """Another width: the table fitted again."""
        self.call_after_refresh(self._fill)

    def toggle_current(self) -> None:
        """Pick or drop the model under the cursor."""
        table = self.query_one("#models", DataTable)
        if not self.entries:
            return
        entry = self.entries[table.cursor_row]
        key = str(entry.path)
        if key in self.chosen:
            self.chosen.discard(key)
        elif entry.info is None:
            self.app.notify(f"{entry.path.name}: {entry.error}", severity="error")
            return
        else:
            self.chosen.add(key)
        self._fill()

    def key_space(self) -> None:
        """Space toggles the model under the cursor."""
        if self.query_one("#models", DataTable).has_focus:
            self.toggle_current()

    @on(DataTable.RowSelected, "#models")
    def _row_selected(self) -> None:
        self.toggle_current()

    def restore(self, paths: list[str]) -> None:
        """Pick ``paths`` (the last answers) once the files are listed (those still there)."""
        self.chosen = set(paths)
        if self.entries:
            self.set_entries(self.entries)

    def chosen_paths(self) -> list[str]:
        """The picked files' paths, in list order (what the wizard keeps between sessions)."""
        return [str(e.path) for e in self.selected()]

    def selected(self) -> list[ModelEntry]:
        """The picked models, in list order."""
        return [e for e in self.entries if str(e.path) in self.chosen and e.info is not None]

    def validate(self) -> str | None:
        """Why the step cannot go on, or None."""
        if not self.listed:
            return LOOKING
        if not self.entries:
            return "no GGUF models found: put one into models/ or download one"
        if not self.selected():
            return "pick at least one model (space)"
        return None

    @on(Button.Pressed, "#dl-start")
    @on(Input.Submitted, "#dl-file")
    def _download(self) -> None:
        repo = self.query_one("#dl-repo", Input).value.strip()
        filename = self.query_one("#dl-file", Input).value.strip()
        if not repo or not filename:
            self.query_one("#download-note", Static).update("give the repository and the file")
            return
        self.download_progress(0, None)
        self.download(repo, filename)

    @work(thread=True, exclusive=True, exit_on_error=False, group="model-download")
    def download(self, repo_id: str, filename: str) -> None:
        """Download a GGUF into ``$HAF_HOME/models`` with progress messages."""
        try:
            path = download_model(
                repo_id, filename, haf_home() / "models", progress=self._post_progress
            )
        except Exception as exc:  # one line for the user, whatever the Hub raised
            self.post_message(self.DownloadEnded(None, str(exc).splitlines()[0]))
            return
        self.post_message(self.DownloadEnded(str(path)))

    def _post_progress(self, done: int, total: int | None) -> None:
        self.post_message(DownloadProgress(done, total))

    @on(DownloadProgress)
    def _progress(self, message: DownloadProgress) -> None:
        message.stop()
        self.download_progress(message.done, message.total)

    @on(DownloadEnded)
    def _ended(self, message: DownloadEnded) -> None:
        if message.error:
            message.stop()
            self.download_finished(message.error, failed=True)
            return
        self.download_finished(f"downloaded {message.path}")  # (the wizard lists it, picked)

    def download_progress(self, done: int, total: int | None) -> None:
        """Show a download's progress."""
        bar = self.query_one("#download-bar", ProgressBar)
        bar.add_class("-active")
        bar.update(total=total, progress=done)
        size = f"{done / 2**20:.0f}" + (f" of {total / 2**20:.0f}" if total else "")
        self.query_one("#download-note", Static).update(f"downloading: {size} MiB")

    def download_finished(self, note: str, *, failed: bool = False) -> None:
        """A download ended (``note`` says how)."""
        self.query_one("#download-bar", ProgressBar).remove_class("-active")
        widget = self.query_one("#download-note", Static)
        widget.update(Text(note, style="red" if failed else ""))
