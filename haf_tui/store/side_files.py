"""The workbench's side files under ``$HAF_HOME`` (the SQL screen's buffers and history, the
pending annotations, the wizard's last answers), read safely: only a regular file is opened
(``O_NONBLOCK``: a FIFO put in its place never blocks), never more than a size cap, and one
that cannot be read (bad bytes, truncated JSON, a folder, a FIFO, a huge file) is **set
aside**: renamed to ``<name>.unreadable-<time>``, never overwritten unread, and the user told
once, in one line (the notice :func:`read_side_file` returns).

A reader hands its own check (``parse``: raise ``ValueError`` for text that is not what it
keeps); what passes is returned with the file's identity (:class:`FileStamp`), so a poller
reads again only a file that changed."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Generic, TypeVar

T = TypeVar("T")

SIDE_FILE_LIMIT = 4 << 20
"""The largest side file read (bytes): a bigger one is no file of ours to load whole."""

UNREADABLE = ".unreadable-"
"""What a set-aside file's name gets, before the time it was set aside."""


@dataclass(frozen=True)
class FileStamp:
    """What tells a file changed: its device, inode, size and modification time."""

    device: int
    inode: int
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, status: os.stat_result) -> FileStamp:
        """The stamp of ``os.stat``'s answer."""
        return cls(status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns)


@dataclass(frozen=True)
class SideRead(Generic[T]):
    """What reading a side file gave: ``value`` (None: no file, or it was set aside),
    ``notice`` (one line for the user when it was set aside or could not be), ``stamp`` (of
    the file read) and ``blocked``: the file is there, unread, and could not be set aside
    (never write over it)."""

    value: T | None
    notice: str | None = None
    stamp: FileStamp | None = None
    blocked: bool = False


def stamp_of(path: Path) -> FileStamp | None:
    """The file's stamp (None: there is none)."""
    try:
        return FileStamp.of(os.stat(path))
    except OSError:
        return None


def read_side_file(
    path: Path, parse: Callable[[str], T], *, what: str, limit: int = SIDE_FILE_LIMIT
) -> SideRead[T]:
    """Read ``path`` (UTF-8) and ``parse`` it; a file that is not a regular file, is over
    ``limit`` bytes, is not UTF-8 or that ``parse`` refuses (ValueError) is set aside
    (``what`` names it in the notice: "the SQL screen's buffers")."""
    try:
        status = os.stat(path)
    except FileNotFoundError:
        return SideRead(None)
    except OSError as exc:
        return set_aside(path, what, exc.strerror or str(exc))
    if not stat.S_ISREG(status.st_mode):
        return set_aside(path, what, "not a regular file")
    if status.st_size > limit:
        return set_aside(path, what, f"{status.st_size:,} bytes, more than {limit:,}")
    try:
        raw, stamp = _read_regular(path, limit)
    except FileNotFoundError:
        return SideRead(None)
    except (OSError, ValueError) as exc:
        return set_aside(path, what, getattr(exc, "strerror", None) or str(exc))
    try:
        value = parse(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        return set_aside(path, what, f"not UTF-8 text ({exc.reason} at byte {exc.start})")
    except ValueError as exc:  # (pydantic's ValidationError and json's errors are ValueErrors)
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return set_aside(path, what, reason)
    return SideRead(value, stamp=stamp)


def _read_regular(path: Path, limit: int) -> tuple[bytes, FileStamp]:
    """At most ``limit`` bytes of a regular file (ValueError for anything else or more)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    descriptor = os.open(path, flags)
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise ValueError("not a regular file")
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(descriptor, 1 << 16):
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise ValueError(f"more than {limit:,} bytes")
        return b"".join(chunks), FileStamp.of(status)
    finally:
        os.close(descriptor)


def aside_name(path: Path) -> Path:
    """Where ``path`` is set aside: ``<name>.unreadable-<time>`` beside it (a free name)."""
    stem = f"{path.name}{UNREADABLE}{datetime.now():%Y%m%d-%H%M%S}"
    candidate = path.with_name(stem)
    number = 1
    while candidate.exists() or candidate.is_symlink():
        number += 1
        candidate = path.with_name(f"{stem}-{number}")
    return candidate


def set_aside(path: Path, what: str, reason: str) -> SideRead[Any]:
    """Rename ``path`` out of the way and say so in one line (or say it could not be)."""
    target = aside_name(path)
    try:
        os.rename(path, target)
    except FileNotFoundError:
        return SideRead(None)
    except OSError as exc:
        return SideRead(
            None,
            notice=f"{what} ({path}) cannot be read ({reason}) nor set aside "
            f"({exc.strerror or exc}): left as it is, not written over",
            blocked=True,
        )
    return SideRead(
        None, notice=f"{what} ({path}) could not be read ({reason}): set aside as {target.name}"
    )


def read_tail(path: Path, size: int) -> bytes:
    """The last ``size`` bytes of a regular file, from a line's start (b"" when there is
    none); ValueError for a file that is not a regular one."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        descriptor = os.open(path, flags)
    except FileNotFoundError:
        return b""
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise ValueError("not a regular file")
        start = max(0, status.st_size - size)
        os.lseek(descriptor, start, os.SEEK_SET)
        chunks: list[bytes] = []
        left = status.st_size - start
        while left > 0 and (chunk := os.read(descriptor, min(left, 1 << 16))):
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        with contextlib.suppress(OSError):
            os.close(descriptor)
    data = b"".join(chunks)
    if start > 0:  # (the first line is cut: from the next one)
        newline = data.find(b"\n")
        data = data[newline + 1 :] if newline >= 0 else b""
    return data


__all__ = [
    "SIDE_FILE_LIMIT",
    "FileStamp",
    "SideRead",
    "aside_name",
    "read_side_file",
    "read_tail",
    "set_aside",
    "stamp_of",
]
