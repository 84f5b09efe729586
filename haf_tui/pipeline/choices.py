"""What a user can choose from when starting a run (the wizard's lists), in one place for the
faces: model files, the llama.cpp build's GPU support, model downloads."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from haf_tui.datasets import BUILTIN_SAMPLE_ID, DEFAULT_SEED, list_datasets, paper_datasets
from haf_tui.datasets import preview_file as read_preview
from haf_tui.inference.llama import gpu_offload_supported
from haf_tui.inference.model_catalog import (
    ModelEntry,
    discover_models,
    download_model,
)
from haf_tui.store.db import Store

__all__ = [
    "DEFAULT_SEED",
    "FileTable",
    "ModelEntry",
    "dataset_sources",
    "discover_models",
    "download_model",
    "gpu_offload_supported",
    "preview_file",
]


@dataclass(frozen=True)
class FileTable:
    """The first rows of a dataset file as a table, the columns guessed for each role, and a
    line on what was read."""

    columns: list[str]
    rows: list[list[Any]]
    guessed: dict[str, str | None]
    note: str


def dataset_sources(store: Store | None) -> list[tuple[str, str]]:
    """(label, value) of the datasets stored in ``store``, then the paper's datasets."""
    sources: list[tuple[str, str]] = []
    if store is not None:
        for row in list_datasets(store):
            if row.dataset_id != BUILTIN_SAMPLE_ID:
                label = f"{row.name} · {row.dataset_id} ({row.n_instances} stored)"
                sources.append((label, f"stored:{row.dataset_id}"))
    for paper in paper_datasets():
        sources.append((f"{paper.title} (paper, from the Hub cache)", f"paper:{paper.key}"))
    return sources


def preview_file(path: str, rows: int = 8) -> FileTable:
    """A dataset file's first ``rows`` rows, as it will be read."""
    preview = read_preview(path, rows)
    table = [[row.get(column, "") for column in preview.columns] for row in preview.rows]
    mapping = preview.mapping
    guessed = {
        "text": mapping.text if mapping else None,
        "id": mapping.id if mapping else None,
        "label": mapping.label if mapping else None,
    }
    encoding = f", {preview.encoding}" if preview.encoding else ""
    note = f"{preview.n_rows} rows ({preview.format}{encoding})"
    if preview.notes:
        note += "; " + "; ".join(preview.notes)
    return FileTable(preview.columns, table, guessed, note)
