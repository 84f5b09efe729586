"""``haf`` options: ``--db`` after the sub-command, one-line help for every ``run`` option,
and ``haf query`` layouts for wide results on narrow terminals (no model needed)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from haf_tui import reports
from haf_tui.cli import build_parser, main
from haf_tui.store import open_store


def _run_parser() -> argparse.ArgumentParser:
    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return commands.choices["run"]


def test_db_is_accepted_after_the_sub_command(tmp_path: Path) -> None:
    parser = build_parser()
    after = parser.parse_args(["run", "--db", "x.duckdb", "--limit", "2"])
    before = parser.parse_args(["--db", "x.duckdb", "run"])
    nested = parser.parse_args(["datasets", "list", "--db", "y.duckdb", "--snapshot"])
    query = parser.parse_args(["query", "--db", "z.duckdb", "select 1"])
    assert (after.db, before.db, nested.db, query.db) == (
        "x.duckdb", "x.duckdb", "y.duckdb", "z.duckdb"
    )  # fmt: skip
    assert nested.snapshot and not query.snapshot
    # given both ways, the one after the sub-command wins
    assert parser.parse_args(["--db", "a", "runs", "--db", "b"]).db == "b"
    assert parser.parse_args(["runs"]).db is None
    # and it reaches the command
    db = tmp_path / "after.duckdb"
    with open_store(db):
        pass
    assert main(["runs", "--db", str(db)]) == 0


def test_every_run_option_has_a_one_line_help_with_its_default() -> None:
    parser = _run_parser()
    undocumented = [
        action.option_strings[0]
        for action in parser._actions
        if action.option_strings and not action.help
    ]
    assert undocumented == []
    text = parser.format_help()
    for shown in ("(default: 0.6)", "(default: 0.8)", "default: 17", "default: 4096",
                  "default: 1024", "(default: explicit)", "(default: reference)"):  # fmt: skip
        assert shown in " ".join(text.split()), shown


def test_query_formats_and_wide_results(capsys: pytest.CaptureFixture[str]) -> None:
    columns = ["instance_id", "output_text", "decision", "confidence"]
    rows = [(f"s{n:02d}", "a long answer " * 12, "YES", 0.5 + n / 100) for n in range(9)]
    text = reports.to_expanded(columns, rows, width=60)
    lines = text.splitlines()
    assert lines[0].startswith("-[ RECORD 1 ]") and len(lines) == 9 * 5
    assert all(len(line) <= 60 for line in lines)
    assert "instance_id │ s00" in text and "confidence  │ 0.5" in text
    assert "…" in text  # the long value is cut to the line, not wrapped into fragments


def test_haf_query_on_a_narrow_terminal_prints_records(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    db = tmp_path / "q.duckdb"
    with open_store(db):
        pass
    sql = "SELECT i AS n, repeat('wide text ', 10) AS a, repeat('more ', 9) AS b FROM range(8) t(i)"
    assert main(["query", sql, "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "8 rows, one record each" in out and out.count("-[ RECORD") == 8
    assert main(["query", sql, "--db", str(db), "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "n,a,b"
    assert main(["query", "SELECT 1 AS one", "--db", str(db)]) == 0
    assert "one" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "n_parallel"),
    [
        (["run"], 8),  # (the default suites ask for nothing of their own)
        (["run", "--suites", "rationales"], 32),  # (the rationales method's Method.n_parallel)
        (["run", "--suites", "haf,rationales"], 8),  # (HAF's long generations: the default)
        (["run", "--suites", "rationales", "--parallel", "4"], 4),  # (the user's wins)
    ],
)
def test_a_method_s_own_parallelism_is_the_run_s_unless_parallel_says(
    argv: list[str], n_parallel: int
) -> None:
    from haf_tui.cli.run_command import _config

    args = build_parser().parse_args(argv)
    assert _config(args).model.n_parallel == n_parallel
