"""Readable at 80 columns and at 200×50 (issue 25 §3): the runs list shows the columns that
matter first (long values cut with "…", ``+`` shows every column), ``end`` moves its cursor to
the last run, and the monitor's jobs table, the wizard's model table and the comparison's
instance panel fit the screen instead of losing their last columns at its edge. Read from the
screen as drawn."""

from __future__ import annotations

import io
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from textual.app import App

from benchmarks.benchdata import build_bench_db
from haf_tui.inference.gguf import GGUFInfo
from haf_tui.inference.model_catalog import ModelEntry
from haf_tui.pipeline.runs import RunRequest
from haf_tui.tui import create_app
from haf_tui.tui.app import HafApp
from haf_tui.tui.live import LiveRun, LiveSession, RunJob
from haf_tui.tui.screens.home import HomeScreen
from haf_tui.tui.screens.monitor import MonitorScreen
from haf_tui.tui.screens.text_editor import TextEditorScreen
from haf_tui.tui.widgets.fit_columns import FitColumn, elide, fit_widths
from haf_tui.tui.widgets.model_picker import ModelPicker
from haf_tui.tui.widgets.panel_view import PanelView
from tests.support import settle
from tests.support.snapshot_store import snapshot_store

SIZES = [(80, 24), (200, 50)]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    path = tmp_path_factory.mktemp("width") / "template.duckdb"
    return path, snapshot_store(path)


@pytest.fixture
def synthetic(tmp_path: Path, template: tuple[Path, list[str]]) -> tuple[Path, list[str]]:
    path = tmp_path / "haf.duckdb"
    shutil.copyfile(template[0], path)
    return path, template[1]


def screen_text(app: App[Any]) -> list[str]:
    """The lines of the screen as drawn now (what a screenshot shows, as text)."""
    width, height = app.size
    console = Console(
        width=width, height=height, file=io.StringIO(), record=True, legacy_windows=False
    )
    console.print(app.screen._compositor.render_update(full=True))
    return console.export_text().splitlines()


# ---------------------------------------------------------------- the fitting


def test_columns_give_way_in_rank_order_and_values_are_cut_with_an_ellipsis() -> None:
    columns = [
        FitColumn("run", min_width=10, rank=0, cut_middle=True),
        FitColumn("status", rank=1),
        FitColumn("model", min_width=10, rank=2),
        FitColumn("RS", rank=3),
    ]
    rows = [("20260102-030405-ab12", "interrupted", "Llama-3.2-3B-Instruct-Q4_K_M", "0.313")]
    assert fit_widths(columns, rows, 200) == [20, 11, 28, 5]  # everything, whole
    assert fit_widths(columns, rows, 44) == [10, 11, 10, 5]  # cut (2 cells' padding each)
    assert fit_widths(columns, rows, 48) == [12, 11, 12, 5]  # the spare shared out
    assert fit_widths(columns, rows, 43) == [13, 11, 13, None]  # RS goes first
    assert fit_widths(columns, rows, 5) == [10, None, None, None]  # the run always shows
    assert elide("20260102-030405-ab12", 10, middle=True) == "2026…-ab12"
    assert elide("Llama-3.2-3B-Instruct", 10) == "Llama-3.2…"


# ---------------------------------------------------------------- the runs list


async def test_the_runs_list_at_80x24_shows_every_column_that_matters(
    synthetic: tuple[Path, list[str]],
) -> None:
    db, _ = synthetic
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        lines = screen_text(app)
        header = next(line for line in lines if line.lstrip().startswith("run "))
        assert header.split() == [  # (started, the first to give way: the list is newest first)
            "run",
            "status",
            "suites",
            "model",
            "dataset",
            "done",
            "SoS",
            "RS",
        ]
        first = next(line for line in lines if "0.313" in line)  # run1: its RS
        assert all(value in first for value in ("finished", " haf ", "12/12", "0.538"))
        assert "Llama-3.2" in first and "…" in first  # the model cut, not widening the table
        assert all(len(line.rstrip()) <= 80 for line in lines)


async def test_plus_shows_every_column_in_full_and_again_fits_them(
    synthetic: tuple[Path, list[str]],
) -> None:
    db, _ = synthetic
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert not any("Q4_K_M.gguf" in line for line in screen_text(app))
        await pilot.press("plus")
        await settle(pilot)
        assert any("Llama-3.2-3B-Instruct-Q4_K_M.gguf" in line for line in screen_text(app))
        await pilot.press("plus")
        await settle(pilot)
        assert any("0.313" in line for line in screen_text(app))


