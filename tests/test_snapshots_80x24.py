"""The panels issue 18 §5 makes readable, at 80×24 and 160×48, on a seeded synthetic store
(benchmarks.benchdata): the metric panels that draw wide tables and charts (also scrolled to
the right), the monitor's log, the explorer and a tree row opened in full. No clock and no
random: fixed dates, a fixed live run, no blinking cursor. ``pytest --snapshot-update -k NAME``
redraws one after a deliberate change."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import duckdb
import pytest
from textual.pilot import Pilot

from haf_tui.tui import create_app
from haf_tui.tui.app import HafApp
from haf_tui.tui.screens.explorer import ExplorerScreen
from haf_tui.tui.screens.metrics import MetricsScreen
from haf_tui.tui.screens.monitor import MonitorScreen
from haf_tui.tui.widgets.stance_tree import StanceTree
from tests.support import settle
from tests.support.snapshot_store import snapshot_store
from tests.test_tui_80x24 import LONG_TAIL, live_session

SIZES = {"80x24": (80, 24), "160x48": (160, 48)}
VIEWS = [
    "metrics-table4",
    "metrics-table4-right",
    "metrics-figure2",
    "metrics-distributions",
    "metrics-stances",
    "monitor",
    "explorer",
    "explorer-full-row",
]


@pytest.fixture(scope="module")
def synthetic_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    path = tmp_path_factory.mktemp("snapshots-80x24") / "template.duckdb"
    run_ids = snapshot_store(path)
    with duckdb.connect(str(path)) as con:  # a reason too long for the tree's row
        con.execute(
            "UPDATE reasons SET text = text || ? WHERE run_id = ? AND stage = 'justify' "
            "AND reason_index = 0",
            [LONG_TAIL, run_ids[0]],
        )
    return path, run_ids[0]


async def _open(pilot: Pilot[Any], view: str, run_id: str) -> None:
    app = pilot.app
    app.theme = "textual-dark"
    await settle(pilot)
    if view.startswith("metrics-"):
        panel = view.removeprefix("metrics-").removesuffix("-right")
        app.push_screen(MetricsScreen(panel=panel))
        await settle(pilot)
        if view.endswith("-right"):
            await pilot.press("shift+right", "shift+right", "shift+right")
    elif view == "monitor":
        assert isinstance(app, HafApp)
        app.session = live_session(run_id)
        app.push_screen(MonitorScreen())
    else:
        app.push_screen(ExplorerScreen(run_id))
        await settle(pilot)
        if view == "explorer-full-row":
            app.screen.query_one("#ex-tree", StanceTree).focus()
            await pilot.press("down", "down", "enter")
    await settle(pilot)
    await pilot.pause()


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("view", VIEWS)
def test_readable_panels(
    snap_compare: Any,
    synthetic_db: tuple[Path, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    view: str,
    size: str,
) -> None:
    monkeypatch.setenv("HAF_HOME", str(tmp_path))
    monkeypatch.delenv("HAF_MODELS_PATH", raising=False)
    monkeypatch.chdir(tmp_path)
    template, run_id = synthetic_db
    db = tmp_path / "haf.duckdb"
    shutil.copyfile(template, db)

    async def prepare(pilot: Pilot[Any]) -> None:
        await _open(pilot, view, run_id)

    assert snap_compare(create_app(db), terminal_size=SIZES[size], run_before=prepare)
