"""What researchers keep in the explorer (issue 18 §10): ``b`` bookmarks an instance, ``w``
writes a note on it, ``*`` shows only bookmarked instances, ``y`` copies the instance's text or
the reason under the tree's cursor; on a synthetic store (``benchmarks.benchdata``), keys driven
through the pilot, the screen and the database checked."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import duckdb
import pytest
from textual.pilot import Pilot
from textual.widgets import Static, TextArea

from benchmarks.benchdata import build_bench_db
from benchmarks.tui_latency import settle as app_settle
from haf_tui import reports
from haf_tui.store import open_store
from haf_tui.store.annotations import instance_notes, save_note, set_bookmark
from haf_tui.store.connection import StoreError
from haf_tui.tui import create_app
from haf_tui.tui.filters import InstanceFilter
from haf_tui.tui.method_parts import NodeRef
from haf_tui.tui.screens.confirm import ConfirmScreen
from haf_tui.tui.screens.explorer import ExplorerScreen
from haf_tui.tui.screens.text_editor import TextEditorScreen
from haf_tui.tui.widgets.instance_list import InstanceList
from haf_tui.tui.widgets.stance_tree import StanceTree
from tests.support import until

NOTE = "slur against a group; model says maybe"


@pytest.fixture
def synth(tmp_path: Path) -> tuple[Path, str]:
    """A store with one synthetic run of 12 instances (each test changes its own copy)."""
    path = tmp_path / "haf.duckdb"
    (run_id,) = build_bench_db(path, n_instances=12, n_runs=1, seed=7)
    return path, run_id


def stored_notes(db: Path, run_id: str) -> list[tuple[Any, ...]]:
    """The run's rows of instance_notes, read by DuckDB itself (the app closed)."""
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(
            "SELECT instance_id, note, bookmarked FROM instance_notes WHERE run_id = ? "
            "ORDER BY instance_id",
            [run_id],
        ).fetchall()


async def wait(pilot: Pilot[Any]) -> None:
    await pilot.pause()
    await app_settle(pilot)


async def press(pilot: Pilot[Any], *keys: str) -> None:
    await pilot.press(*keys)
    await wait(pilot)


def shown(pilot: Pilot[Any]) -> object:
    """The screen on top (not narrowed by an earlier isinstance)."""
    return pilot.app.screen


async def open_run(pilot: Pilot[Any], run_id: str) -> ExplorerScreen:
    await wait(pilot)
    pilot.app.push_screen(ExplorerScreen(run_id))
    await wait(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, ExplorerScreen) and screen.current is not None
    return screen


def list_line(screen: ExplorerScreen, instance_id: str) -> str:
    """The instance list's line of an instance, as drawn."""
    table = screen.query_one(InstanceList)
    index = table.row_ids.index(instance_id)
    return table.render_line(index + 1 - round(table.scroll_y)).text


def note_line(screen: ExplorerScreen) -> str | None:
    node = screen.query_one(StanceTree).note_node
    return None if node is None else str(node.label)


async def test_b_bookmarks_w_writes_a_note_and_star_shows_only_bookmarked(
    synth: tuple[Path, str],
) -> None:
    db, run_id = synth
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_run(pilot, run_id)
        first = screen.current
        assert first is not None
        assert not list_line(screen, first).startswith("★") and note_line(screen) is None

        await press(pilot, "b")
        assert list_line(screen, first).startswith("★")
        assert note_line(screen) == "★ bookmarked"
        with app.reader.reading() as store:  # (the app's own access to the file)
            assert instance_notes(store, run_id)[first].bookmarked

        await press(pilot, "w")
        editor = pilot.app.screen
        assert isinstance(editor, TextEditorScreen)
        editor.query_one(TextArea).insert(NOTE)
        await press(pilot, "ctrl+s")
        assert shown(pilot) is screen
        assert note_line(screen) == f"★ note: {NOTE}"
        assert any(f"note on {first} saved" in n.message for n in pilot.app._notifications)
        tree = screen.query_one(StanceTree)
        assert tree.note_node is not None and tree.root.children[0] is tree.note_node
        tree.focus()
        tree.move_cursor(tree.note_node)
        await press(pilot, "y")  # the note under the tree's cursor
        assert pilot.app.clipboard == NOTE
        screen.query_one(InstanceList).focus()
        await wait(pilot)

        await press(pilot, "right_square_bracket")  # another instance: no mark, no note line
        second = screen.current
        assert second != first and note_line(screen) is None
        assert not list_line(screen, str(second)).startswith("★")

        await press(pilot, "asterisk")  # only the bookmarked one
        assert screen.query_one(InstanceList).row_ids == [first]
        assert "★ bookmarked" in str(screen.query_one("#ex-shown", Static).render())
        assert screen.current == first and note_line(screen) == f"★ note: {NOTE}"

        await press(pilot, "b")  # the bookmark off: the filter shows nothing; the note stays
        assert screen.query_one(InstanceList).row_ids == []
        await press(pilot, "a")
        assert screen.filter == InstanceFilter()
        assert len(screen.query_one(InstanceList).row_ids) == 12
    assert stored_notes(db, run_id) == [(first, NOTE, False)]