async def test_the_runs_list_shows_more_at_200_columns(synthetic: tuple[Path, list[str]]) -> None:
    db, _ = synthetic
    app = create_app(db)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        row = next(line for line in screen_text(app) if "0.313" in line)
        for value in ("bench-s7-run1", "Llama-3.2-3B-Instruct-Q4_K_M.gguf", "2026-01-02 03:04"):
            assert value in row


async def test_end_moves_the_cursor_to_the_last_run_and_l_labels_that_one(
    synthetic: tuple[Path, list[str]],
) -> None:
    db, run_ids = synthetic
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        home = app.screen
        assert isinstance(home, HomeScreen)
        first = home.selected_run()
        await pilot.press("end")
        await settle(pilot)
        last = home.selected_run()
        assert last != first and last in run_ids
        await pilot.press("L")
        await settle(pilot)
        editor = app.screen
        assert isinstance(editor, TextEditorScreen) and editor.title_text == f"Label run {last}"
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("home")
        assert home.selected_run() == first


# ---------------------------------------------------------------- monitor and wizard


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_monitor_header_keeps_status_and_progress(
    synthetic: tuple[Path, list[str]], size: tuple[int, int]
) -> None:
    db, run_ids = synthetic
    app = create_app(db)
    assert isinstance(app, HafApp)
    label = "Llama-3.2-3B-Instruct-Q4_K_M-with-a-long-name · haf-paper-samples-and-more"
    if size[0] > 80:
        label = " · ".join([label] * 3)
    live = LiveRun(
        label,
        run_id="20260102-030405-ab12",
        status="running",
        instances_done=3,
        instances_total=12,
        started=time.monotonic(),
    )
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        app.session = LiveSession([RunJob(label, RunRequest(resume_run_id=run_ids[0]))], [live])
        app.push_screen(MonitorScreen())
        await settle(pilot)
        lines = screen_text(app)
        header = next(line for line in lines if line.lstrip().startswith("model "))
        assert header.split()[-3:] == ["status", "instances", "elapsed"]
        row = lines[lines.index(header) + 1]
        assert "running" in row and "3/12" in row and "…" in row


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_wizard_model_step_keeps_the_quantisation_and_download(
    synthetic: tuple[Path, list[str]],
    size: tuple[int, int],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HAF_HOME", str(tmp_path))
    monkeypatch.delenv("HAF_MODELS_PATH", raising=False)
    db, _ = synthetic
    name = "Meta-Llama-3.1-8B-Instruct-abliterated-long-finetune-name" * (size[0] // 60)
    path = tmp_path / f"{name}.Q4_K_M.gguf"
    info = GGUFInfo(path, 4_920_000_000, 3, 292, "llama", name, "Q4_K_M", 131072, 32, "{{x}}")
    app = create_app(db)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        picker = app.screen.query_one(ModelPicker)
        picker.set_entries([ModelEntry(path, info)])
        await settle(pilot)
        lines = screen_text(app)
        header = next(line for line in lines if line.lstrip().startswith("use "))
        assert header.split() == ["use", "file", "size", "arch", "quant", "ctx", "template"]
        row = lines[lines.index(header) + 1]
        assert "Q4_K_M " in row and "4.6 GiB" in row and "131072" in row
        assert any("Download" in line for line in lines)


# ---------------------------------------------------------------- compare, panel 2


@pytest.fixture(scope="module")
def four_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("width4") / "template.duckdb"
    build_bench_db(path, n_instances=6, n_runs=4, seed=7)
    return path


@pytest.mark.parametrize("size", [(200, 50), (200, 60)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_compare_panel_2_keeps_every_runs_rn_column_within_the_width(
    four_runs: Path, tmp_path: Path, size: tuple[int, int]
) -> None:
    """(At 80 columns two runs stay side by side and the pane scrolls sideways:
    test_tui_compare.)"""
    db = tmp_path / "haf.duckdb"
    shutil.copyfile(four_runs, db)
    app = create_app(db)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        await pilot.press("2")
        await settle(pilot)
        view = app.screen.query_one("#cmp-instance-view", PanelView)
        assert view.virtual_size.width <= view.scrollable_content_region.width  # nothing cut
        text = view.text()
        assert all(f"{letter} · " in text for letter in "ABCD")
        headers = [
            line.split() for line in text.splitlines() if line.split()[:2] == ["#", "reason"]
        ]
        assert sum(line.count("RN") for line in headers) == 4  # each run's reasons: SoS RS RN
