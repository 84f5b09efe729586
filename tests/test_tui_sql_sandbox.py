"""The SQL screen cannot write, whatever connection the app holds (issue 18, item 1).

Once the workbench has started a run it holds the database open for writing; the SQL screen
must still run user SQL only through the store's sandbox (reading statements, in a read-only
transaction, on the locked-down database), as ``haf query`` does. Each test checks that every
table is unchanged afterwards (row count and a hash of all rows, read through a separate
connection) and that nothing was written outside the database."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Static, TextArea

from benchmarks.benchdata import build_bench_db
from haf_tui.store import Store, StoreError, open_snapshot, open_store
from haf_tui.tui import create_app
from haf_tui.tui.app import HafApp
from haf_tui.tui.screens.home import HomeScreen
from haf_tui.tui.screens.monitor import MonitorScreen
from haf_tui.tui.screens.sql import SqlScreen
from haf_tui.tui.screens.wizard import WizardScreen
from haf_tui.tui.widgets.result_table import ResultTable
from tests.support import settle

Checksums = dict[str, Any]


def checksums(con: duckdb.DuckDBPyConnection) -> Checksums:
    """Every table's row count and a hash of all its rows, and the schema's DDL."""
    tables = con.execute(
        "SELECT schema_name, table_name FROM duckdb_tables() "
        "WHERE database_name = current_database() ORDER BY ALL"
    ).fetchall()
    sums: Checksums = {}
    for schema, table in tables:
        row = con.execute(
            f'SELECT count(*), coalesce(sum(hash(t)), 0) FROM "{schema}"."{table}" AS t'
        ).fetchone()
        assert row is not None
        sums[f"{schema}.{table}"] = (int(row[0]), int(row[1]))
    sums["ddl"] = con.execute(
        "SELECT sql FROM duckdb_tables() WHERE database_name = current_database() "
        "UNION ALL SELECT sql FROM duckdb_views() WHERE NOT internal "
        "UNION ALL SELECT sql FROM duckdb_indexes() "
        "UNION ALL SELECT sequence_name FROM duckdb_sequences() "
        "UNION ALL SELECT function_name FROM duckdb_functions() WHERE NOT internal "
        "ORDER BY ALL"
    ).fetchall()
    return sums


def store_checksums(store: Store) -> Checksums:
    return checksums(store.connection)


def file_checksums(db: Path) -> Checksums:
    """Checksums through a connection of its own (the app has closed the file)."""
    with duckdb.connect(str(db), read_only=True) as con:
        return checksums(con)


def refused_statements(folder: Path) -> list[str]:
    """Statements that write the database, another file, or the connection's state; the
    last ones hide a write inside statements that DuckDB's parser calls reading."""
    return [
        "DELETE FROM runs",
        "DROP TABLE generations",
        "CREATE TABLE evil (a INTEGER)",
        f"COPY runs TO '{folder / 'leak.csv'}'",
        f"COPY (SELECT * FROM tokens) TO '{folder / 'leak.parquet'}' (FORMAT parquet)",
        f"ATTACH '{folder / 'other.duckdb'}' AS other",
        "ATTACH ':memory:' AS scratch",
        "INSERT INTO runs (run_id, status) VALUES ('evil', 'finished')",
        "UPDATE runs SET status = 'failed'",
        "CHECKPOINT",
        "SELECT 1; DELETE FROM tokens",
        "WITH gone AS (DELETE FROM runs RETURNING *) SELECT count(*) FROM gone",
        "EXPLAIN ANALYZE DELETE FROM runs",
        "EXPLAIN ANALYZE COMMIT; WITH gone AS (DELETE FROM runs RETURNING *) SELECT * FROM gone",
        f"SELECT * FROM read_csv('{folder / 'x.csv'}')",
    ]


