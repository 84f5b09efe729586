"""A dataset file read as a stream of records, in bounded memory (a 200 MB CSV took 4.5 GB to
import, and its preview read the whole file: issue 42 §6).

The encoding is decided as :func:`~haf_tui.datasets.readers.decode_bytes` decides it, from the
file's first :data:`HEAD_BYTES` (a byte-order mark, UTF-16 without one, a binary file) and,
between UTF-8 and an 8-bit encoding, from a chunked scan of the whole file (``whole``) or of its
start only (a preview); then the file is decoded and parsed as it is read (CSV, TSV, JSON
Lines). A JSON document is read whole (it is one value); Parquet through DuckDB in batches.
"""

from __future__ import annotations

import codecs
import csv
import io
import itertools
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from haf_tui.datasets.model import DatasetError
from haf_tui.datasets.readers import (
    _UNDECODABLE,
    _VALID_NON_ASCII,
    BROKEN_LINE,
    Record,
    Table,
    _columns_of,
    _csv_rows,
    _guess_delimiter,
    _jsonl_records,
    _looks_binary,
    _unique_columns,
    _utf16_without_bom,
    decode_bytes,
    file_format,
    parquet_records,
    parquet_shape,
    text_records,
)

HEAD_BYTES = 1 << 20
"""What the encoding is first decided from (and all a preview decides it from)."""
CHUNK = 1 << 20
_CP1252_UNDEFINED = re.compile(rb"[\x81\x8d\x8f\x90\x9d]")
_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


@dataclass(frozen=True)
class Decoding:
    """How a text file is decoded: the codec, its error handler, and the line a decoding
    error becomes."""

    codec: str
    errors: str
    refusal: str


@dataclass
class TableStream:
    """A file's columns and its records as they are read (numbered as in :class:`Table`);
    ``read``: the bytes read so far (for an estimate of the rows left), ``size`` the file's."""

    path: Path
    format: str
    encoding: str | None
    columns: list[str]
    rows: Iterator[tuple[int, Record]]
    size: int
    read: Callable[[], int]
    n_rows: int | None = None
    """Known before reading (Parquet's metadata; a JSON document)."""


def _scan(path: Path, head: bytes, whole: bool) -> tuple[bool, bool, bool]:
    """(undecodable bytes as UTF-8, valid UTF-8 beyond ASCII, cp1252 cannot read it) over the
    file in chunks (or ``head`` only), stopping at the first valid non-ASCII character."""
    decoder = codecs.getincrementaldecoder("utf-8")("surrogateescape")
    undecodable = not_cp1252 = False
    chunks = _chunks(path) if whole else iter([head])
    for chunk in chunks:
        text = decoder.decode(chunk)
        undecodable = undecodable or bool(_UNDECODABLE.search(text))
        not_cp1252 = not_cp1252 or bool(_CP1252_UNDEFINED.search(chunk))
        if _VALID_NON_ASCII.search(text):
            return undecodable, True, not_cp1252
    return undecodable, False, not_cp1252


def _chunks(path: Path) -> Iterator[bytes]:
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            yield chunk


