"""Every panel readable at 80×24 (issue 18 §5): the metric panels scroll sideways instead of
being cut at the screen's edge, a cell or tree row cut with "…" opens in full, and the
monitor's log wraps at its own width. On the seeded synthetic store (benchmarks.benchdata)."""

from __future__ import annotations

import shutil
from collections import deque
from pathlib import Path
from typing import Any

import duckdb
import pytest
from textual.geometry import Region
from textual.pilot import Pilot

from benchmarks.benchdata import build_bench_db
from haf_tui.pipeline.runs import RunRequest
from haf_tui.reports import format_value
from haf_tui.store import open_store
from haf_tui.tui import create_app
from haf_tui.tui.app import HafApp
from haf_tui.tui.live import LiveRun, LiveSession, RunJob
from haf_tui.tui.method_parts import NodeRef
from haf_tui.tui.metrics_data import load_metrics_data
from haf_tui.tui.screens.explorer import ExplorerScreen
from haf_tui.tui.screens.full_value import FullValueScreen
from haf_tui.tui.screens.metrics import MetricsScreen
from haf_tui.tui.screens.monitor import MonitorScreen
from haf_tui.tui.widgets.metric_panels import render_panel
from haf_tui.tui.widgets.panel_view import PanelView, render_strips
from haf_tui.tui.widgets.stance_tree import StanceTree
from haf_tui.tui.widgets.wrapped_log import WrappedLog
from tests.support import settle

LONG_TAIL = " because " + "it keeps piling one insult on another, " * 6 + "end of reason."


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    path = tmp_path_factory.mktemp("narrow") / "template.duckdb"
    return path, build_bench_db(path, n_instances=12, n_runs=2, seed=7)


@pytest.fixture
def synthetic(tmp_path: Path, template: tuple[Path, list[str]]) -> tuple[Path, list[str]]:
    path = tmp_path / "haf.duckdb"
    shutil.copyfile(template[0], path)
    return path, template[1]


def rows(db: Path, sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql, params).fetchall()


def visible(view: PanelView) -> list[str]:
    """The panel's lines as the screen shows them now (cut to the view, at its scroll)."""
    region = view.scrollable_content_region
    view.render_lines(Region(0, 0, region.width, region.height))  # (looks the style up)
    return [view.render_line(y).text for y in range(region.height)]


async def open_metrics(pilot: Pilot[Any], panel: str) -> tuple[MetricsScreen, PanelView]:
    await settle(pilot)
    screen = MetricsScreen(panel=panel)
    pilot.app.push_screen(screen)
    await settle(pilot)
    return screen, screen.query_one(f"#mx-body-{panel}", PanelView)


# ---------------------------------------------------------------- metric panels


async def test_table4_scrolls_right_to_its_last_column_at_80x24(
    synthetic: tuple[Path, list[str]],
) -> None:
    db, run_ids = synthetic
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        screen, view = await open_metrics(pilot, "table4")
        width = view.scrollable_content_region.width
        assert view.virtual_size.width > width  # drawn at its natural width, not squeezed
        top = next(i for i, line in enumerate(view.lines) if line.text.startswith("┏"))
        assert len(view.lines[top].text.rstrip()) > width
        assert not visible(view)[top].rstrip().endswith("┓")  # the last column is cut off
        await pilot.press("shift+right", "shift+right", "shift+right")
        await settle(pilot)
        assert view.scroll_x > 0
        shown = visible(view)
        assert shown[top].rstrip().endswith("┓")  # the rightmost column, whole
        header = shown[top + 1].rstrip()
        assert header.endswith("┃") and header.split("┃")[-2].strip() == "#4"
        # its cells are the database's: the last run's RN instance mean
        expected = rows(
            db,
            "SELECT avg(value) FROM instance_metrics WHERE run_id = ? AND metric = 'rn' "
            "AND NOT isnan(value)",
            [screen.chosen_runs()[0].run_id],
        )[0][0]
        score = next(i for i, line in enumerate(view.lines) if line.text.startswith("│ score "))
        assert shown[score].rstrip(" │").endswith(format_value(expected))
        assert {run.run_id for run in screen.chosen_runs()} == set(run_ids)
        await pilot.press("shift+left", "shift+left", "shift+left")
        assert view.scroll_x == 0


async def test_arrow_keys_scroll_the_focused_panel_sideways(
    synthetic: tuple[Path, list[str]],
) -> None:
    db, _ = synthetic
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        _, view = await open_metrics(pilot, "table4")
        view.focus()
        await pilot.press("right", "right", "right")
        await settle(pilot)
        column = view.scroll_x
        assert column > 0
        await pilot.press("pagedown")  # (further down the panel, at the same column)
        await settle(pilot)
        assert view.scroll_x == column and view.scroll_y > 0
        await pilot.press("left", "left", "left")
        await settle(pilot)
        assert view.scroll_x == 0


