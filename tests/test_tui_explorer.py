# Over 400 lines because the explorer's panes are tested together on one real stored run.
"""The explorer screen: on a real stored run (instances, the stance tree, the token view), and
on a synthetic store (``benchmarks.benchdata``) for the filters, the sorting and the keys."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Any

import duckdb
import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Static
from textual.widgets.tree import TreeNode

from benchmarks.benchdata import build_bench_db
from benchmarks.tui_latency import settle as app_settle
from haf_tui.reports import get_query, run_named
from haf_tui.store import open_store
from haf_tui.store.instance_readers import DetailRow
from haf_tui.tui import create_app
from haf_tui.tui.filters import (
    LABELS,
    METRIC_COLUMNS,
    SORT_KEYS,
    FilterError,
    Range,
    parse_ranges,
)
from haf_tui.tui.instance_reader import read_instances
from haf_tui.tui.method_parts import NodeRef
from haf_tui.tui.screens.explorer import TYPING_PAUSE, ExplorerScreen
from haf_tui.tui.screens.home import HomeScreen
from haf_tui.tui.widgets.instance_list import InstanceList
from haf_tui.tui.widgets.stance_tree import StanceTree
from haf_tui.tui.widgets.text_layout import FLAG
from haf_tui.tui.widgets.token_view import TokenBody, TokenView
from tests.support import settle

RunDb = tuple[Path, str, list[str]]


def db_rows(db: Path, sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql, params).fetchall()


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
    table = screen.query_one("#ex-instances", InstanceList)
    table.move_cursor(table.row_ids.index("listy"))
    await settle(pilot)
    assert screen.current == "listy" and "listy" in screen.cache
    return screen.query_one("#ex-tree", StanceTree)


@pytest.mark.real_model
async def test_explorer_lists_instances_and_builds_the_tree(full_run_db: RunDb) -> None:
    db, run_id, _ = full_run_db
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_explorer(pilot)
        assert screen.run_id == run_id
        table = screen.query_one("#ex-instances", InstanceList)
        assert set(table.row_ids) == {"listy", "plain"}
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
        assert "RS1=" in str(stance.children[0].children[0].label)  # (its numbers' own line)
        assert stance.children[0].data == NodeRef("individual", 0)
        # ] / [ move between instances from anywhere
        await pilot.press("right_square_bracket")
        await settle(pilot)
        first = screen.current
        await pilot.press("left_square_bracket")
        await settle(pilot)
        assert screen.current != first or table.row_count == 1


@pytest.mark.real_model
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
        await pilot.press("greater_than_sign", "greater_than_sign", "less_than_sign")
        assert view.cursor == first + 1
        text, logprob, top_texts = db_rows(
            db,
            "SELECT text, logprob, top_texts FROM tokens WHERE run_id=? AND "
            "instance_id='listy' AND stage='justify' AND position=?",
            [run_id, first + 1],
        )[0]
        status = str(screen.query_one("#tv-status", Static).render())
        assert f"NLL {-logprob:.3f}" in status and repr(text) in status
        top = status.splitlines()[2]  # (whole alternatives, as many as the pane holds)
        shown = [alt for alt in top_texts if repr(alt) in top]
        assert shown and shown == list(top_texts[: len(shown)])
        more = len(top_texts) - len(shown)
        assert (f"(+{more} more)" in top) is (more > 0) and "…" not in top
        assert view.mode == "nll"
        await pilot.press("l")
        assert str(view.mode) == "relevance"
        await pilot.press("l")
        assert view.mode == "nll"
        await pilot.press("v")
        assert view.show_prompt and view.body_text().plain == output[1]
        await pilot.press("v")
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
        # the classify suite's node: ŷ, p(toxic) and the label mass the stored metrics hold,
        # and each forced spelling shows its own tokens
        p_toxic, mass = (
            v
            for (v,) in db_rows(
                db,
                "SELECT value FROM instance_metrics WHERE run_id=? AND instance_id='listy' "
                "AND metric IN ('classify_p_toxic', 'classify_label_mass') ORDER BY metric DESC",
                [run_id],
            )
        )
        classify = child(tree.root, "classify →")
        assert f"p(toxic) {p_toxic:.2f}" in str(classify.label)
        assert f"label mass {mass:.2f}" in str(classify.label)
        assert [str(c.label).split(":")[0] for c in classify.children] == [
            "'toxic'",
            "'Toxic'",
            "'non-toxic'",
            "'Non-toxic'",
        ]
        tree.move_cursor(classify.children[2])
        await pilot.pause()
        assert view.output_text() == "non-toxic"


@pytest.mark.real_model
async def test_search_filters_and_escape_returns_home(full_run_db: RunDb) -> None:
    db, _, _ = full_run_db
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_explorer(pilot)
        table = screen.query_one("#ex-instances", InstanceList)
        assert table.row_count == 2
        await pilot.press("slash")
        assert isinstance(screen.focused, Input)
        await pilot.press(*"listy")
        await pilot.pause()
        assert table.row_ids == ["listy"]
        await pilot.press("enter")  # back to the list
        await pilot.press("o")
        assert screen.sort_by_sos
        screen.query_one("#ex-search", Input).value = ""
        await settle(pilot)
        assert table.row_count == 2
        assert table.row_ids[0] == "listy"  # SoS first
        await pilot.press("escape")
        assert isinstance(app.screen, HomeScreen)


# ---------------------------------------------------------------- on a synthetic store

SynthDb = tuple[Path, list[str]]
INSTANCES = 80


@pytest.fixture(scope="module")
def synth_db(tmp_path_factory: pytest.TempPathFactory) -> SynthDb:
    """Two synthetic runs of 80 instances (the second interrupted at 95 %)."""
    path = tmp_path_factory.mktemp("synth") / "haf.duckdb"
    return path, build_bench_db(path, n_instances=INSTANCES, n_runs=2, seed=5)


async def open_run(pilot: Pilot[Any], run_id: str) -> ExplorerScreen:
    await wait(pilot)
    pilot.app.push_screen(ExplorerScreen(run_id))
    await wait(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, ExplorerScreen)
    return screen


async def wait(pilot: Pilot[Any]) -> None:
    """Until the app is idle (messages, workers, the frame they lead to)."""
    await pilot.pause()
    await app_settle(pilot)


async def press(pilot: Pilot[Any], *keys: str) -> None:
    await pilot.press(*keys)
    await wait(pilot)


async def typed(pilot: Pilot[Any], text: str) -> None:
    """Type into the focused box, then let the typing pause pass (the instance is read then)."""
    await pilot.press(*text)
    await pilot.pause(TYPING_PAUSE + 0.1)
    await wait(pilot)


def ids(db: Path, sql: str, params: Any) -> list[str]:
    return [str(row[0]) for row in db_rows(db, sql, params)]


def shown(screen: ExplorerScreen) -> list[str]:
    return screen.query_one("#ex-instances", InstanceList).row_ids


def shown_line(screen: ExplorerScreen) -> str:
    return str(screen.query_one("#ex-shown", Static).render())


ALL_SQL = "SELECT instance_id FROM instances ORDER BY position"
INSTANCES_SQL = "SELECT * FROM ({sql}) ORDER BY {order}"


async def test_stance_filter_cycles_through_every_stance(synth_db: SynthDb) -> None:
    db, (run_id, _) = synth_db
    async with create_app(db).run_test(size=(120, 40)) as pilot:
        screen = await open_run(pilot, run_id)
        every = ids(db, ALL_SQL, [])
        assert shown(screen) == every and len(every) == INSTANCES
        assert f"{INSTANCES} of {INSTANCES} instances shown" in shown_line(screen)
        for stance in ("toxic", "maybe", "non-toxic", "unclear"):
            await press(pilot, "t")
            expected = ids(
                db,
                "SELECT r.instance_id FROM instance_results r JOIN instances i "
                "USING (instance_id) WHERE r.run_id = ? AND r.stance = ? ORDER BY i.position",
                [run_id, stance],
            )
            assert expected, f"the synthetic run has no {stance} instance"
            assert shown(screen) == expected
            assert f"{len(expected)} of {INSTANCES} instances shown" in shown_line(screen)
            assert f"stance {stance}" in shown_line(screen)
            assert screen.current == expected[0] and screen.current in screen.cache
        await press(pilot, "t")
        assert shown(screen) == every


async def test_unclear_and_contradiction_filters(synth_db: SynthDb) -> None:
    db, (run_id, _) = synth_db
    order = "SELECT instance_id FROM instances WHERE instance_id IN ({}) ORDER BY position"
    unclear = ids(
        db,
        order.format(
            "SELECT instance_id FROM generations WHERE run_id = ? AND upper(decision) = 'UNCLEAR'"
        ),
        [run_id],
    )
    with open_store(db, read_only=True) as store:
        columns, rows = run_named(store, "contradictions", {"run_ids": [run_id]})
    contradicting = {row[columns.index("instance_id")] for row in rows}
    contradictions = [i for i in ids(db, ALL_SQL, []) if i in contradicting]
    assert 0 < len(unclear) < INSTANCES and 0 < len(contradictions) < INSTANCES
    async with create_app(db).run_test(size=(120, 40)) as pilot:
        screen = await open_run(pilot, run_id)
        await press(pilot, "u")
        assert shown(screen) == unclear and "UNCLEAR" in shown_line(screen)
        await press(pilot, "u", "x")
        assert shown(screen) == contradictions and "contradictions" in shown_line(screen)
        await press(pilot, "u")
        assert shown(screen) == [i for i in contradictions if i in unclear]
        await press(pilot, "a")
        assert len(shown(screen)) == INSTANCES


async def test_metric_ranges_filter_and_say_what_is_wrong(synth_db: SynthDb) -> None:
    db, (run_id, _) = synth_db
    having = (
        "SELECT instance_id FROM instances WHERE instance_id IN (SELECT instance_id FROM "
        "instance_metrics WHERE run_id = ? GROUP BY instance_id HAVING {}) ORDER BY position"
    )
    both = ids(
        db,
        having.format(
            "max(value) FILTER (WHERE metric = 'sos') > 0.5 "
            "AND max(value) FILTER (WHERE metric = 'rs') < 0.3"
        ),
        [run_id],
    )
    high = ids(db, having.format("max(value) FILTER (WHERE metric = 'sos') > 0.9"), [run_id])
    assert 0 < len(both) < INSTANCES and len(high) < INSTANCES
    async with create_app(db).run_test(size=(120, 40)) as pilot:
        screen = await open_run(pilot, run_id)
        error = screen.query_one("#ex-filter-error", Static)
        await pilot.press("f")
        assert screen.focused is screen.query_one("#ex-ranges", Input)
        await typed(pilot, "sos>0.5 rs<0.3")
        assert shown(screen) == both
        assert "sos>0.5 · rs<0.3" in shown_line(screen) and error.has_class("-empty")
        assert screen.current == both[0] and screen.current in screen.cache
        await pilot.press("enter")
        assert isinstance(screen.focused, InstanceList)
        await pilot.press("f")  # the box selects its text: typing replaces it
        await typed(pilot, "sos>")
        assert not error.has_class("-empty") and "cannot read" in str(error.render())
        assert shown(screen) == both  # the last readable ranges stay
        await typed(pilot, "0.9")
        assert error.has_class("-empty") and shown(screen) == high
        screen.query_one("#ex-ranges", Input).value = "foo<1"
        await wait(pilot)
        assert "unknown metric 'foo'" in str(error.render())
        screen.query_one("#ex-ranges", Input).value = "sos>5"
        await wait(pilot)
        assert shown(screen) == [] and f"0 of {INSTANCES} instances shown" in shown_line(screen)
        assert "no instance passes" in str(screen.query_one("#ex-input", Static).render())
        assert screen.current is None and not screen.query_one("#ex-tokens", TokenView).tokens
        await pilot.press("escape")  # out of the box, to the list
        assert isinstance(screen.focused, InstanceList)
        await press(pilot, "a")
        assert len(shown(screen)) == INSTANCES
        assert screen.query_one("#ex-ranges", Input).value == ""


async def test_sorting_by_every_metric_both_ways(synth_db: SynthDb) -> None:
    db, (run_id, _) = synth_db
    sql = get_query("instances").sql

    def ordered(column: str, direction: str) -> list[str]:
        query = INSTANCES_SQL.format(sql=sql, order=f"{column} {direction} NULLS LAST, position")
        with duckdb.connect(str(db), read_only=True) as con:
            return [str(r[1]) for r in con.execute(query, {"run_id": run_id}).fetchall()]

    async with create_app(db).run_test(size=(120, 40)) as pilot:
        screen = await open_run(pilot, run_id)
        for key in SORT_KEYS[1:]:
            await press(pilot, "o")
            assert screen.filter.sort_key == key
            assert shown(screen) == ordered(METRIC_COLUMNS[key], "DESC"), key
            assert f"sort {LABELS[key]} ↓" in shown_line(screen)
            await press(pilot, "O")
            assert shown(screen) == ordered(METRIC_COLUMNS[key], "ASC"), key
            assert f"sort {LABELS[key]} ↑" in shown_line(screen)
            await pilot.press("O")
        await press(pilot, "o")
        assert screen.filter.sort_key == "position"
        assert shown(screen) == ids(db, ALL_SQL, [])


async def test_keys_step_the_shown_instances_and_move_tokens_outside_text_boxes(
    synth_db: SynthDb,
) -> None:
    db, (run_id, _) = synth_db
    async with create_app(db).run_test(size=(120, 40)) as pilot:
        screen = await open_run(pilot, run_id)
        await pilot.press("t")  # toxic only: ] / [ step through those
        await wait(pilot)
        rows = shown(screen)
        await press(pilot, "right_square_bracket", "right_square_bracket", "left_square_bracket")
        assert screen.current == rows[1] and screen.current in screen.cache
        view = screen.query_one("#ex-tokens", TokenView)
        assert view.tokens and view.cursor == 0
        await pilot.press("right", "right")  # the list has the focus
        assert isinstance(screen.focused, InstanceList) and view.cursor == 2
        screen.query_one("#ex-tree", StanceTree).focus()
        await pilot.press("right", "left", "left")
        assert view.cursor == 1
        await pilot.press("slash")
        search = screen.query_one("#ex-search", Input)
        await pilot.press("t", "0", "left")  # in the box: the caret moves, not the tokens
        assert search.cursor_position == 1 and view.cursor == 1
        await pilot.press("escape")  # out of the box
        assert isinstance(screen.focused, InstanceList)
        await pilot.press("escape")
        assert isinstance(pilot.app.screen, HomeScreen)


async def test_token_view_keeps_the_cursor_token_in_view(synth_db: SynthDb) -> None:
    db, (run_id, _) = synth_db
    async with create_app(db).run_test(size=(80, 24)) as pilot:
        screen = await open_run(pilot, run_id)
        view = screen.query_one("#ex-tokens", TokenView)
        body = view.query_one(TokenBody)
        width, height = body.text_width, body.scrollable_content_region.height
        assert len(body.lines) > height  # the text is longer than the view
        assert view.cursor_line(width) == 0 and body.scroll_y == 0
        for _ in range(len(view.tokens) - 1):
            await press(pilot, "right")
        line = view.cursor_line(width)
        assert view.cursor == len(view.tokens) - 1 and line >= height  # below the first screen
        assert body.scroll_y <= line < body.scroll_y + height
        assert line == len(body.lines) - 1  # the last token is on the last line
        screen.action_token(-len(view.tokens))
        await wait(pilot)
        assert view.cursor == 0 and body.scroll_y == 0


def test_metric_ranges_are_read_or_refused() -> None:
    assert parse_ranges("") == ()
    assert parse_ranges("sos>0.5 rs<=0.3") == (Range("sos", ">", 0.5), Range("rs", "<=", 0.3))
    assert parse_ranges("SoS >= .5, n=3 and c<0.9") == (
        Range("sos", ">=", 0.5),
        Range("n_reasons", "=", 3.0),
        Range("confidence", "<", 0.9),
    )
    assert Range("rs", "<", 0.3).test({"rs": None}) is False  # undefined never matches
    for bad, message in (
        ("sos>", "cannot read"),
        ("foo<1", "unknown metric 'foo'"),
        ("sos>0.5 junk", "cannot read 'junk'"),
    ):
        with pytest.raises(FilterError, match=message):
            parse_ranges(bad)


def test_instance_reads_give_the_rows_of_instance_detail(synth_db: SynthDb) -> None:
    """The explorer's batched reads assemble exactly what the ``instance_detail`` query gives."""
    db, (run_id, _) = synth_db
    every = ids(db, ALL_SQL, [])[:12]
    with open_store(db, read_only=True) as store:
        found = read_instances(store, run_id, [*every, "no-such-instance"])
        assert [data.instance_id for data in found] == every
        for data in found:
            params = {"run_id": run_id, "instance_id": data.instance_id}
            columns, rows = run_named(store, "instance_detail", params)
            assert [f.name for f in fields(DetailRow)] == columns
            expected = [DetailRow(*row) for row in rows]
            assert repr(data.detail) == repr(expected)  # (repr: NaN equals NaN)
            n_tokens = db_rows(
                db,
                "SELECT count(*) FROM tokens WHERE run_id = ? AND instance_id = ?",
                [run_id, data.instance_id],
            )[0][0]
            assert sum(len(tokens) for tokens in data.tokens.values()) == n_tokens


