"""Finding one named query (its own file read, the others not) and finding the ``$name``
parameters its SQL uses outside comments and string literals."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from haf_tui import reports
from haf_tui.reports import QueryError, queries


def _write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.sql"
    path.write_text(text, encoding="utf-8")
    return path


def _query(name: str, title: str = "") -> str:
    return f"-- name: {name}\n-- title: {title or name}\nSELECT 1 AS one\n"


def _scanned(sql: str) -> str:
    """What the comments and literals leave, a character at a time (the reference)."""
    out: list[str] = []
    i, n = 0, len(sql)
    while i < n:
        if sql.startswith("--", i):
            end = sql.find("\n", i)
            i = n if end < 0 else end
        elif sql.startswith("/*", i):
            end = sql.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif sql[i] in "'\"":
            quote, i = sql[i], i + 1
            while i < n and not (sql[i] == quote and not sql.startswith(quote * 2, i)):
                i += 2 if sql[i] == quote else 1
            i += 1
            out.append(" ")
        else:
            out.append(sql[i])
            i += 1
    return "".join(out)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="-/*'\"$ab\n", max_size=40))
def test_comments_and_literals_go_as_a_scan_drops_them(sql: str) -> None:
    assert queries._strip_comments(sql) == _scanned(sql)


@pytest.mark.parametrize(
    ("sql", "left"),
    [
        ("SELECT $a -- $b\n, $c", "SELECT $a \n, $c"),
        ("SELECT '$a''$b' || $c", "SELECT   || $c"),
        ('SELECT "$a" /* $b */ $c', "SELECT    $c"),
        ("SELECT $a /* $b", "SELECT $a "),
        ("SELECT 'it''s $a", "SELECT  "),
        ("/*/ $a */ $b", " $b"),
    ],
)
def test_what_is_left_of_the_sql(sql: str, left: str) -> None:
    assert queries._strip_comments(sql) == left


def test_a_query_is_found_without_reading_the_others(tmp_path: Path) -> None:
    _write(tmp_path, "good", _query("good"))
    _write(tmp_path, "broken", "SELECT 1\n")  # (no header: the library does not load)
    with pytest.raises(QueryError, match="no '-- name:' header line"):
        reports.load_queries(tmp_path)
    assert reports.get_query("good", tmp_path).name == "good"
    with pytest.raises(QueryError, match="no '-- name:' header line"):
        reports.get_query("missing", tmp_path)  # (no such file: the library is read to list)


def test_the_folder_that_wins_a_name_is_the_same_one_way_or_the_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    main, first, second = tmp_path / "main", tmp_path / "first", tmp_path / "second"
    for folder in (main, first, second):
        _write(folder, "everywhere", _query("everywhere", f"from {folder.name}"))
    for folder in (first, second):
        _write(folder, "methods", _query("methods", f"from {folder.name}"))
    _write(second, "second_only", _query("second_only", "from second"))
    monkeypatch.setenv(reports.QUERIES_ENV, str(main))
    monkeypatch.setattr(queries, "METHOD_QUERY_DIRS", [first, second])
    library = reports.load_queries()
    for name, title in [
        ("everywhere", "from main"),
        ("methods", "from first"),
        ("second_only", "from second"),
    ]:
        assert library[name].title == title
        assert reports.get_query(name).title == title
        assert reports.get_query(name).path == library[name].path


@pytest.mark.parametrize("name", ["../outside", "sub/inner", "sub\\inner", ""])
def test_a_name_that_is_no_file_of_the_folder_is_no_query(tmp_path: Path, name: str) -> None:
    folder = tmp_path / "queries"
    _write(folder, "known", _query("known"))
    _write(tmp_path, "outside", _query("outside"))
    _write(folder / "sub", "inner", _query("inner"))
    with pytest.raises(QueryError, match=r"no query named .* \(known: known\)"):
        reports.get_query(name, folder)