def decoding(path: Path, encoding: str | None, *, whole: bool) -> Decoding:
    """How to decode a text dataset file (one :class:`DatasetError` line when it is binary
    or its encoding is unknown)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(HEAD_BYTES)
    except OSError as exc:
        raise DatasetError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if encoding:
        try:
            codecs.lookup(encoding)
        except LookupError as exc:
            raise DatasetError(f"unknown encoding {encoding!r}") from exc
        return Decoding(encoding, "strict", f"{path} is not {encoding} text")
    for bom, name in _BOMS:
        if head.startswith(bom):
            errors = "surrogateescape" if name == "utf-8-sig" else "strict"
            return Decoding(name, errors, f"{path} is not valid {name} text")
    utf16 = _utf16_without_bom(head[:4096])
    if utf16 is not None:
        return Decoding(utf16, "strict", f"{path} is a binary file, not text")
    if _looks_binary(head):
        raise DatasetError(f"{path} is a binary file, not text")
    undecodable, valid, not_cp1252 = _scan(path, head, whole)
    if not undecodable or valid:
        return Decoding("utf-8", "surrogateescape", f"{path} is not UTF-8 text")
    name = "latin-1" if not_cp1252 else "cp1252"
    return Decoding(name, "strict", f"{path} is not {name} text")


def _refusing(rows: Iterator[tuple[int, Record]], how: Decoding) -> Iterator[tuple[int, Record]]:
    """``rows``, a decoding error on the way one :class:`DatasetError` line."""
    try:
        yield from rows
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{how.refusal} ({exc.reason})") from exc


def _csv_stream(
    handle: Iterable[str], path: Path, delimiter: str
) -> tuple[list[str], Iterator[tuple[int, Record]]]:
    reader = csv.reader(handle, delimiter=delimiter)
    try:
        header = next(reader, None)
    except csv.Error as exc:
        raise DatasetError(f"{path}: not a readable CSV file ({exc})") from exc
    columns = _unique_columns(header or [])

    return columns, _csv_rows(reader, columns, path) if header is not None else iter(())


@contextmanager
def open_stream(
    path: Path, *, encoding: str | None = None, whole: bool = True
) -> Iterator[TableStream]:
    """The file's records as a stream (the file open while the ``with`` lasts); ``whole``:
    the encoding decided over the whole file (else from its start: a preview)."""
    fmt = file_format(path)
    size = path.stat().st_size
    if fmt == "parquet":
        columns, n_rows = parquet_shape(path)
        yield TableStream(path, fmt, None, columns, parquet_records(path), size, lambda: 0, n_rows)
        return
    if fmt == "json":  # (one document: read whole)
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise DatasetError(f"cannot read {path}: {exc.strerror or exc}") from exc
        text, used = decode_bytes(raw, path, encoding)
        rows = list(text_records(path, fmt, text))
        columns = _columns_of(fmt, text, rows)
        yield TableStream(path, fmt, used, columns, iter(rows), size, lambda: size, len(rows))
        return
    how = decoding(path, encoding, whole=whole)
    newline = "\n" if fmt == "jsonl" else ""
    try:
        binary = path.open("rb")
        handle = io.TextIOWrapper(binary, encoding=how.codec, errors=how.errors, newline=newline)
    except OSError as exc:
        raise DatasetError(f"cannot read {path}: {exc.strerror or exc}") from exc
    rows_read: Iterator[tuple[int, Record]]
    with handle:
        try:
            if fmt == "jsonl":
                lines = (line.removesuffix("\n") for line in handle)
                records = _refusing(_jsonl_records(lines, path), how)
                first = list(itertools.islice(records, 1000))
                keys: dict[str, None] = {}
                for _, record in first:
                    if BROKEN_LINE not in record:
                        keys.update(dict.fromkeys(record))
                columns, rows_read = list(keys), itertools.chain(first, records)
            else:
                first_line = handle.readline()
                delimiter = "\t" if fmt == "tsv" else _guess_delimiter(first_line)
                columns, rows_read = _csv_stream(
                    itertools.chain([first_line], handle), path, delimiter
                )
                rows_read = _refusing(rows_read, how)
        except UnicodeDecodeError as exc:
            raise DatasetError(f"{how.refusal} ({exc.reason})") from exc
        yield TableStream(path, fmt, how.codec, columns, rows_read, size, binary.tell)


def read_table(path: str | Path, *, encoding: str | None = None, limit: int | None = None) -> Table:
    """Every record of a dataset file, or the first ``limit`` (then only the start of the file
    is read: its row count estimated from the bytes they took, unless the file ended)."""
    file_path = Path(path).expanduser()
    if not file_path.is_file():
        raise DatasetError(f"dataset file not found: {file_path}")
    with open_stream(file_path, encoding=encoding, whole=limit is None) as stream:
        rows: list[tuple[int, Record]] = []
        exact = True
        for number, record in stream.rows:
            if limit is not None and len(rows) >= limit:
                exact = False
                break
            rows.append((number, record))
        n_rows = len(rows)
        if stream.n_rows is not None:
            n_rows, exact = stream.n_rows, True
        elif not exact:
            n_rows = max(n_rows + 1, round(n_rows * stream.size / max(stream.read(), 1)))
    return Table(file_path, stream.format, stream.encoding, stream.columns, rows, n_rows, exact)
