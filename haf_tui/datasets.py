"""Datasets a run evaluates: the built-in sample, and simple local files.

A dataset is stored once in the DuckDB file (``datasets`` + ``instances``); runs refer to its
instances by id. Rows that cannot be evaluated are skipped with their reason, never silently.
"""

from __future__ import annotations

import csv
import hashlib
import json
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path

from haf_tui.store.records import InstanceRecord

BUILTIN_SAMPLE_ID = "builtin-sample"
TEXT_COLUMNS = ("text", "input_text", "comment_text")
ID_COLUMNS = ("id", "index", "instance_id")
LABEL_COLUMNS = ("label", "given_label")


class DatasetError(ValueError):
    """A dataset cannot be read (one clear line)."""


@dataclass
class Dataset:
    """Instances ready to store, and the rows skipped with why."""

    dataset_id: str
    name: str
    source: str
    instances: list[InstanceRecord]
    skipped: list[tuple[int, str]] = field(default_factory=list)


def builtin_sample() -> Dataset:
    """Short texts written for this project: clearly toxic, clearly not, and ambiguous."""
    raw = files("haf_tui.data").joinpath("sample.jsonl").read_text(encoding="utf-8")
    rows = [json.loads(line) for line in raw.splitlines() if line.strip()]
    instances = [
        InstanceRecord(instance_id=r["id"], position=i, text=r["text"], label=r["label"])
        for i, r in enumerate(rows)
    ]
    return Dataset(BUILTIN_SAMPLE_ID, "built-in sample", "haf_tui/data/sample.jsonl", instances)


def _pick(columns: list[str], candidates: tuple[str, ...]) -> str | None:
    lowered = {c.lower(): c for c in columns}
    return next((lowered[c] for c in candidates if c in lowered), None)


def load_file(path: str | Path, *, max_chars: int = 20_000) -> Dataset:
    """A CSV/TSV/JSONL file with a text column (``text``/``input_text``); ``id``/``index`` and
    ``label``/``given_label`` are optional. Empty, over-long and duplicate rows are skipped."""
    file_path = Path(path).expanduser()
    if not file_path.is_file():
        raise DatasetError(f"dataset file not found: {file_path}")
    try:
        raw = file_path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"dataset file {file_path} is not UTF-8 text ({exc.reason})") from exc
    rows = _read_rows(file_path, raw)
    if not rows:
        raise DatasetError(f"dataset file {file_path} has no rows")
    columns = list(rows[0])
    text_col = _pick(columns, TEXT_COLUMNS)
    if text_col is None:
        raise DatasetError(f"dataset file {file_path} has no text column (one of {TEXT_COLUMNS})")
    id_col, label_col = _pick(columns, ID_COLUMNS), _pick(columns, LABEL_COLUMNS)
    instances: list[InstanceRecord] = []
    skipped: list[tuple[int, str]] = []
    seen_ids: set[str] = set()
    seen_texts: set[str] = set()
    for number, row in enumerate(rows):
        text = str(row.get(text_col) or "")
        instance_id = (
            str(row[id_col]) if id_col and row.get(id_col) not in (None, "") else str(number)
        )
        reason = (
            "empty text"
            if not text.strip()
            else f"text longer than {max_chars} characters"
            if len(text) > max_chars
            else "duplicate id"
            if instance_id in seen_ids
            else "duplicate text"
            if text in seen_texts
            else None
        )
        if reason:
            skipped.append((number, reason))
            continue
        seen_ids.add(instance_id)
        seen_texts.add(text)
        label = row.get(label_col) if label_col else None
        instances.append(
            InstanceRecord(
                instance_id=instance_id,
                position=len(instances),
                text=text,
                label=None if label is None else str(label),
            )
        )
    digest = hashlib.sha256(raw.encode("utf-8")).hexdigest()[:12]
    return Dataset(f"{file_path.stem}-{digest}", file_path.stem, str(file_path), instances, skipped)


def _read_rows(file_path: Path, raw: str) -> list[dict[str, object]]:
    suffix = file_path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        rows = []
        for number, line in enumerate(raw.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DatasetError(f"{file_path}:{number}: not valid JSON ({exc.msg})") from exc
            if not isinstance(value, dict):
                raise DatasetError(f"{file_path}:{number}: each line must be a JSON object")
            rows.append(value)
        return rows
    if suffix in (".csv", ".tsv"):
        delimiter = "\t" if suffix == ".tsv" else ","
        try:
            return list(csv.DictReader(raw.splitlines(keepends=True), delimiter=delimiter))
        except csv.Error as exc:
            raise DatasetError(f"{file_path}: not a readable CSV file ({exc})") from exc
    raise DatasetError(f"unsupported dataset file type {suffix!r}: use .csv, .tsv or .jsonl")
