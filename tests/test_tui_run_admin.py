"""Runs a researcher keeps in order (issue 18 §10): on the runs list ``L`` labels a run, ``T``
tags it, ``D`` deletes it (every row of it, after a confirmation; refused while it is being
written); on a synthetic store, keys driven through the pilot, screen and database checked."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import duckdb
import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Input

from benchmarks.benchdata import build_bench_db
from haf_tui.cli import main
from haf_tui.store import StoreError, open_store
from haf_tui.store.annotations import (
    delete_run,
    parse_tags,
    run_tables,
    save_note,
    set_run_label,
    set_run_tags,
)
from haf_tui.store.readers import run_overviews, run_title
from haf_tui.tui import create_app
from haf_tui.tui.screens.confirm import ConfirmScreen
from haf_tui.tui.screens.home import HomeScreen
from haf_tui.tui.screens.text_editor import TextEditorScreen
from tests.support import settle

RUN_TABLES = (
    "generations", "tokens", "reasons", "instance_results", "reason_metrics", "instance_metrics",
    "parse_diagnostics", "rationales", "rationales_gradient", "instance_notes", "runs",
)  # fmt: skip
"""Every table with a run_id column: the core migrations' and the built-in methods' own."""


@pytest.fixture
def synth(tmp_path: Path) -> tuple[Path, list[str]]:
    """Two synthetic runs of 12 instances, a note on each (each test changes its own copy)."""
    path = tmp_path / "haf.duckdb"
    run_ids = build_bench_db(path, n_instances=12, n_runs=2, seed=3)
    with open_store(path) as store:
        for run_id in run_ids:
            save_note(store, run_id, "t00001", f"a note on {run_id}")
    return path, run_ids


def rows_per_table(db: Path, run_id: str) -> dict[str, int]:
    """How many rows of the run each table holds (DuckDB itself, the app closed)."""
    with duckdb.connect(str(db), read_only=True) as con:
        return {
            table: int(con.execute(f"SELECT count(*) FROM {table} WHERE run_id = ?", [run_id])
                       .fetchall()[0][0])
            for table in RUN_TABLES
        }  # fmt: skip


def run_row(db: Path, run_id: str) -> tuple[Any, ...] | None:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("SELECT label, tags FROM runs WHERE run_id = ?", [run_id]).fetchone()


def shown(pilot: Pilot[Any]) -> object:
    """The screen on top (not narrowed by an earlier isinstance)."""
    return pilot.app.screen


async def open_home(pilot: Pilot[Any]) -> HomeScreen:
    await settle(pilot)
    home = pilot.app.screen
    assert isinstance(home, HomeScreen) and home.selected_run() is not None
    return home


def run_cell(home: HomeScreen, run_id: str) -> str:
    """The run's name as listed (at 80 columns its cell is cut with "…": the whole value)."""
    cell = str(home.query_one("#runs", DataTable).get_row(run_id)[0])
    title = home.run_title(run_id)
    head, _, tail = cell.partition("…")  # (cut out of its middle)
    assert title is not None and title.startswith(head) and title.endswith(tail)
    return title


async def test_l_labels_and_t_tags_the_run_under_the_cursor(synth: tuple[Path, list[str]]) -> None:
    db, _ = synth
    async with create_app(db).run_test(size=(80, 24)) as pilot:
        home = await open_home(pilot)
        run_id = home.selected_run()
        assert run_id is not None and run_cell(home, run_id) == run_id

        await pilot.press("L")
        await settle(pilot)
        assert isinstance(pilot.app.screen, TextEditorScreen)
        await pilot.press(*"llama", "space", *"baseline", "enter")
        await settle(pilot)
        assert shown(pilot) is home
        assert run_cell(home, run_id) == f"llama baseline ({run_id})"

        await pilot.press("T")
        await settle(pilot)
        await pilot.press(*"q4", "comma", "space", *"8b", "comma", *"q4", "enter")
        await settle(pilot)
        assert run_cell(home, run_id) == f"llama baseline ({run_id}) #q4 #8b"
        assert home.selected_run() == run_id  # the cursor stays on the run

        await pilot.press("L")  # the box starts from the label; blank removes it
        await settle(pilot)
        box = pilot.app.screen.query_one(Input)
        assert box.value == "llama baseline"
        box.value = ""
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert run_cell(home, run_id) == f"{run_id} #q4 #8b"
    assert run_row(db, run_id) == (None, ["q4", "8b"])


