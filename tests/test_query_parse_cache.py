"""Named queries are parsed once per text (issue 44 §2: every report read the whole library
and parsed each file again, half the metrics screen's opening): a file read again with the
same text is not parsed again, and an edited file is (even at the same size, the same
instant)."""

from __future__ import annotations

from pathlib import Path

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
