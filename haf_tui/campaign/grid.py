"""A campaign's grid file (``grid.toml``): the models, datasets and suites of a campaign, its
``limit`` and ``seed``, and a ``[settings]`` table of ``haf run`` options by their flag name.

Parsing checks the file itself (TOML, labels, model files, the shape of every entry) with one
:class:`GridError` line per problem; the ``[settings]`` table is read by ``haf run``'s own
parser (the command line's), and the datasets and suites are checked against the store and the
method registry when the campaign is planned.
"""

from __future__ import annotations

import os
import stat
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError, field_validator

from haf_tui.campaign.similarities import SimilarityEntry, parse_similarities
from haf_tui.datasets.labels import LabelError, finite_threshold
from haf_tui.vocabulary import HafError

EMBEDDED = "embedded"
"""A model entry naming the embedded default GGUF."""
FILE_SUFFIXES = (".csv", ".tsv", ".jsonl", ".json", ".parquet")
"""A dataset entry ending so is a file (relative to the grid file)."""
MAX_GRID_BYTES = 16 * 1024 * 1024
"""A grid file larger than this is refused unread (a 300 × 300 grid is about 30 kB)."""


class GridError(HafError):
    """A grid file that cannot be used: one line naming the file and what is wrong."""


class ModelEntry(BaseModel):
    """One model of the grid: a GGUF (None: the embedded one), its chat format, and the
    servers that generate for it (none: llama.cpp in this process)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    label: str
    path: str | None = None
    chat_format: str | None = None
    servers: tuple[str, ...] = ()


class DatasetEntry(BaseModel):
    """One dataset of the grid: ``name`` as ``haf run --dataset`` takes it, ``file`` as
    ``--file`` (a path relative to the grid file), and a file's columns and label rule as
    ``haf run``'s ``--text-column``, ``--label-column``, ``--label-threshold`` and
    ``--label-map`` state them."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    label: str
    name: str = "sample"
    file: str | None = None
    text_column: str | None = None
    label_column: str | None = None
    label_threshold: float | None = None
    label_map: tuple[str, ...] = ()

    @field_validator("label_threshold")
    @classmethod
    def _finite(cls, value: float | None) -> float | None:
        try:
            return finite_threshold(value, "label_threshold")
        except LabelError as exc:
            raise ValueError(str(exc)) from None

    def columns(self) -> dict[str, Any]:
        """The columns and label rule the entry states (none: guessed from the file)."""
        stated = {k: getattr(self, k) for k in COLUMN_KEYS}
        return {k: v for k, v in stated.items() if v not in (None, ())}


COLUMN_KEYS = ("text_column", "label_column", "label_threshold", "label_map")
"""A dataset entry's keys for a file's columns and label rule (``haf run``'s options)."""


class Grid(BaseModel):
    """A parsed grid file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: Path
    name: str
    database: Path | None = None
    models: tuple[ModelEntry, ...]
    datasets: tuple[DatasetEntry, ...]
    suites: tuple[str, ...] = ()
    """Empty: ``haf run``'s default suites."""
    limit: StrictInt | None = Field(None, ge=1)
    """(Strict: ``limit = true`` is not 1.)"""
    seed: StrictInt | None = Field(None, ge=0)
    settings: dict[str, Any] = Field(default_factory=dict)
    """``haf run`` options by flag name (``max-new-tokens = 32``), read by its parser."""
    servers: tuple[str, ...] = ()
    """Servers for every model that names none of its own."""
    cells_at_once: StrictInt | None = Field(None, ge=1)
    """Cells of different models run side by side (None: ``haf campaign run``'s default)."""
    similarity: tuple[SimilarityEntry, ...] = ()
    """The cells' g first, then the g's each finished cell is re-scored with (none: the
    ``[settings]``' or the default g only)."""

    def cells(self) -> list[tuple[ModelEntry, DatasetEntry]]:
        """Every (model, dataset) pair, model by model, in the file's order."""
        return [(model, dataset) for model in self.models for dataset in self.datasets]


TOP_KEYS = {
    "name", "database", "models", "datasets", "suites", "limit", "seed", "settings", "similarity",
    "cells_at_once",
}  # fmt: skip


