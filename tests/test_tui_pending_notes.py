"""Annotations are never refused (issue 25 §5): while another process writes the database (a
real second process holding it for writing, as ``haf run`` does), a label, tags, a note or a
bookmark is checked, kept pending in ``$HAF_HOME/pending-annotations.jsonl`` and shown as
pending (⧗), and stored as soon as the writer lets go; quitting keeps it (one line says so) and
the next start stores it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Static, TextArea

from benchmarks.benchdata import build_bench_db
from haf_tui.store import StoreError, open_store
from haf_tui.store.pending_annotations import (
    annotation,
    check,
    pending,
    pending_path,
    queue,
    store_pending,
)
from haf_tui.tui import create_app
from haf_tui.tui.app import HafApp
from haf_tui.tui.screens.explorer import ExplorerScreen
from haf_tui.tui.screens.home import HomeScreen
from haf_tui.tui.screens.text_editor import TextEditorScreen
from haf_tui.tui.widgets.stance_tree import StanceTree
from tests.support import settle

ROOT = Path(__file__).resolve().parent.parent

HOLDER = textwrap.dedent(
    """
    import sys
    from haf_tui.store import open_store

    with open_store(sys.argv[1], purpose="run ab12: writing") as store:
        print("holding", flush=True)
        sys.stdin.readline()
    print("done", flush=True)
    """
)
"""A ``haf run`` in miniature: holds the database for writing (with its holder note) until
told to let go (a line on stdin)."""


@pytest.fixture
def synth(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    """One synthetic run of 12 instances; this test's own HAF home (the queue's folder)."""
    monkeypatch.setenv("HAF_HOME", str(tmp_path / "home"))
    path = tmp_path / "haf.duckdb"
    (run_id,) = build_bench_db(path, n_instances=12, n_runs=1, seed=7)
    return path, run_id


@pytest.fixture
def holder(synth: tuple[Path, str]) -> Iterator[Callable[[], subprocess.Popen[str]]]:
    """Starts the writer process on demand; lets it go at the end of the test if still held."""
    started: list[subprocess.Popen[str]] = []

    def start() -> subprocess.Popen[str]:
        process = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(synth[0])],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        assert process.stdout is not None and process.stdout.readline().strip() == "holding"
        started.append(process)
        return process

    yield start
    for process in started:
        if process.poll() is None:
            process.communicate("\n", timeout=30)


def let_go(process: subprocess.Popen[str]) -> None:
    process.communicate("\n", timeout=30)
    assert process.returncode == 0


def db_row(db: Path, sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql, params).fetchall()


async def until(pilot: Pilot[Any], ok: Callable[[], bool], seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not ok():
        assert time.monotonic() < deadline, "timed out"
        await pilot.pause(0.2)


def shown(pilot: Pilot[Any]) -> object:
    """The screen on top (not narrowed by an earlier isinstance)."""
    return pilot.app.screen


def title(home: HomeScreen, run_id: str) -> str:
    return str(home.query_one("#runs", DataTable).get_row(run_id)[0])


def hint(home: HomeScreen) -> str:
    return str(home.query_one("#runs-hint", Static).render())


async def free_of_file(pilot: Pilot[Any]) -> None:
    await settle(pilot)
    app = pilot.app
    assert isinstance(app, HafApp)
    await until(pilot, lambda: not app.reader.holds_file)  # (its idle grace: 1 s)


async def test_a_label_typed_while_a_run_writes_is_kept_shown_pending_and_stored_later(
    synth: tuple[Path, str], holder: Callable[[], subprocess.Popen[str]]
) -> None:
    db, run_id = synth
    app = create_app(db)
    async with app.run_test(size=(200, 50)) as pilot:
        await free_of_file(pilot)
        home = app.screen
        assert isinstance(home, HomeScreen)
        writer = holder()
        await pilot.press("L")
        await settle(pilot)
        assert isinstance(app.screen, TextEditorScreen)
        await pilot.press(*"baseline", "enter")
        await settle(pilot)
        assert shown(pilot) is home  # accepted, not refused
        message = list(app._notifications)[-1].message
        assert message.startswith(f"run {run_id} labelled 'baseline' (pending:"), message
        await until(pilot, lambda: title(home, run_id).endswith("⧗"))
        assert title(home, run_id) == f"baseline ({run_id}) ⧗"
        assert "⧗ 1 annotation pending" in hint(home)
        assert [(p.kind, p.run_id, p.text) for p in pending(db)] == [("label", run_id, "baseline")]

        await pilot.press("L")  # the box starts from the pending label
        await settle(pilot)
        assert app.screen.query_one("#editor-text").value == "baseline"  # type: ignore[attr-defined]
        await pilot.press("escape")
        await settle(pilot)

        let_go(writer)
        await until(pilot, lambda: title(home, run_id) == f"baseline ({run_id})")
        assert any("stored 1 pending annotation" in n.message for n in app._notifications)
        assert pending(db) == [] and not pending_path().exists()
        assert "pending" not in hint(home)
    assert db_row(db, "SELECT label FROM runs WHERE run_id = ?", [run_id]) == [("baseline",)]


async def test_quitting_with_annotations_pending_keeps_them_for_the_next_start(
    synth: tuple[Path, str],
    holder: Callable[[], subprocess.Popen[str]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    db, run_id = synth
    app = create_app(db)
    async with app.run_test(size=(200, 50)) as pilot:
        await free_of_file(pilot)
        writer = holder()
        await pilot.press("T")
        await settle(pilot)
        await pilot.press(*"q4, 8b", "enter")
        await settle(pilot)
        assert title(app.screen, run_id).endswith("#q4 #8b ⧗")  # type: ignore[arg-type]
        await pilot.press("q")
        await pilot.pause()
    said = " ".join(capsys.readouterr().err.split())  # (the line after the app, wrapped)
    assert said.startswith("1 annotation pending (the database was in use): kept in ")
    assert said.endswith("stored the next time the workbench opens it"), said
    let_go(writer)
    assert db_row(db, "SELECT tags FROM runs WHERE run_id = ?", [run_id]) == [(None,)]
    assert len(pending(db)) == 1  # kept on disk

    again = create_app(db)
    async with again.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        await until(pilot, lambda: not pending(db))
        home = again.screen
        assert isinstance(home, HomeScreen)
        await until(pilot, lambda: title(home, run_id) == f"{run_id} #q4 #8b")
    assert db_row(db, "SELECT tags FROM runs WHERE run_id = ?", [run_id]) == [(["q4", "8b"],)]


async def test_notes_and_bookmarks_wait_for_the_writer_in_the_explorer(
    synth: tuple[Path, str], holder: Callable[[], subprocess.Popen[str]]
) -> None:
    db, run_id = synth
    app = create_app(db)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        app.push_screen(ExplorerScreen(run_id))
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ExplorerScreen) and screen.current is not None
        first = screen.current
        await until(pilot, lambda: not app.reader.holds_file)
        writer = holder()
        await pilot.press("b")
        await settle(pilot)
        await pilot.press("w")
        await settle(pilot)
        app.screen.query_one(TextArea).insert("slur; model unsure")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert app.screen is screen  # kept, the editor closed
        note = screen.query_one(StanceTree).note_node
        assert note is not None and str(note.label) == "⧗ pending · ★ note: slur; model unsure"
        assert {p.kind for p in pending(db)} == {"bookmark", "note"}
        let_go(writer)
        await until(pilot, lambda: not pending(db))
        await settle(pilot)
        note = screen.query_one(StanceTree).note_node
        assert note is not None and str(note.label) == "★ note: slur; model unsure"
    assert db_row(
        db, "SELECT instance_id, note, bookmarked FROM instance_notes WHERE run_id = ?", [run_id]
    ) == [(first, "slur; model unsure", True)]


def test_the_queue_checks_replaces_and_keeps_what_it_cannot_read(
    synth: tuple[Path, str],
) -> None:
    db, run_id = synth
    queue(annotation(db, "label", run_id, text="first"))
    queue(annotation(db, "label", run_id, text="second"))  # the later one replaces it
    queue(annotation(db, "note", "no-such-run", "t00001", text="lost run"))
    path = pending_path()
    path.write_text(path.read_text() + "not json\n")  # (hostile: kept as it is, never read)
    assert [p.text for p in pending(db)] == ["second", "lost run"]
    with open_store(db) as store:

        def write(change: Callable[[Any], None]) -> None:
            change(store)

        stored, dropped = store_pending(db, write)
    assert [p.text for p in stored] == ["second"]
    assert [(p.run_id, reason) for p, reason in dropped] == [
        ("no-such-run", "no run 'no-such-run' in haf.duckdb")
    ]
    assert path.read_text() == "not json\n" and pending(db) == []
    assert db_row(db, "SELECT label FROM runs WHERE run_id = ?", [run_id]) == [("second",)]
    with open_store(db, read_only=True) as store, pytest.raises(StoreError, match="at most 80"):
        check(store, annotation(db, "label", run_id, text="x" * 81))
