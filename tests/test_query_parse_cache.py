"""Named queries are parsed once per text (issue 44 §2: every report read the whole library
and parsed each file again, half the metrics screen's opening): a file read again with the
same text is not parsed again, and an edited file is (even at the same size, the same
instant); a file settled when read is not read again until it changes."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from haf_tui.reports import queries
from haf_tui.reports.queries import load_queries

QUERY = "-- name: counted\n-- title: {title}\nSELECT 1\n"


def test_a_query_file_is_parsed_once_per_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed: list[str] = []
    real_parse = queries.parse_query

    def counting(text: str, path: Path) -> queries.NamedQuery:
        parsed.append(text)
        return real_parse(text, path)

    monkeypatch.setattr(queries, "parse_query", counting)
    path = tmp_path / "counted.sql"
    path.write_text(QUERY.format(title="first"), encoding="utf-8")
    assert load_queries(tmp_path)["counted"].title == "first"
    assert load_queries(tmp_path)["counted"].title == "first"
    assert len(parsed) == 1  # the same text: kept
    path.write_text(QUERY.format(title="other"), encoding="utf-8")  # (the same size)
    assert load_queries(tmp_path)["counted"].title == "other"
    assert len(parsed) == 2


def test_a_settled_query_file_is_not_read_again_until_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file that had not changed for a while when read is only looked at (its times, size
    and inode) while it stays so; any write, even one that puts its time and size back, makes
    it read again (issue 44 §2: the library's 31 files were read for every report)."""
    path = tmp_path / "counted.sql"
    path.write_text(QUERY.format(title="first"), encoding="utf-8")
    later = time.time() + 2 * queries.SETTLED_SECONDS  # (the file looks settled from then)
    monkeypatch.setattr(queries, "clock", lambda: later)
    read: list[Path] = []
    real_read = Path.read_text

    def counting(self: Path, *args: Any, **kwargs: Any) -> str:
        if self == path:
            read.append(self)
        return real_read(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", counting)
    assert load_queries(tmp_path)["counted"].title == "first"
    assert load_queries(tmp_path)["counted"].title == "first"
    assert len(read) == 1  # settled and unchanged: looked at, not read
    before = path.stat()
    path.write_text(QUERY.format(title="other"), encoding="utf-8")  # (the same size)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # (its time put back)
    assert load_queries(tmp_path)["counted"].title == "other"
    assert len(read) == 2


def test_a_query_file_changed_just_before_it_was_read_is_read_each_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "counted.sql"
    path.write_text(QUERY.format(title="first"), encoding="utf-8")
    read: list[Path] = []
    real_read = Path.read_text

    def counting(self: Path, *args: Any, **kwargs: Any) -> str:
        if self == path:
            read.append(self)
        return real_read(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", counting)
    changed = path.stat().st_ctime_ns / 1e9
    monkeypatch.setattr(queries, "clock", lambda: changed + queries.SETTLED_SECONDS / 2)
    load_queries(tmp_path)
    load_queries(tmp_path)
    assert len(read) == 2  # (not settled: a write in the same clock tick would look like none)


def test_a_file_given_an_old_time_just_now_has_not_settled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``cp -p`` or ``touch -d`` give a file an old time; its ctime says when that was."""
    path = tmp_path / "counted.sql"
    path.write_text(QUERY.format(title="first"), encoding="utf-8")
    hour_ago = time.time() - 3600
    os.utime(path, (hour_ago, hour_ago))
    read: list[Path] = []
    real_read = Path.read_text

    def counting(self: Path, *args: Any, **kwargs: Any) -> str:
        if self == path:
            read.append(self)
        return real_read(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", counting)
    changed = path.stat().st_ctime_ns / 1e9
    monkeypatch.setattr(queries, "clock", lambda: changed + queries.SETTLED_SECONDS / 2)
    load_queries(tmp_path)
    load_queries(tmp_path)
    assert len(read) == 2
