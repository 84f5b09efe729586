"""The explorer screen on a real stored run: instances, the stance tree, the token view."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, Static
from textual.widgets.tree import TreeNode

from haf_tui.tui import create_app
from haf_tui.tui.screens.explorer import ExplorerScreen
from haf_tui.tui.screens.home import HomeScreen
from haf_tui.tui.widgets.stance_tree import NodeRef, StanceTree
from haf_tui.tui.widgets.token_view import TokenView

pytestmark = pytest.mark.real_model
RunDb = tuple[Path, str, list[str]]


def db_rows(db: Path, sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql, params).fetchall()


async def settle(pilot: Pilot[Any]) -> None:
    for _ in range(3):
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def open_explorer(pilot: Pilot[Any]) -> ExplorerScreen:
    await settle(pilot)
    assert isinstance(pilot.app.screen, HomeScreen)
    await pilot.press("enter")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, ExplorerScreen)
    return screen


def labels(node: TreeNode[Any]) -> list[str]:
    return [str(child.label) for child in node.children]


def child(node: TreeNode[Any], prefix: str) -> TreeNode[Any]:
    return next(c for c in node.children if str(c.label).startswith(prefix))


async def select_listy(pilot: Pilot[Any], screen: ExplorerScreen) -> StanceTree:
    table = screen.query_one("#ex-instances", DataTable)
    ids = [str(key.value) for key in table.rows]
    table.move_cursor(row=ids.index("listy"))
    await settle(pilot)
    assert screen.current == "listy" and "listy" in screen.cache
    return screen.query_one("#ex-tree", StanceTree)


async def test_explorer_lists_instances_and_builds_the_tree(full_run_db: RunDb) -> None:
    db, run_id, _ = full_run_db
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_explorer(pilot)
        assert screen.run_id == run_id
        table = screen.query_one("#ex-instances", DataTable)
        assert {str(key.value) for key in table.rows} == {"listy", "plain"}
        tree = await select_listy(pilot, screen)
        root = tree.root
        assert str(root.label).startswith("listy")
        justify = child(root, "JUSTIFY →")
        n_reasons = db_rows(
            db,
            "SELECT count(*) FROM reasons WHERE run_id=? AND instance_id='listy' "
            "AND stage='justify'",
            [run_id],
        )[0][0]
        reason_nodes = [c for c in justify.children if c.data and c.data.reason_index is not None]
        assert len(reason_nodes) == n_reasons > 0
        assert "SoS term" in str(reason_nodes[0].label)
        tops = labels(root)
        assert any(t.startswith("UPHOLD-REASON internal") for t in tops)
        assert any(t.startswith("UPHOLD-REASON external") for t in tops)
        stance = child(root, "UPHOLD-STANCE")
        assert stance.children and str(stance.children[0].label).startswith("SUF r1 →")
        assert "RS1=" in str(stance.children[0].label)
        assert stance.children[0].data == NodeRef("individual", 0)
        # n / p move between instances from anywhere
        await pilot.press("n")
        await settle(pilot)
        first = screen.current
        await pilot.press("p")
        await settle(pilot)
        assert screen.current != first or table.row_count == 1


async def test_token_view_follows_the_selected_node(full_run_db: RunDb) -> None:
    db, run_id, _ = full_run_db
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_explorer(pilot)
        tree = await select_listy(pilot, screen)
        reason = child(child(tree.root, "JUSTIFY →"), "r1 ")
        tree.move_cursor(reason)
        await pilot.pause()
        view = screen.query_one("#ex-tokens", TokenView)
        output = db_rows(
            db,
            "SELECT output_text, prompt_text FROM generations WHERE run_id=? "
            "AND instance_id='listy' AND stage='justify'",
            [run_id],
        )[0]
        assert view.reason_index == 0
        assert view.output_text() == output[0]
        assert view.body_text().plain == output[0]
        first = db_rows(
            db,
            "SELECT token_first FROM reasons WHERE run_id=? AND instance_id='listy' "
            "AND stage='justify' AND reason_index=0",
            [run_id],
        )[0][0]
        assert view.cursor == first
        await pilot.press("right_square_bracket", "right_square_bracket", "left_square_bracket")
        assert view.cursor == first + 1
        text, logprob, top_texts = db_rows(
            db,
            "SELECT text, logprob, top_texts FROM tokens WHERE run_id=? AND "
            "instance_id='listy' AND stage='justify' AND position=?",
            [run_id, first + 1],
        )[0]
        status = str(screen.query_one("#tv-status", Static).render())
        assert f"NLL {-logprob:.3f}" in status and repr(text) in status
        assert all(repr(alt) in status for alt in top_texts)
        assert view.mode == "nll"
        await pilot.press("c")
        assert view.mode == "relevance"
        await pilot.press("c")
        assert view.mode == "nll"
        await pilot.press("r")
        assert view.show_prompt and view.body_text().plain == output[1]
        await pilot.press("r")
        assert not view.show_prompt
        # an UPHOLD-STANCE node shows its own generation
        tree.move_cursor(child(tree.root, "UPHOLD-STANCE").children[0])
        await pilot.pause()
        sub = db_rows(
            db,
            "SELECT output_text FROM generations WHERE run_id=? AND instance_id='listy' "
            "AND stage='individual' AND sub_index=0",
            [run_id],
        )[0][0]
        assert view.output_text() == sub


async def test_search_filters_and_escape_returns_home(full_run_db: RunDb) -> None:
    db, _, _ = full_run_db
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_explorer(pilot)
        table = screen.query_one("#ex-instances", DataTable)
        assert table.row_count == 2
        await pilot.press("slash")
        assert isinstance(screen.focused, Input)
        await pilot.press(*"listy")
        await pilot.pause()
        assert [str(key.value) for key in table.rows] == ["listy"]
        await pilot.press("enter")  # back to the list
        await pilot.press("o")
        assert screen.sort_by_sos
        screen.query_one("#ex-search", Input).value = ""
        await settle(pilot)
        assert table.row_count == 2
        assert str(table.coordinate_to_cell_key((0, 0)).row_key.value) == "listy"  # SoS first
        await pilot.press("escape")
        assert isinstance(app.screen, HomeScreen)


def test_explorer_snapshot(snap_compare: Any, full_run_db: RunDb) -> None:
    db, _, _ = full_run_db

    async def prepare(pilot: Pilot[Any]) -> None:
        screen = await open_explorer(pilot)
        await select_listy(pilot, screen)
        # hide the header and footer: the sub-title shows the run id
        for widget in screen.query("Header, Footer"):
            widget.display = False
        await pilot.pause()

    assert snap_compare(create_app(db), terminal_size=(100, 30), run_before=prepare)
