"""Files the tool writes itself (an export, ``haf export``): never over the open database, over
an existing file only when asked to, and whole or not at all.

- :func:`check_target`: the path to write (a symlink there is replaced, never followed);
  refuses a path that is the database, its write-ahead log or its holder
  note, however it is spelled (relative, ``..``, a symlink, a hard link: real paths and
  ``os.path.samefile`` are compared), a folder, and an existing file unless ``overwrite``
  (:class:`TargetExistsError`, so a face can ask first).
- :func:`atomic_target`: the path to write instead, a temporary file in the same folder, moved
  into place (``fsync``, ``os.replace``) only when the block succeeds; removed when it fails.
- :func:`write_text_atomically`: a text file (the SQL editor's buffers and ``.sql`` files) so.
- :func:`export_result`: a user's reading SQL written to a file through both, streamed (the
  result is never held in memory whole).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import duckdb

from haf_tui.store.connection import (
    StoreError,
    check_reading_sql,
    sandboxed_cursor,
    user_sql_error,
)
from haf_tui.store.holder import HOLDER_SUFFIX
from haf_tui.vocabulary import first_line

BATCH_ROWS = 100_000
"""Rows per Arrow batch of an export: what is in memory at once."""

DATABASE_SUFFIXES = ("", ".wal", HOLDER_SUFFIX)
"""The files of a database ``x.duckdb``: itself, ``x.duckdb.wal``, ``x.duckdb.holder.json``."""


class TargetExistsError(StoreError):
    """The file to write exists: it is replaced only when the user says so."""

    def __init__(self, message: str, *, path: Path):
        super().__init__(message)
        self.path = path


def database_files(databases: Iterable[Path]) -> list[Path]:
    """Every file of these databases (each with its write-ahead log and holder note)."""
    return [
        Path(os.path.realpath(Path(db).expanduser().with_name(Path(db).name + suffix)))
        for db in databases
        for suffix in DATABASE_SUFFIXES
    ]


def _same_file(target: Path, protected: Path) -> bool:
    if os.path.realpath(target) == str(protected):
        return True
    with contextlib.suppress(OSError):  # (either missing: only the real paths tell)
        return os.path.samefile(target, protected)
    return False


def check_target(target: Path, databases: Iterable[Path], *, overwrite: bool = False) -> Path:
    """The path to write ``target`` at (its folder's real path, its own name: a symlink there
    is replaced by the file, its target never written); StoreError (one line) when it is one
    of the ``databases``' files or a folder, :class:`TargetExistsError` when it exists (a
    link, even a dangling one) and ``overwrite`` is not given."""
    spelled = Path(target).expanduser()
    path = Path(os.path.realpath(spelled.parent)) / spelled.name
    for protected in database_files(databases):
        if _same_file(Path(target).expanduser(), protected):
            raise StoreError(
                f"refused: {target} is the open database's file ({protected.name}); "
                "write the export to another path"
            )
    if path.is_dir():
        raise StoreError(f"{target} is a folder: give a file name")
    if os.path.lexists(path) and not overwrite:
        raise TargetExistsError(f"{target} exists: not replaced without asking", path=path)
    return path


@contextlib.contextmanager
def atomic_target(target: Path) -> Iterator[Path]:
    """A temporary path next to ``target`` to write; when the block ends without an error it
    is flushed to disk and renamed to ``target`` (replacing it), else removed."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(handle)
    temporary = Path(name)
    try:
        temporary.unlink()  # (the writer creates it; some refuse to write over a file)
        yield temporary
        with temporary.open("rb") as written:
            os.fsync(written.fileno())
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    with contextlib.suppress(OSError):  # (the rename itself on disk)
        folder = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)


def write_text_atomically(target: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``target`` through :func:`atomic_target`: whole or not at all."""
    with atomic_target(target) as temporary:
        temporary.write_text(text, encoding="utf-8")


def export_result(
    connection: duckdb.DuckDBPyConnection,
    sql: str,
    params: Any,
    target: Path,
    fmt: str,
    *,
    databases: Iterable[Path],
    overwrite: bool = False,
) -> int:
    """Run reading ``sql`` on a sandboxed cursor of a (locked-down) connection and write its
    result to ``target`` as ``parquet`` or ``csv``, checked first (:func:`check_target`: not
    one of the ``databases``' files; an existing file only with ``overwrite``) and written
    atomically. The tool writes the file through an in-memory DuckDB that streams the result
    in Arrow batches; returns the number of rows."""
    path = check_target(target, databases, overwrite=overwrite)
    check_reading_sql(sql)
    options = "(FORMAT parquet)" if fmt == "parquet" else "(FORMAT csv, HEADER true)"
    # (Synchronous writes: DuckDB 2.0's asynchronous writer deadlocks, now and then, aborting
    # a write that failed, a full disk or a file size limit: the export hung for good.)
    writer = duckdb.connect(config={"async_threads": 0})
    try:
        with sandboxed_cursor(connection) as cursor, atomic_target(path) as temporary:
            try:
                result = cursor.sql(sql, params=params or None)
                if result is None:
                    raise StoreError("nothing to export: the SQL returns no result")
                writer.register("result", result.to_arrow_reader(BATCH_ROWS))
            except duckdb.Error as exc:
                raise user_sql_error(exc) from exc
            quoted = str(temporary).replace("'", "''")
            try:
                written = writer.execute(f"COPY result TO '{quoted}' {options}").fetchone()
            except duckdb.Error as exc:
                raise _export_error(exc, target) from exc
    finally:
        with contextlib.suppress(duckdb.Error):
            writer.close()
    return int(written[0]) if written else 0


_STREAM_FAILED = "reading the stream registered as 'result' failed: "


def _export_error(exc: duckdb.Error, target: Path) -> StoreError:
    """One line for a failed COPY: the user's query failed while streaming (interrupted, out
    of memory, an error in the SQL), or the file could not be written."""
    text = first_line(exc)
    if _STREAM_FAILED not in text:
        return StoreError(f"export to {target} failed: {text}")
    cause = text.split(_STREAM_FAILED, 1)[1].removeprefix("IOError: ")
    if cause.startswith("INTERRUPT"):
        return user_sql_error(duckdb.InterruptException(cause))
    if cause.startswith("Out of Memory"):
        return user_sql_error(duckdb.OutOfMemoryException(cause))
    return StoreError(f"query failed: {cause}")