def load_grid(path: str | Path) -> Grid:
    """Read and check a grid file (:class:`GridError` on any problem)."""
    grid_path = Path(path).expanduser()
    try:
        raw = tomllib.loads(_grid_bytes(grid_path).decode("utf-8-sig"))  # (a BOM is no text)
    except UnicodeDecodeError as exc:
        raise GridError(f"{grid_path} is not UTF-8 text: {exc.reason}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise GridError(f"{grid_path}: not valid TOML: {exc}") from exc
    return parse_grid(raw, grid_path)


def _grid_bytes(grid_path: Path) -> bytes:
    """The grid file's bytes: a regular file only, opened without waiting (a FIFO or a device
    is refused, never read), at most :data:`MAX_GRID_BYTES`."""
    try:
        handle = os.open(grid_path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:  # (missing, no permission, a symlink loop)
        raise GridError(f"cannot read {grid_path}: {exc.strerror or exc}") from exc
    try:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode):
            raise GridError(f"cannot read {grid_path}: {_not_a_file(info.st_mode)}")
        if info.st_size > MAX_GRID_BYTES:
            raise GridError(
                f"{grid_path} holds {info.st_size:,} bytes: a grid file is at most "
                f"{MAX_GRID_BYTES:,}"
            )
        with os.fdopen(os.dup(handle), "rb") as file:
            return file.read(MAX_GRID_BYTES + 1)
    except OSError as exc:
        raise GridError(f"cannot read {grid_path}: {exc.strerror or exc}") from exc
    finally:
        os.close(handle)


def _not_a_file(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "it is a folder, not a file"
    if stat.S_ISFIFO(mode):
        return "it is a named pipe (FIFO), not a file"
    return "it is not a regular file (a device or a socket)"


def _resolved(path: Path, grid_path: Path, what: str, shown: object) -> Path:
    """``path``'s real path; a symlink loop (or a path the system cannot follow) is one line."""
    try:
        return path.resolve()
    except (RuntimeError, OSError) as exc:  # (RuntimeError: Python 3.11's symlink loop)
        reason = getattr(exc, "strerror", None) or "a symlink loop"
        raise GridError(f"{grid_path}: {what} {shown}: cannot follow {path}: {reason}") from exc


def _regular_file(
    file: Path, grid_path: Path, what: str, shown: object, *, folder_ok: bool = False
) -> None:
    """A file a grid names is a regular file (or, ``folder_ok``, a folder): never a FIFO or a
    device, which would block the reader or never end."""
    try:
        mode = file.stat().st_mode
    except OSError as exc:
        raise GridError(f"{grid_path}: {what} {shown} not found (looked at {file})") from exc
    if not (stat.S_ISREG(mode) or (folder_ok and stat.S_ISDIR(mode))):
        raise GridError(f"{grid_path}: {what} {shown}: {_not_a_file(mode)} ({file})")


def parse_grid(raw: dict[str, Any], grid_path: Path) -> Grid:
    """A grid from a TOML document read from ``grid_path`` (paths are relative to its folder)."""
    unknown = sorted(set(raw) - TOP_KEYS - {"servers"})
    if unknown:
        raise GridError(
            f"{grid_path}: unknown key {unknown[0]!r} (known: {', '.join(sorted(TOP_KEYS))}, "
            "[servers])"
        )
    real_path = _resolved(grid_path, grid_path, "the grid file", "itself")
    folder = real_path.parent
    models = _entries(raw, "models", grid_path, lambda e: _model(e, folder, grid_path))
    datasets = _entries(raw, "datasets", grid_path, lambda e: _dataset(e, folder, grid_path))
    suites = raw.get("suites", ())
    if isinstance(suites, str):
        suites = [s.strip() for s in suites.split(",") if s.strip()]
    database = raw.get("database")
    if not isinstance(suites, list | tuple) or not all(isinstance(x, str) for x in suites):
        raise GridError(f"{grid_path}: suites: a list of suite names (or one comma-separated text)")
    if database is not None and not isinstance(database, str):
        raise GridError(f"{grid_path}: database: a file path in quotes")
    try:
        return Grid(
            path=real_path,
            name=raw.get("name") or grid_path.stem,
            database=(folder / Path(database).expanduser()) if database else None,
            models=tuple(models),
            datasets=tuple(datasets),
            suites=tuple(suites),
            limit=raw.get("limit"),
            seed=raw.get("seed"),
            settings=raw.get("settings", {}),
            servers=_servers(raw.get("servers", {}), grid_path),
            cells_at_once=raw.get("cells_at_once"),
            similarity=parse_similarities(raw.get("similarity", []), grid_path, GridError),
        )
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        raise GridError(f"{grid_path}: {where}: {error['msg']}") from exc


def _entries(raw: dict[str, Any], key: str, grid_path: Path, make: Any) -> list[Any]:
    items = raw.get(key)
    if not isinstance(items, list) or not items:
        raise GridError(f"{grid_path}: give {key} = [...], at least one")
    entries = [make(item) for item in items]
    seen: set[str] = set()
    for entry in entries:
        if entry.label in seen:
            raise GridError(
                f"{grid_path}: two {key} are labelled {entry.label!r}: give each a label"
            )
        seen.add(entry.label)
    return entries


def _model(item: Any, folder: Path, grid_path: Path) -> ModelEntry:
    if isinstance(item, str):
        item = {"path": item}
    if not isinstance(item, dict):
        raise GridError(f"{grid_path}: a model is a path, {EMBEDDED!r} or a table, not {item!r}")
    item = dict(item)
    path = item.get("path") or EMBEDDED
    if path == EMBEDDED:
        item["path"] = None
    else:
        file = _resolved(folder / Path(str(path)).expanduser(), grid_path, "model file", path)
        _regular_file(file, grid_path, "model file", path)
        item["path"] = str(file)
    item.setdefault("label", EMBEDDED if path == EMBEDDED else Path(str(path)).stem)
    if isinstance(item.get("servers"), str):
        item["servers"] = [item["servers"]]
    try:
        return ModelEntry.model_validate(item)
    except ValidationError as exc:
        raise GridError(f"{grid_path}: model {item['label']!r}: {_first(exc)}") from exc


def _dataset(item: Any, folder: Path, grid_path: Path) -> DatasetEntry:
    if isinstance(item, str):
        item = {"file": item} if item.lower().endswith(FILE_SUFFIXES) else {"name": item}
    if not isinstance(item, dict):
        raise GridError(f"{grid_path}: a dataset is a name, a file or a table, not {item!r}")
    item = dict(item)
    if item.get("file"):
        file = _resolved(
            folder / Path(str(item["file"])).expanduser(), grid_path, "dataset file", item["file"]
        )
        _regular_file(file, grid_path, "dataset file", item["file"], folder_ok=True)
        item.setdefault("label", item.get("name") or Path(str(item["file"])).stem)
        item["file"] = str(file)
        item.setdefault("name", "file")
    item.setdefault("label", item.get("name", "sample"))
    if isinstance(item.get("label_map"), str):
        item["label_map"] = [item["label_map"]]
    try:
        entry = DatasetEntry.model_validate(item)
    except ValidationError as exc:
        raise GridError(f"{grid_path}: dataset {item['label']!r}: {_first(exc)}") from exc
    if entry.columns() and not entry.file:
        raise GridError(
            f"{grid_path}: dataset {entry.label!r}: {', '.join(entry.columns())} go with a "
            'file (file = "PATH")'
        )
    return entry


def _servers(table: Any, grid_path: Path) -> tuple[str, ...]:
    if isinstance(table, list):
        table = {"urls": table}
    if not isinstance(table, dict) or set(table) - {"urls"}:
        raise GridError(f'{grid_path}: [servers] holds urls = ["http://host:8080#4", ...] only')
    urls = table.get("urls", [])
    if not isinstance(urls, list) or not all(isinstance(u, str) for u in urls):
        raise GridError(f"{grid_path}: [servers] urls is a list of URL[#N] strings")
    return tuple(urls)


def _first(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    return f"{where}: {error['msg']}" if where else str(error["msg"])
