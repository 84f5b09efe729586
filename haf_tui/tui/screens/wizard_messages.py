"""Messages the new-run wizard's workers post to it (they only post; the screen draws)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from textual.message import Message

from haf_tui.datasets import Dataset
from haf_tui.pipeline.choices import FileTable, ModelEntry
from haf_tui.pipeline.estimate import TimeEstimate
from haf_tui.pipeline.models import LoadedModels


@dataclass
class ModelsFound(Message):
    """The model folders were scanned (``pick``: a just-downloaded file to pick)."""

    entries: list[ModelEntry]
    pick: str | None = None


@dataclass
class SourcesFound(Message):
    """The datasets were listed (the stored ones read from the database), and the llama.cpp
    build asked whether it offloads to a GPU (what the later steps show)."""

    sources: list[tuple[str, str]]
    offload_supported: bool


@dataclass
class PreviewReady(Message):
    """A dataset file was read for its preview (or could not be: ``error``)."""

    columns: list[str]
    rows: list[list[Any]]
    guessed: dict[str, str | None]
    note: str
    error: str | None = None
    values: dict[str, list[Any]] = field(default_factory=dict)
    """The file's first values per column (its label rules)."""

    @classmethod
    def of(cls, table: FileTable) -> PreviewReady:
        """The preview of a file as read."""
        rows = [list(row) for row in table.rows]
        return cls(table.columns, rows, table.guessed, table.note, values=table.values)

    def shown(
        self,
    ) -> tuple[list[str], list[list[Any]], dict[str, str | None], str, dict[str, list[Any]]]:
        """What the dataset step shows (:meth:`DatasetPicker.show_preview`'s arguments)."""
        return self.columns, self.rows, self.guessed, self.note, self.values


@dataclass
class DatasetRead(Message):
    """The review's dataset was read (or could not be)."""

    key: object
    dataset: Dataset | None
    error: str | None = None


@dataclass
class ModelTimed(Message):
    """Model ``index`` has its time estimate (``models``: the first one, loaded for the run)."""

    key: object
    index: int
    estimate: TimeEstimate | None
    models: LoadedModels | None = None
    error: str | None = None
