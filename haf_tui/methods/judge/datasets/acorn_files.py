"""ACORN's file (:mod:`.acorn` makes its rows instances): found (a file, or a folder holding
``ACORN.jsonl``), recognised by its first row, and read as numbered rows (a JSON Lines line
that is not an object stays a row, to be skipped)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Final

from haf_tui.datasets.model import DatasetError
from haf_tui.datasets.readers import BROKEN_LINE, decode_bytes
from haf_tui.datasets.streams import read_table

ACORN_FILE: Final = "ACORN.jsonl"
ACORN_HOME: Final = "GitHub a-brassard/ACORN or Hugging Face anab/ACORN"
_SUFFIXES: Final = (".jsonl", ".ndjson", ".json", ".parquet")


def jsonl_rows(text: str) -> Iterator[tuple[int, Any]]:
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as exc:
            yield number, {BROKEN_LINE: f"{exc.msg} at column {exc.colno}", "text": line}


def read_rows(path: Path, encoding: str | None) -> tuple[str, str | None, list[tuple[int, Any]]]:
    """The file's format, encoding and numbered rows (a JSON Lines line that is not an
    object stays a row, to be skipped; other formats through :func:`read_table`)."""
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise DatasetError(f"cannot read {path}: {exc.strerror or exc}") from exc
        text, used = decode_bytes(raw, path, encoding)
        return "jsonl", used, list(jsonl_rows(text))
    table = read_table(path, encoding=encoding)
    return table.format, table.encoding, list(table.rows)


def is_acorn_file(path: str | Path) -> bool:
    """Whether a file looks like ACORN: a JSON Lines/JSON/Parquet file whose first object has
    ``question``, ``choices``, ``explanation`` and worker or voted ratings."""
    file_path = Path(path).expanduser()
    if file_path.suffix.lower() not in _SUFFIXES or not file_path.is_file():
        return False
    try:
        if file_path.suffix.lower() in (".jsonl", ".ndjson"):
            with file_path.open(encoding="utf-8", errors="replace") as handle:
                first = next((json.loads(line) for line in handle if line.strip()), None)
        else:
            rows = read_table(file_path, limit=1).rows
            first = rows[0][1] if rows else None
    except (DatasetError, json.JSONDecodeError, OSError, UnicodeError):
        return False
    if not isinstance(first, dict) or not {"question", "choices", "explanation"} <= set(first):
        return False
    return "worker_ratings" in first or "voted_ratings" in first or "supports" in first


def acorn_file(files: Sequence[str | Path]) -> Path:
    """The one ACORN file ``files`` names: a file, or a folder holding ``ACORN.jsonl``
    (DatasetError otherwise)."""
    if len(files) != 1:
        raise DatasetError(f"ACORN is one file ({ACORN_FILE}): give one --file, not {len(files)}")
    path = Path(files[0]).expanduser()
    if path.is_dir():
        found = sorted(p for p in path.rglob("*") if p.name.lower() == ACORN_FILE.lower())
        if not found:
            raise DatasetError(f"no {ACORN_FILE} in folder {path}")
        return found[0]
    if not path.is_file():
        raise DatasetError(f"ACORN file not found: {path} (download {ACORN_FILE}: {ACORN_HOME})")
    return path