async def test_the_explorer_opens_on_the_first_instance_with_reasons(
    synth_db: SynthDb, tmp_path: Path
) -> None:
    """``make run`` names an instance with reasons, and the explorer opens there: not on a
    first instance that stopped after JUSTIFY."""
    source, runs = synth_db
    db = tmp_path / "copy.duckdb"
    db.write_bytes(source.read_bytes())
    order = (
        "SELECT i.instance_id FROM instances i JOIN instance_results r USING (instance_id) "
        "WHERE r.run_id = ? ORDER BY i.position"
    )
    first_two = ids(db, order, [runs[0]])[:2]
    with duckdb.connect(str(db)) as con:  # the first instance stopped, the second went on
        con.execute(
            "UPDATE instance_results SET stopped = 'no reasons', n_reasons = 0 "
            "WHERE run_id = ? AND instance_id = ?",
            [runs[0], first_two[0]],
        )
        con.execute(
            "UPDATE instance_results SET stopped = NULL, n_reasons = 2 "
            "WHERE run_id = ? AND instance_id = ?",
            [runs[0], first_two[1]],
        )
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_run(pilot, runs[0])
        assert screen.current == first_two[1]
        assert shown(screen)[0] == first_two[0]  # the list keeps the dataset order
        assert first_two[1] in str(screen.query_one("#ex-input", Static).render())


