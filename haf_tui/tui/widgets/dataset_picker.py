"""The wizard's dataset step: the built-in sample, datasets stored in the database, the paper's
datasets, or a local file (with a preview and its column mapping); sample size and seed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import DataTable, Input, Label, Select, Static

from haf_tui.pipeline.choices import DEFAULT_SEED
from haf_tui.pipeline.runs import DatasetChoice

FILE_SOURCE = "file:"
BUILTIN_SOURCE = "builtin:"
NO_COLUMN = "(none)"


class DatasetPicker(Vertical):
    """Where the instances come from, and how many of them (a seeded sample)."""

    DEFAULT_CSS = """
    DatasetPicker { height: 1fr; }
    DatasetPicker Horizontal { height: auto; }
    DatasetPicker .field-label { width: 16; padding: 1 1 0 1; }
    DatasetPicker Select { width: 1fr; }
    DatasetPicker Input { width: 1fr; }
    DatasetPicker #file-box { height: auto; display: none; }
    DatasetPicker #file-box.-active { display: block; }
    DatasetPicker #mapping Select { width: 1fr; }
    DatasetPicker #preview { height: auto; max-height: 12; }
    DatasetPicker #dataset-note { color: $text-muted; padding: 0 1; }
    """

    @dataclass
    class PreviewRequested(Message):
        """The user gave a file to preview."""

        path: str

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.sources: list[tuple[str, str]] = [("built-in sample (16 texts)", BUILTIN_SOURCE)]
        self.columns: list[str] = []

    def compose(self) -> ComposeResult:
        """Source, file box (path, mapping, preview), sample size and seed."""
        with Horizontal():
            yield Label("dataset", classes="field-label")
            yield Select(self._options(), value=BUILTIN_SOURCE, allow_blank=False, id="ds-source")
        with Vertical(id="file-box"):
            with Horizontal():
                yield Label("file", classes="field-label")
                yield Input(placeholder="path to .csv/.tsv/.jsonl/.parquet, enter", id="ds-path")
            with Horizontal(id="mapping"):
                for role in ("text", "id", "label"):
                    yield Select[str]([], prompt=f"{role} column", id=f"ds-col-{role}")
            yield DataTable(id="preview", zebra_stripes=True)
        with Horizontal():
            yield Label("sample size", classes="field-label")
            yield Input(placeholder="all (paper datasets: 1024)", id="ds-limit")
            yield Label("sample seed", classes="field-label")
            yield Input(str(DEFAULT_SEED), id="ds-seed")
        yield Static("", id="dataset-note")

    def _options(self) -> list[tuple[str, str]]:
        return [*self.sources, ("a local file …", FILE_SOURCE)]

    def set_sources(self, sources: list[tuple[str, str]]) -> None:
        """Offer ``sources`` (label, value) after the built-in sample."""
        select = self.query_one("#ds-source", Select)
        current = select.value
        self.sources = [self.sources[0], *sources]
        select.set_options(self._options())
        values = {value for _, value in self._options()}
        select.value = current if current in values else BUILTIN_SOURCE

    @on(Select.Changed, "#ds-source")
    def _source_changed(self, event: Select.Changed) -> None:
        is_file = event.value == FILE_SOURCE
        self.query_one("#file-box").set_class(is_file, "-active")
        self.note("")

    @on(Input.Changed, "#ds-path")
    def _path_changed(self) -> None:
        self.columns = []

    @on(Input.Submitted, "#ds-path")
    def _path_submitted(self, event: Input.Submitted) -> None:
        if event.value.strip():
            self.post_message(self.PreviewRequested(event.value.strip()))

    def show_preview(
        self, columns: list[str], rows: list[list[Any]], guessed: dict[str, str | None], note: str
    ) -> None:
        """A file's first rows, its columns offered for the mapping (``guessed`` preselected)."""
        self.columns = columns
        table = self.query_one("#preview", DataTable)
        table.clear(columns=True)
        table.add_columns(*columns)
        for row in rows:
            table.add_row(*[str(value)[:60] for value in row])
        for role in ("text", "id", "label"):
            select = self.query_one(f"#ds-col-{role}", Select)
            options = [(column, column) for column in columns]
            if role != "text":
                options.insert(0, (NO_COLUMN, NO_COLUMN))
            select.set_options(options)
            value = guessed.get(role) or (None if role == "text" else NO_COLUMN)
            if value is not None:
                select.value = value
        self.note(note)

    def note(self, text: str) -> None:
        """A line under the form (what was read, or what is wrong)."""
        self.query_one("#dataset-note", Static).update(text)

    def _column(self, role: str) -> str | None:
        value = self.query_one(f"#ds-col-{role}", Select).value
        if value == NO_COLUMN or value is None or value is Select.NULL:
            return None
        return str(value)

    def choice(self) -> DatasetChoice:
        """What the user chose; ValueError with a one-line reason when incomplete."""
        source = str(self.query_one("#ds-source", Select).value)
        limit_text = self.query_one("#ds-limit", Input).value.strip()
        seed_text = self.query_one("#ds-seed", Input).value.strip() or str(DEFAULT_SEED)
        try:
            limit = int(limit_text) if limit_text else None
            seed = int(seed_text)
        except ValueError:
            raise ValueError("sample size and seed must be whole numbers") from None
        if limit is not None and limit < 1:
            raise ValueError("sample size must be at least 1 (empty: all)")
        if source == FILE_SOURCE:
            path = self.query_one("#ds-path", Input).value.strip()
            if not path:
                raise ValueError("give the file's path (enter previews it)")
            if not self.columns:
                raise ValueError("the file was not read yet, or could not be: enter reads it")
            text = self._column("text")
            if text is None:
                raise ValueError("pick the text column")
            return DatasetChoice(
                "file",
                path,
                sample_size=limit,
                seed=seed,
                text_column=text,
                id_column=self._column("id"),
                label_column=self._column("label"),
            )
        if source == BUILTIN_SOURCE:
            return DatasetChoice("builtin", "sample", sample_size=limit, seed=seed)
        kind, _, name = source.partition(":")
        return DatasetChoice(kind, name, sample_size=limit, seed=seed)  # type: ignore[arg-type]

    def validate(self) -> str | None:
        """Why the step cannot go on, or None."""
        try:
            self.choice()
        except ValueError as exc:
            self.note(str(exc))
            return str(exc)
        return None