def leaked(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


async def wait_until(pilot: Pilot[Any], condition: Callable[[], bool], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        await pilot.pause(0.05)


def error_line(screen: SqlScreen) -> str:
    error = screen.query_one("#sql-error", Static)
    return str(error.render()) if error.display else ""


async def refuse_all(pilot: Pilot[Any], screen: SqlScreen, statements: list[str]) -> None:
    """Run each statement in the SQL screen, the whole text selected (ctrl+a: ctrl+r runs the
    selection): each is refused in the error line (one line), and no result ever shows."""
    editor = screen.query_one("#sql-editor", TextArea)
    table = screen.query_one("#sql-results", ResultTable)
    for sql in statements:
        screen.show_error("")
        editor.load_text(sql)
        editor.focus()
        await pilot.press("ctrl+a", "ctrl+r")
        await settle(pilot)
        error = error_line(screen)
        assert error and "\n" not in error, f"{sql!r} was not refused"
        assert error.startswith(("refused:", "query failed:")), (sql, error)
        assert table.row_count == 0 and not table.columns, (sql, error)
    await pilot.press("ctrl+e")  # an export of a refused query writes nothing either
    await settle(pilot)


# ------------------------------------------------------------------ the store's sandbox


@pytest.mark.parametrize("read_only", [False, True], ids=["writer", "read-only"])
def test_user_sql_is_refused_every_write_on_any_connection(tmp_path: Path, read_only: bool) -> None:
    db = tmp_path / "haf.duckdb"
    build_bench_db(db, n_instances=3, n_runs=1, seed=1)
    before = file_checksums(db)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.csv").write_text("a\n1\n")
    with open_store(db, read_only=read_only) as store:
        for sql in refused_statements(outside):
            for run, args in (
                (store.query_user, (sql,)),
                (store.query_user_page, (sql, None, 0, 10)),
                (store.export_user, (sql, None, outside / "export.csv", "csv")),
            ):
                with pytest.raises(StoreError, match=r"^(refused|query failed): ") as caught:
                    run(*args)  # type: ignore[operator]
                assert "\n" not in str(caught.value)
        # a write hidden in a reading statement: DuckDB's read-only transaction refuses it
        with pytest.raises(StoreError, match="would write to the database"):
            store.query_user("WITH gone AS (DELETE FROM runs RETURNING *) SELECT * FROM gone")
        assert store.query_user("SELECT count(*) FROM runs") == (["count_star()"], [(1,)])
        assert store.query_user_page("EXPLAIN ANALYZE SELECT 1", None, 0, 10)[1]
        assert store.query_user_page("SHOW TABLES", None, 0, 100)[1]
    assert leaked(outside) == ["x.csv"]
    assert file_checksums(db) == before


# ------------------------------------------------------------------ the SQL screen


async def test_sql_screen_refuses_writes_while_the_app_holds_the_writer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The state a run started in the app leaves: the app's store is its writer."""
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "haf.duckdb"
    build_bench_db(db, n_instances=3, n_runs=1, seed=1)
    before = file_checksums(db)
    outside = tmp_path / "outside"
    outside.mkdir()
    app = create_app(db)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert isinstance(app, HafApp)
        assert not app.reader.writable().read_only  # as execute_session does
        await pilot.press("s")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SqlScreen)
        await pilot.press(*"DELETE FROM runs")
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert error_line(screen).startswith("refused: DELETE statements are not allowed")
        await refuse_all(pilot, screen, refused_statements(outside))
        screen.query_one("#sql-editor", TextArea).load_text("SELECT count(*) AS n FROM runs")
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert not error_line(screen)
        table = screen.query_one("#sql-results", ResultTable)
        assert [str(c) for c in table.get_row_at(0)] == ["1"]
    assert leaked(outside) == []
    assert not list(tmp_path.glob("exports/*"))
    assert file_checksums(db) == before


@pytest.mark.real_model
async def test_after_a_run_started_in_the_app_the_sql_screen_cannot_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 18, item 1, key by key: a store with one finished run; n, ctrl+n, sample size 1,
    ctrl+n twice to Review, ctrl+s (the embedded model), h, s, ``DELETE FROM runs``, ctrl+r."""
    monkeypatch.setenv("HAF_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("HAF_MODELS_PATH", raising=False)
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "haf.duckdb"
    build_bench_db(db, n_instances=3, n_runs=1, seed=1)
    outside = tmp_path / "outside"
    outside.mkdir()
    app = create_app(db)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        wizard = app.screen
        assert isinstance(wizard, WizardScreen)
        await pilot.press("ctrl+n")
        assert str(wizard.query_one("#wz-body").current) == "dataset"
        wizard.query_one("#ds-limit", Input).focus()
        await pilot.press("1")
        await pilot.press("ctrl+n")
        assert str(wizard.query_one("#wz-body").current) == "settings"
        max_new = wizard.query_one("#set-max-new", Input)  # short answers: a quick run
        max_new.value = "24"
        await pilot.press("ctrl+n")
        await settle(pilot)  # the probe
        assert str(wizard.query_one("#wz-body").current) == "review"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app, HafApp) and isinstance(app.screen, MonitorScreen)
        session = app.session
        assert session is not None
        await wait_until(pilot, lambda: not session.active, 180)
        await settle(pilot)
        assert session.runs[0].status == "finished", list(session.runs[0].log)
        with open_snapshot(db) as snapshot:  # the app holds the file: read a copy
            before = store_checksums(snapshot)
        assert before["main.runs"][0] == 2

        await pilot.press("h")
        await settle(pilot)
        assert isinstance(app.screen, HomeScreen)
        await pilot.press("s")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SqlScreen)
        assert not app.reader.writable().read_only  # the writer again, as while a run writes
        await pilot.press(*"DELETE FROM runs")
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert error_line(screen).startswith("refused: DELETE statements are not allowed")
        assert screen.query_one("#sql-results", ResultTable).row_count == 0  # no "Count 2"
        await refuse_all(pilot, screen, refused_statements(outside))
    assert leaked(outside) == []
    assert not list(tmp_path.glob("exports/*"))
    assert file_checksums(db) == before