async def test_d_deletes_every_row_of_the_run_once_confirmed(
    synth: tuple[Path, list[str]],
) -> None:
    db, run_ids = synth
    before = {run_id: rows_per_table(db, run_id) for run_id in run_ids}
    async with create_app(db).run_test(size=(80, 24)) as pilot:
        home = await open_home(pilot)
        run_id = home.selected_run()
        assert run_id is not None
        (other,) = set(run_ids) - {run_id}
        await pilot.press("D")
        await settle(pilot)
        assert isinstance(pilot.app.screen, ConfirmScreen)
        await pilot.press("n")  # keep it
        await settle(pilot)
        assert shown(pilot) is home
        assert home.query_one("#runs", DataTable).row_count == 2

        await pilot.press("D", "y")
        await settle(pilot)
        table = home.query_one("#runs", DataTable)
        assert table.row_count == 1 and home.selected_run() == other
        deleted = sum(before[run_id].values())
        assert any(
            f"run {run_id} deleted ({deleted} rows)" in n.message for n in pilot.app._notifications
        )
    assert all(before[run_id][table] > 0 for table in ("generations", "tokens", "instance_notes"))
    assert rows_per_table(db, run_id) == dict.fromkeys(RUN_TABLES, 0)
    assert rows_per_table(db, other) == before[other]


WRITER = textwrap.dedent(
    """
    import os, socket, sys, duckdb
    con = duckdb.connect(sys.argv[1])
    con.execute(
        "UPDATE runs SET status = 'running', writer_pid = ?, writer_host = ? WHERE run_id = ?",
        [os.getpid(), socket.gethostname(), sys.argv[2]],
    )
    print("writing", flush=True)
    sys.stdin.readline()
    """
)


async def test_d_is_refused_while_another_process_writes_the_run(
    synth: tuple[Path, list[str]],
) -> None:
    db, run_ids = synth
    before = rows_per_table(db, run_ids[0])
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db), run_ids[0]],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "writing"
        async with create_app(db).run_test(size=(80, 24)) as pilot:
            home = await open_home(pilot)
            table = home.query_one("#runs", DataTable)
            table.move_cursor(row=table.get_row_index(run_ids[0]))
            await settle(pilot)
            assert home.selected_status() == "running"
            await pilot.press("D")
            await settle(pilot)
            assert shown(pilot) is home  # no question: refused at once, in one line
            message = list(pilot.app._notifications)[-1].message
            assert (
                message == f"run {run_ids[0]} is being written: cancel it first (C on its monitor)"
            )
    finally:
        writer.communicate("\n", timeout=30)
    assert rows_per_table(db, run_ids[0]) == before


def test_the_store_refuses_bad_labels_tags_and_deleting_a_run_being_written(
    synth: tuple[Path, list[str]],
) -> None:
    db, run_ids = synth
    assert parse_tags(" a, b ,,a,  c  d ") == ("a", "b", "c d")
    with pytest.raises(StoreError, match="longer than 32"):
        parse_tags("x" * 33)
    with open_store(db) as store:
        assert run_tables(store) == [*sorted(RUN_TABLES[:-1]), "runs"]
        with pytest.raises(StoreError, match="at most 80"):
            set_run_label(store, run_ids[0], "x" * 81)
        with pytest.raises(StoreError, match="no run"):
            set_run_tags(store, "no-such-run", "a")
        assert set_run_label(store, run_ids[1], "  two   words ") == "two words"
        overview = {o.run_id: o for o in run_overviews(store)}[run_ids[1]]
        assert overview.title == f"two words ({run_ids[1]})" and overview.tags == ()
        store.update_run(run_ids[0], status="running")  # this process writes it
        with pytest.raises(StoreError, match="being written"):
            delete_run(store, run_ids[0])
        writer = store.connection.execute(
            "SELECT writer_pid FROM runs WHERE run_id = ?", [run_ids[0]]
        ).fetchone()
        assert writer == (os.getpid(),)
        assert delete_run(store, run_ids[1])["runs"] == 1
    assert run_title("r1", "two words", ("a", "b"), stacked=True) == "r1\ntwo words #a #b"
    assert (
        run_title("r1", None, ("a",)) == "r1 #a" and run_title("r1", None, (), stacked=True) == "r1"
    )


def test_haf_runs_shows_labels_and_tags(
    synth: tuple[Path, list[str]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "160")  # (narrower: the label is elided, the id kept)
    db, run_ids = synth
    with open_store(db) as store:
        set_run_label(store, run_ids[0], "llama baseline")
        set_run_tags(store, run_ids[0], "q4, 8b")
    assert main(["--db", str(db), "runs"]) == 0
    out = capsys.readouterr().out
    assert "llama baseline #q4 #8b" in out and run_ids[1] in out