def test_explorer_snapshot(snap_compare: Any, tmp_path: Path) -> None:
    """On a synthetic store (seeded), so the picture depends on no CPU's llama.cpp kernels."""
    path = tmp_path / "snap.duckdb"
    (run_id,) = build_bench_db(path, n_instances=12, n_runs=1, seed=7)

    async def prepare(pilot: Pilot[Any]) -> None:
        screen = await open_run(pilot, run_id)
        # hide the header and footer: the sub-title shows the run id
        for widget in screen.query("Header, Footer"):
            widget.display = False
        await pilot.pause()

    assert snap_compare(create_app(path), terminal_size=(100, 30), run_before=prepare)


async def test_the_tree_of_a_run_without_haf_shows_its_label_scores_only() -> None:
    from textual.app import App, ComposeResult

    class TreeApp(App[None]):
        def compose(self) -> ComposeResult:
            yield StanceTree(id="tree")

    probabilities = [0.011, 0.008, 0.0004, 0.002]  # toxic, Toxic, non-toxic, Non-toxic
    rows = [
        DetailRow("classify", k, None, "toxic" if k < 2 else "non-toxic", p, None, "stop", 1,
                  None, None, None, None)
        for k, p in enumerate(probabilities)
    ]  # fmt: skip
    app = TreeApp()
    async with app.run_test(size=(100, 20)) as pilot:
        tree = app.query_one(StanceTree)
        tree.show("s01", None, rows)
        await pilot.pause()
        (node,) = tree.root.children
        mass = sum(probabilities)
        assert str(node.label) == (  # a mass under 0.5 is marked, as in the judge view
            f"classify → toxic (p(toxic) {(0.011 + 0.008) / mass:.2f}, label mass {mass:.2f} low)"
        )
        (span,) = node.label.spans
        assert node.label.plain[span.start : span.end] == " low" and span.style == FLAG
        assert len(node.children) == 4 and tree.root.data == NodeRef("classify", 0)
