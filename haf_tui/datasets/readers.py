"""Reading dataset files into records: CSV, TSV, JSONL, JSON and Parquet, with encoding
detection.

Text files are decoded in this order: a byte-order mark (UTF-8, UTF-16, UTF-32), UTF-16
without one (NUL bytes at every other position), else UTF-8 (a few NUL bytes stay, and only
their rows are skipped; NUL bytes in most lines, or many control bytes: a binary file);
a UTF-8 file with a few undecodable bytes keeps them as lone surrogates so that only the rows
holding them are skipped (``not UTF-8``); a file with no valid UTF-8 beyond ASCII at all is an
8-bit file, read as cp1252 (latin-1 where cp1252 leaves a byte undefined). The encoding found
is recorded with the dataset. Parquet is read through DuckDB (no pandas or pyarrow needed).
"""

from __future__ import annotations

import codecs
import csv
import datetime
import decimal
import io
import json
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import duckdb

from haf_tui.datasets.model import DatasetError
from haf_tui.datasets.validation import NOT_JSON, NOT_OBJECT

FORMATS: Final = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".parquet": "parquet",
}
"""File suffixes read, and the format each means."""

_UNDECODABLE = re.compile("[\udc80-\udcff]")
_VALID_NON_ASCII = re.compile("[\u0080-\ud7ff\ue000-\U0010ffff]")
_BATCH = 10_000

csv.field_size_limit(min(sys.maxsize, 2**31 - 1))  # over-long fields are skipped rows, not errors

Record = dict[str, Any]


BROKEN_LINE: Final = "\x00broken line"
"""The key of the record a JSON Lines line that does not parse, or is not an object, becomes
(skipped on loading); its value is the reason (:data:`NOT_JSON`, :data:`NOT_OBJECT`)."""


@dataclass
class Table:
    """A file's records, numbered from 1 (CSV/TSV/JSON/Parquet: data rows; JSONL: lines)."""

    path: Path
    format: str
    encoding: str | None
    columns: list[str]
    rows: list[tuple[int, Record]]
    n_rows: int
    n_rows_exact: bool = True
    """False: ``n_rows`` estimated from the rows read (a limited read stops early)."""


def file_format(path: Path) -> str:
    """The format of a dataset file, from its suffix (DatasetError when unsupported)."""
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        known = ", ".join(sorted(FORMATS))
        raise DatasetError(f"unsupported dataset file type {path.suffix!r} of {path}: use {known}")
    return fmt


def decode_bytes(raw: bytes, where: Path, encoding: str | None = None) -> tuple[str, str]:
    """The text of a file and the name of the encoding it was read with."""
    if encoding:
        try:
            return raw.decode(encoding), encoding
        except LookupError as exc:
            raise DatasetError(f"unknown encoding {encoding!r}") from exc
        except UnicodeDecodeError as exc:
            raise DatasetError(f"{where} is not {encoding} text ({exc.reason})") from exc
    for bom, name in (
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF32_LE, "utf-32"),
        (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if raw.startswith(bom):
            errors = "surrogateescape" if name == "utf-8-sig" else "strict"
            try:
                return raw.decode(name, errors), name
            except UnicodeDecodeError as exc:
                raise DatasetError(f"{where} is not valid {name} text ({exc.reason})") from exc
    head = raw[:4096]
    utf16 = _utf16_without_bom(head)
    if utf16 is not None:
        try:
            return raw.decode(utf16), utf16
        except UnicodeDecodeError as exc:
            raise DatasetError(f"{where} is a binary file, not text") from exc
    if _looks_binary(raw):
        raise DatasetError(f"{where} is a binary file, not text")
    text = raw.decode("utf-8", "surrogateescape")  # (a few NUL bytes: those rows are skipped)
    if not _UNDECODABLE.search(text) or _VALID_NON_ASCII.search(text):
        return text, "utf-8"
    try:
        return raw.decode("cp1252"), "cp1252"
    except UnicodeDecodeError:
        return raw.decode("latin-1"), "latin-1"


def _utf16_without_bom(head: bytes) -> str | None:
    """``utf-16-le``/``-be`` when the NUL bytes of a file's start sit at one byte position of
    two, as in UTF-16 (text mostly below U+0100: at least one in ten of those bytes is NUL);
    None for text with a few stray NUL bytes (those rows are skipped, the rest is read)."""
    even, odd = head[0::2].count(0), head[1::2].count(0)
    most, least = max(even, odd), min(even, odd)
    if not most or most * 10 < len(head) // 2 or most < 4 * least:
        return None
    return "utf-16-le" if odd > even else "utf-16-be"


_CONTROL_BYTES: Final = bytes([*range(1, 9), *range(14, 27), *range(28, 32)])
"""Control bytes that text files do not hold (not tab, newlines, form feed or escape)."""


def _looks_binary(raw: bytes) -> bool:
    """Whether bytes that are not UTF-16 are binary, not text: NUL bytes in more than half of
    the lines, or control bytes making more than one in a hundred."""
    if b"\x00" in raw:
        lines = [line for line in raw.split(b"\n") if line.strip()]
        if 2 * sum(b"\x00" in line for line in lines) > len(lines):
            return True
    controls = len(raw) - len(raw.translate(None, _CONTROL_BYTES))
    return 100 * controls > len(raw)


def _unique_columns(header: list[str]) -> list[str]:
    columns: list[str] = []
    for number, name in enumerate(header, start=1):
        base = name.strip() or f"column_{number}"
        candidate, k = base, 1
        while candidate in columns:
            k += 1
            candidate = f"{base}_{k}"
        columns.append(candidate)
    return columns


def _csv_records(text: str, where: Path, delimiter: str) -> Iterator[tuple[int, Record]]:
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        header = next(reader, None)
    except csv.Error as exc:
        raise DatasetError(f"{where}: not a readable CSV file ({exc})") from exc
    if header is not None:
        yield from _csv_rows(reader, _unique_columns(header), where)


def _csv_rows(
    reader: Iterator[list[str]], columns: list[str], where: Path
) -> Iterator[tuple[int, Record]]:
    """The rows ``reader`` gives after its header, numbered from 1, each keyed by ``columns``
    (a short row padded with None; a blank line is no row)."""
    try:
        for number, fields in enumerate(reader, start=1):
            if not fields:
                continue  # a blank line is not a row
            values: list[str | None] = [*fields, *[None] * (len(columns) - len(fields))]
            yield number, dict(zip(columns, values, strict=False))
    except csv.Error as exc:
        raise DatasetError(f"{where}: not a readable CSV file ({exc})") from exc


def _guess_delimiter(text: str) -> str:
    first = text.split("\n", 1)[0]
    counts = {d: first.count(d) for d in (",", ";", "\t", "|")}
    best = max(counts, key=lambda d: counts[d])
    return best if counts[best] > counts[","] else ","


def _jsonl_records(lines: Iterable[str], where: Path) -> Iterator[tuple[int, Record]]:
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):  # (not JSON; a number past Python's 4300 digits;
            # brackets nested too deep)
            # one broken line is a skipped row (with its reason), not a refused file
            yield number, {BROKEN_LINE: NOT_JSON, "text": line}
            continue
        if not isinstance(value, dict):  # valid JSON, but not a row: skipped as well
            yield number, {BROKEN_LINE: NOT_OBJECT, "text": line}
            continue
        yield number, value


