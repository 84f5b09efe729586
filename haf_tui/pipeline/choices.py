"""What a user can choose from when starting a run (the wizard's lists), in one place for the
faces: model files, the llama.cpp build's GPU support, model downloads."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from haf_tui.datasets import (
    BUILTIN_SAMPLE_ID,
    DEFAULT_SAMPLE,
    DEFAULT_SEED,
    DatasetError,
    list_datasets,
    paper_dataset,
    paper_datasets,
)
from haf_tui.datasets import preview_file as read_preview
from haf_tui.datasets.hub import fetch, hub_cache_dir, hub_offline
from haf_tui.datasets.label_columns import (
    ColumnLabel,
    column_label,
    label_candidates,
    no_label_note,
)
from haf_tui.datasets.labels import parse_statement, stated_rule
from haf_tui.inference.llama_load import gpu_offload_supported
from haf_tui.inference.model_catalog import (
    ModelEntry,
    discover_models,
    download_model,
)
from haf_tui.methods.declared_parts import run_datasets
from haf_tui.store.db import Store
from haf_tui.store.readers import explained_runs

__all__ = [
    "DEFAULT_SAMPLE",
    "DEFAULT_SEED",
    "ColumnLabel",
    "FileTable",
    "ModelEntry",
    "PaperCache",
    "dataset_sources",
    "discover_models",
    "download_model",
    "gpu_offload_supported",
    "label_check",
    "no_label_line",
    "paper_cache_state",
    "parse_statement",
    "preview_file",
]


@dataclass(frozen=True)
class FileTable:
    """The first rows of a dataset file as a table, the columns guessed for each role, a
    line on what was read, and the first values of each column (``values``: what its label
    rule is guessed from, :func:`label_check`)."""

    columns: list[str]
    rows: list[list[Any]]
    guessed: dict[str, str | None]
    note: str
    values: dict[str, list[Any]] = field(default_factory=dict)


def label_check(values: list[Any], column: str, statement: str = "") -> ColumnLabel:
    """What ``column`` would be as the label: the rule ``statement`` states (a threshold, or
    ``toxic=A,B``), else the one its values call for; or why it cannot be one."""
    try:
        threshold, label_map = parse_statement(statement)
        if threshold is None and not label_map:
            return column_label(values, column)
        rule = stated_rule(values, column, threshold=threshold, label_map=label_map)
    except DatasetError as exc:
        return ColumnLabel(problem=str(exc))
    return ColumnLabel(rule=rule)


def no_label_line(values: dict[str, list[Any]], taken: tuple[str | None, ...]) -> str:
    """What the wizard says when no label column is chosen: no gold, and the columns (of
    ``values``, not ``taken``: the text and id columns) that look like labels."""
    return no_label_note(label_candidates(values, taken), pick="the label column")


def dataset_sources(store: Store | None) -> list[tuple[str, str]]:
    """(label, value) of the datasets stored in ``store``, the paper's datasets, then what each
    method makes of each finished run that has explanations (``Method.run_datasets``: the
    judge's ``run:RUN_ID``, its explanations, and ``edits:RUN_ID``; a run without JUSTIFY
    reasons, rationales-only or a judge run, is not offered). A stored copy of such a dataset
    (an earlier run over it kept its instances) is not listed again: its run's entry makes the
    same instances."""
    offered = [
        (run, source)
        for run in (_explained_finished_runs(store) if store is not None else [])
        for source in run_datasets()
    ]
    made_of_runs = {f"{source.prefix}:{run['run_id']}" for run, source in offered}
    sources: list[tuple[str, str]] = []
    if store is not None:
        for row in list_datasets(store):
            if row.dataset_id != BUILTIN_SAMPLE_ID and row.source not in made_of_runs:
                label = f"{row.name} · {row.dataset_id} ({row.n_instances} stored)"
                sources.append((label, f"stored:{row.dataset_id}"))
    for paper in paper_datasets():
        sources.append((f"{paper.title} (paper, from the Hub cache)", f"paper:{paper.key}"))
    for run, source in offered:
        name = f"{source.prefix}:{run['run_id']}"
        sources.append(
            (f"run {run['run_id']} · {run['model_file']}: {source.description} ({name})", name)
        )
    return sources


def _explained_finished_runs(store: Store) -> list[dict[str, Any]]:
    explained = explained_runs(store)
    return [r for r in store.list_runs() if r["status"] == "finished" and r["run_id"] in explained]


def preview_file(path: str, rows: int = 8) -> FileTable:
    """A dataset file's first ``rows`` rows, as it will be read, and the first values of each
    column (for its label rule)."""
    preview = read_preview(path, rows)
    table = [[row.get(column, "") for column in preview.columns] for row in preview.rows]
    values = {c: [r.get(c) for r in preview.rule_rows] for c in preview.columns}
    mapping = preview.mapping
    guessed = {
        "text": mapping.text if mapping else None,
        "id": mapping.id if mapping else None,
        "label": mapping.label if mapping else None,
    }
    encoding = f", {preview.encoding}" if preview.encoding else ""
    count = f"{preview.n_rows}" if preview.n_rows_exact else f"about {preview.n_rows:,}"
    note = f"{count} rows ({preview.format}{encoding})"
    if preview.notes:
        note += "; " + "; ".join(preview.notes)
    return FileTable(preview.columns, table, guessed, note, values)


@dataclass(frozen=True)
class PaperCache:
    """Whether a paper dataset's files are in the local Hugging Face cache, and a line saying so
    (when not: how to import it from a file, and whether it can be downloaded here)."""

    key: str
    cached: bool
    can_download: bool
    note: str


def paper_cache_state(key: str) -> PaperCache:
    """Look for a paper dataset in the local cache only (no network: it answers at once)."""
    spec = paper_dataset(key)
    try:
        files = fetch(spec.title, spec.key, spec.hub, offline=True, file_hint=spec.file_hint)
    except DatasetError:
        offline = hub_offline()
        where = "the Hub is offline (HF_HUB_OFFLINE)" if offline else "ctrl+g downloads it now"
        note = (
            f"{spec.title} is not cached ({hub_cache_dir()}): import it from a file with "
            f"`haf datasets import {key} --file PATH`; {where}"
        )
        return PaperCache(key, False, not offline, note)
    return PaperCache(key, True, False, f"{spec.title}: in the local cache ({len(files)} file(s))")


class DownloadCancelledError(Exception):
    """The user cancelled a download."""


def download_paper(
    key: str, progress: Callable[[int, int | None], None], cancelled: Callable[[], bool]
) -> list[Path]:
    """Download a paper dataset into the Hugging Face cache, reporting bytes to ``progress``;
    raises :class:`DownloadCancelledError` at the next chunk once ``cancelled()``."""
    from tqdm.auto import tqdm  # type: ignore[import-untyped]

    class Reporter(tqdm):  # type: ignore[misc]
        """huggingface-hub's progress bars, silenced, reported and cancellable."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self.reported_unit = kwargs.get("unit", "it")
            kwargs["disable"] = True
            super().__init__(*args, **kwargs)

        def update(self, n: float | None = 1) -> bool | None:
            if cancelled():
                raise DownloadCancelledError("download cancelled")
            self.n += n or 0
            if self.reported_unit == "B":
                progress(int(self.n), int(self.total) if self.total else None)
            return None

    spec = paper_dataset(key)
    return fetch(
        spec.title, spec.key, spec.hub, offline=False, file_hint=spec.file_hint,
        tqdm_class=Reporter,
    )  # fmt: skip