async def test_a_changed_note_is_not_thrown_away_without_asking(synth: tuple[Path, str]) -> None:
    db, run_id = synth
    with open_store(db) as store:  # a note kept earlier
        save_note(store, run_id, "t00000", "first thoughts")
    async with create_app(db).run_test(size=(80, 24)) as pilot:
        screen = await open_run(pilot, run_id)
        for _ in range(12):  # (the explorer opens on the first instance with reasons)
            if screen.current == "t00000":
                break
            await press(pilot, "left_square_bracket")
        assert note_line(screen) == "note: first thoughts"
        await press(pilot, "w")
        area = pilot.app.screen.query_one(TextArea)
        assert area.text == "first thoughts"  # the editor starts from the stored note
        await press(pilot, "end", "space", *"and", "space", *"more")
        await press(pilot, "escape")
        assert isinstance(pilot.app.screen, ConfirmScreen)
        await press(pilot, "n")  # keep editing: the text is still there
        assert isinstance(pilot.app.screen, TextEditorScreen)
        assert pilot.app.screen.query_one(TextArea).text == "first thoughts and more"
        await press(pilot, "escape", "y")  # discard
        assert shown(pilot) is screen and note_line(screen) == "note: first thoughts"
        await press(pilot, "w", "escape")  # unchanged: closes without a question
        assert shown(pilot) is screen
    assert stored_notes(db, run_id) == [("t00000", "first thoughts", False)]


HOLDER = textwrap.dedent(
    """
    import sys, time, duckdb
    ends = time.monotonic() + 120  # (the app lets go within seconds; a loaded machine's grace)
    while True:
        try:
            con = duckdb.connect(sys.argv[1])
            break
        except duckdb.Error:
            if time.monotonic() > ends:
                raise
            time.sleep(0.05)
    print("holding", flush=True)
    sys.stdin.readline()
    """
)


async def test_a_note_waits_while_another_process_writes_the_database(
    synth: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A writer that leaves no note (plain DuckDB): the bookmark and the note are kept pending
    after the usual wait, shown pending, and stored once it lets go (issue 25 §5)."""
    monkeypatch.setenv("HAF_HOME", str(tmp_path / "home"))
    db, run_id = synth
    async with create_app(db).run_test(size=(80, 24)) as pilot:
        screen = await open_run(pilot, run_id)
        first = screen.current
        assert first is not None
        holder = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(db)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
            await press(pilot, "b")  # (the writer waits a few seconds, then keeps it)
            message = list(pilot.app._notifications)[-1].message
            assert message.startswith(f"bookmark on {first} kept: pending") and "\n" not in message
            assert list_line(screen, first).startswith("★")
            await press(pilot, "w")
            pilot.app.screen.query_one(TextArea).insert(NOTE)
            await press(pilot, "ctrl+s")
            assert shown(pilot) is screen  # not refused: kept, the editor closed
            assert note_line(screen) == f"⧗ pending · ★ note: {NOTE}"
        finally:
            holder.communicate("\n", timeout=30)
        # the other process is done: stored within seconds (a loaded machine's deadline)
        await until(pilot, lambda: note_line(screen) == f"★ note: {NOTE}")
    assert stored_notes(db, run_id) == [(first, NOTE, True)]


async def test_y_copies_the_instance_text_or_the_reason_under_the_cursor(
    synth: tuple[Path, str],
) -> None:
    db, run_id = synth
    async with create_app(db).run_test(size=(80, 24)) as pilot:
        screen = await open_run(pilot, run_id)
        text = str(screen.by_id[str(screen.current)]["text"])
        await press(pilot, "y")
        assert pilot.app.clipboard == text
        assert any(f"copied {len(text)} characters" in n.message for n in pilot.app._notifications)

        tree = screen.query_one(StanceTree)
        reason = next(
            node
            for node in tree.root.children[0].children
            if isinstance(node.data, NodeRef) and node.data.reason_index is not None
        )
        tree.focus()
        tree.move_cursor(reason)
        await wait(pilot)
        await press(pilot, "y")
        data = screen.cache[str(screen.current)]
        ref = reason.data
        assert isinstance(ref, NodeRef)
        whole = next(
            row.reason_text
            for row in data.detail
            if row.stage == ref.stage and row.reason_index == ref.reason_index
        )
        assert pilot.app.clipboard == whole and whole != text
        assert list(pilot.app._notifications)[-1].message.startswith(
            f"copied {len(whole)} characters"
        )


def test_notes_are_stored_checked_and_queryable(synth: tuple[Path, str]) -> None:
    db, run_id = synth
    with open_store(db) as store:
        set_bookmark(store, run_id, "t00003", True)
        save_note(store, run_id, "t00003", "  needs a second look  ")
        save_note(store, run_id, "t00004", "only a note")
        save_note(store, run_id, "t00004", "   ")  # blank: the note (and its row) goes
        with pytest.raises(StoreError, match="no instance 'nope'"):
            save_note(store, run_id, "nope", "x")
        with pytest.raises(StoreError, match="no run"):
            set_bookmark(store, "no-such-run", "t00003", True)
        columns, rows = reports.run_named(store, "notes", {})
    found = [dict(zip(columns, row, strict=True)) for row in rows]
    assert [(r["instance_id"], r["note"], r["bookmarked"]) for r in found] == [
        ("t00003", "needs a second look", True)
    ]
    assert found[0]["text"] and found[0]["model_file"] and found[0]["run_id"] == run_id