async def test_enter_shows_every_value_of_the_panel_in_full(
    synthetic: tuple[Path, list[str]],
) -> None:
    db, run_ids = synthetic
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_metrics(pilot, "table4")
        await pilot.press("enter")
        await settle(pilot)
        modal = app.screen
        assert isinstance(modal, FullValueScreen)
        assert "Table 4" in modal.title_text
        blocks = modal.value.split("-[ table4 · row ")[1:]
        for run_id in run_ids:  # each run's four rows: RS and RN under both pooling rules
            mine = [block for block in blocks if f"run       │ {run_id}" in block]
            assert len(mine) == 4
        n_rs = rows(
            db,
            "SELECT count(*) FROM reason_metrics WHERE run_id = ? AND metric = 'rs' "
            "AND NOT isnan(value)",
            [run_ids[0]],
        )[0][0]
        assert any(f"score n   │ {n_rs}" in block for block in blocks)
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, MetricsScreen)


@pytest.mark.parametrize("width", [76, 120, 160])
def test_charts_side_by_side_are_neither_cut_nor_squeezed(
    template: tuple[Path, list[str]], width: int
) -> None:
    """A long note under a histogram wraps instead of widening its column (which cut the
    other column's "33%" to "3…" at 200×60), and a stance table is never squeezed: the runs
    stand side by side only as far as their tables fit."""
    with open_store(template[0], read_only=True) as store:
        data = load_metrics_data(store)
    for pane in ("figure2", "distributions", "stances"):
        lines = [
            strip.text.rstrip()
            for strip in render_strips(render_panel(pane, data, data.runs, width=width), width)
        ]
        assert not any("…" in line for line in lines), (pane, width)
        assert max(len(line) for line in lines) <= width, (pane, width)


# ---------------------------------------------------------------- the explorer's tree


async def test_a_long_tree_row_opens_in_full(synthetic: tuple[Path, list[str]]) -> None:
    db, run_ids = synthetic
    with duckdb.connect(str(db)) as con:  # every first JUSTIFY reason of the run: long
        con.execute(
            "UPDATE reasons SET text = text || ? WHERE run_id = ? AND stage = 'justify' "
            "AND reason_index = 0",
            [LONG_TAIL, run_ids[0]],
        )
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.push_screen(ExplorerScreen(run_ids[0]))
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ExplorerScreen)
        tree = screen.query_one("#ex-tree", StanceTree)
        tree.focus()
        await pilot.press("down", "down")  # root → JUSTIFY → its first reason
        await settle(pilot)
        node = tree.cursor_node
        assert node is not None and node.data == NodeRef("justify", -1, 0)
        assert "…" in str(node.label) and LONG_TAIL.strip() not in str(node.label)
        await pilot.press("enter")
        await settle(pilot)
        modal = app.screen
        assert isinstance(modal, FullValueScreen)
        (text,) = rows(
            db,
            "SELECT text FROM reasons WHERE run_id = ? AND instance_id = ? AND stage = "
            "'justify' AND reason_index = 0",
            [run_ids[0], screen.current],
        )[0]
        assert " ".join(text.split()) in modal.value and modal.value.startswith("r1 ")
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen and tree.cursor_node is node


# ---------------------------------------------------------------- the monitor's log

LOG_LINES = [
    "03:04:05 run bench-s7-run1 started: 12 instances, 2 suites, seed 7",
    "03:04:06 instance s001: toxic, 3 reasons; internal NO, external YES; "
    + "a long message that goes on and on " * 4
    + "(end)",
    "03:04:07 finished",
]


def live_session(run_id: str) -> LiveSession:
    """A finished run of this app, as the monitor draws it (fixed lines: no clock)."""
    live = LiveRun(
        "Llama-3.2-3B-Instruct-Q4_K_M · bench-synthetic",
        run_id=run_id,
        status="finished",
        instances_done=12,
        instances_total=12,
        generations_done={"justify": 12, "internal": 11, "external": 11},
        generations_expected={"justify": 12, "internal": 11, "external": 11},
        generations_planned={"justify": 12},  # (the follow-ups: estimated)
        current="s012 · external",
        output="NO. The text gives no further reason.",
        log=deque(LOG_LINES),
        log_total=len(LOG_LINES),
    )
    return LiveSession([RunJob(live.label, RunRequest(resume_run_id=run_id))], [live])


def log_fits(log: WrappedLog) -> bool:
    """Every line within the log's width (nothing to scroll sideways to)."""
    width = log.scrollable_content_region.width
    return log.virtual_size.width <= width and all(s.cell_length <= width for s in log.lines)


async def test_the_monitor_log_wraps_at_its_width_and_again_on_resize(
    synthetic: tuple[Path, list[str]],
) -> None:
    db, run_ids = synthetic
    app = create_app(db)
    assert isinstance(app, HafApp)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.session = live_session(run_ids[0])
        app.push_screen(MonitorScreen())
        await settle(pilot)
        log = app.screen.query_one("#mon-log", WrappedLog)
        assert log_fits(log)
        joined = " ".join(strip.text.strip() for strip in log.lines)
        assert all(" ".join(line.split()) in " ".join(joined.split()) for line in LOG_LINES)
        narrow = log.scrollable_content_region.width
        assert len(log.lines) > len(LOG_LINES)  # the long line wrapped
        await pilot.resize_terminal(200, 50)
        await settle(pilot)
        assert log.scrollable_content_region.width > narrow
        assert log_fits(log) and max(s.cell_length for s in log.lines) > narrow  # wrapped again
        assert rows(db, "SELECT status FROM runs WHERE run_id = ?", [run_ids[0]])[0][0] == (
            "finished"
        )