def _json_records(text: str, where: Path) -> Iterator[tuple[int, Record]]:
    if text.lstrip().startswith("{") and "\n{" in text.strip():
        yield from _jsonl_records(text.split("\n"), where)  # JSON Lines named .json
        return
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{where}: not valid JSON ({exc.msg}, line {exc.lineno})") from exc
    except RecursionError as exc:
        raise DatasetError(f"{where}: not valid JSON (brackets nested too deep)") from exc
    except ValueError as exc:  # (a number past Python's 4300 digits)
        raise DatasetError(f"{where}: not readable JSON ({exc})") from exc
    if isinstance(value, dict) and all(isinstance(v, dict) for v in value.values()):
        value = [{"_key": k, **v} for k, v in value.items()]
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise DatasetError(f"{where}: a JSON file must hold a list of objects")
    yield from enumerate(value, start=1)


def plain(value: Any) -> Any:
    """A value as JSON can hold it (Parquet's decimals, dates and bytes converted)."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogateescape")
    return value


def parquet_records(path: Path, limit: int | None = None) -> Iterator[tuple[int, Record]]:
    """A Parquet file's rows in file order, streamed."""
    con = duckdb.connect()
    try:
        con.execute("SET enable_progress_bar = false")
        sql = "SELECT * FROM read_parquet(?)" + (f" LIMIT {int(limit)}" if limit else "")
        cursor = con.execute(sql, [str(path)])
        columns = [d[0] for d in cursor.description or []]
        number = 0
        while batch := cursor.fetchmany(_BATCH):
            for row in batch:
                number += 1
                yield number, {c: plain(v) for c, v in zip(columns, row, strict=True)}
    except duckdb.Error as exc:
        raise DatasetError(f"cannot read Parquet file {path}: {str(exc).splitlines()[0]}") from exc
    finally:
        con.close()


def parquet_shape(path: Path) -> tuple[list[str], int]:
    """The columns and row count of a Parquet file, from its metadata."""
    con = duckdb.connect()
    try:
        con.execute("SET enable_progress_bar = false")
        cursor = con.execute("SELECT * FROM read_parquet(?) LIMIT 0", [str(path)])
        columns = [d[0] for d in cursor.description or []]
        row = con.execute("SELECT count(*) FROM read_parquet(?)", [str(path)]).fetchone()
        return columns, int(row[0]) if row else 0
    except duckdb.Error as exc:
        raise DatasetError(f"cannot read Parquet file {path}: {str(exc).splitlines()[0]}") from exc
    finally:
        con.close()


def text_records(path: Path, fmt: str, text: str) -> Iterator[tuple[int, Record]]:
    """The records of a decoded text file of format ``fmt``."""
    if fmt == "jsonl":
        return _jsonl_records(text.split("\n"), path)
    if fmt == "json":
        return _json_records(text, path)
    delimiter = "\t" if fmt == "tsv" else _guess_delimiter(text)
    return _csv_records(text, path, delimiter)


def _columns_of(fmt: str, text: str, rows: list[tuple[int, Record]]) -> list[str]:
    if fmt in ("csv", "tsv"):
        delimiter = "\t" if fmt == "tsv" else _guess_delimiter(text)
        header = next(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter), [])
        return _unique_columns(header)
    columns: dict[str, None] = {}
    for _, record in rows[:1000]:
        if BROKEN_LINE not in record:
            columns.update(dict.fromkeys(record))
    return list(columns)
