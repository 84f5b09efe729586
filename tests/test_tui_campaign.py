"""The workbench's campaigns screen: a campaign as a grid of models × datasets (Pilot and a
snapshot, on a real DuckDB file with claimed cells and their runs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.widgets import DataTable, Static

from haf_tui.campaign import load_grid
from haf_tui.store import RunRecord, Store, open_store
from haf_tui.store.campaigns import ClaimedCell, claim_cell, save_campaign
from haf_tui.tui import create_app
from haf_tui.tui.campaign_data import cell_text, duration_text
from haf_tui.tui.screens.campaign import NO_CAMPAIGNS, CampaignScreen
from haf_tui.tui.screens.compare import CompareScreen
from haf_tui.tui.screens.home import HomeScreen
from tests.support import settle

GRID = """
name = "paper"
models = ["embedded", {label = "other", path = "other.gguf"}]
datasets = ["sample", {label = "again", name = "sample"}]
suites = ["haf"]
limit = 4
"""


def _run(store: Store, run_id: str, status: str, seconds: float) -> None:
    store.create_run(
        RunRecord(
            run_id=run_id,
            status=status,
            dataset_id="builtin-sample",
            n_planned=4,
            config_json="{}",
            model_file="m.gguf",
            similarity_model="s",
            similarity_kind="bi-encoder",
            seconds_running=seconds,
        )
    )


def _campaign_db(tmp_path: Path, *, keep_grid: bool = True) -> Path:
    (tmp_path / "other.gguf").write_bytes(b"GGUF")  # (a model path the grid can name)
    grid_path = tmp_path / "grid.toml"
    grid_path.write_text(GRID, encoding="utf-8")
    grid = load_grid(grid_path)
    db = tmp_path / "c.duckdb"
    with open_store(db) as store:
        save_campaign(store, grid.name, str(grid_path))
        claim_cell(store, grid.name, ClaimedCell("embedded", "sample", "run-a", "f", {}, 0))
        _run(store, "run-a", "finished", 12.0)
        claim_cell(store, grid.name, ClaimedCell("embedded", "again", "run-b", "f", {}, 1))
        _run(store, "run-b", "interrupted", 0.0)
    if not keep_grid:
        grid_path.unlink()
    return db


def _grid_rows(app: Any) -> list[list[str]]:
    table = app.screen.query_one("#campaign-grid", DataTable)
    return [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]


async def test_k_shows_the_campaign_as_a_grid_and_enter_opens_a_cells_run(
    tmp_path: Path,
) -> None:
    app = create_app(_campaign_db(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("k")
        await settle(pilot)
        assert isinstance(app.screen, CampaignScreen)
        table = app.screen.query_one("#campaign-grid", DataTable)
        assert [str(c.label) for c in table.columns.values()] == ["model", "sample", "again"]
        # run-b has no pace of its own: its ETA is its model's finished cells' (run-a: 0 done)
        assert _grid_rows(app) == [
            ["embedded", "✓ 0/4", "‖ 0/4"],
            ["other", "· 0/4", "· 0/4"],
        ]
        line = str(app.screen.query_one("#campaign-line", Static).render())
        assert "campaign paper: 1/4 cells finished" in line
        cell = str(app.screen.query_one("#campaign-cell", Static).render())
        assert "embedded × sample: run run-a, finished" in cell
        await pilot.press("down")
        await settle(pilot)
        cell = str(app.screen.query_one("#campaign-cell", Static).render())
        assert "other × sample: pending" in cell
        await pilot.press("enter")  # (a pending cell: a warning, no screen)
        await settle(pilot)
        assert isinstance(app.screen, CampaignScreen)
        assert any("no run yet" in n.message for n in app._notifications)
        await pilot.press("c")
        await settle(pilot)
        assert isinstance(app.screen, CompareScreen)
        assert app.screen.initial_run_ids == ["run-a", "run-b"]
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, HomeScreen)


async def test_a_campaign_whose_grid_file_is_gone_shows_its_cells_made_so_far(
    tmp_path: Path,
) -> None:
    app = create_app(_campaign_db(tmp_path, keep_grid=False))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("k")
        await settle(pilot)
        assert _grid_rows(app) == [["embedded", "✓ 0/4", "‖ 0/4"]]
        line = str(app.screen.query_one("#campaign-line", Static).render())
        assert "does not read" in line and "cells made so far" in line


async def test_no_campaigns_says_how_to_start_one(tmp_path: Path) -> None:
    db = tmp_path / "e.duckdb"
    with open_store(db):
        pass
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("k")
        await settle(pilot)
        line = str(app.screen.query_one("#campaign-line", Static).render())
        assert line == NO_CAMPAIGNS


def test_cell_texts() -> None:
    from haf_tui.campaign import CellState

    running = CellState("m", "d", 0, "r", "running", 2, 10, 5, 20.0, eta_seconds=200.0)
    assert cell_text(running) == "▶ 2/10 3m20s"
    assert cell_text(None) == ""
    assert [duration_text(s) for s in (5, 65, 3600 + 300)] == ["5s", "1m05s", "1h05m"]


def test_campaign_grid_snapshot_at_80x24(snap_compare: Any, tmp_path: Path) -> None:
    db = _campaign_db(tmp_path)

    async def open_grid(pilot: Any) -> None:
        await settle(pilot)
        await pilot.press("k")
        await settle(pilot)

    assert snap_compare(create_app(db), terminal_size=(80, 24), run_before=open_grid)
