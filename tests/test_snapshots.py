"""Every screen and metric panel at 80×24 and 200×60, in the dark and the light theme, and at
160×48 in the dark one, drawn from a seeded synthetic store (benchmarks.benchdata): the
pictures depend on no model and no CPU's llama.cpp kernels. ``pytest --snapshot-update``
redraws them after a deliberate change."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import TextArea

from haf_tui.tui import create_app
from haf_tui.tui.screens.explorer import ExplorerScreen
from haf_tui.tui.screens.metrics import MetricsScreen
from haf_tui.tui.widgets.metric_panels import panel_tabs
from haf_tui.tui.widgets.model_picker import ModelPicker
from tests.support import settle
from tests.support.snapshot_store import snapshot_store

SIZES = {"80x24": (80, 24), "200x60": (200, 60), "160x48": (160, 48)}
THEMES = {"dark": "textual-dark", "light": "textual-light"}
SCREENS = [
    "home",
    "wizard",
    "explorer",
    "sql",
    "help",
    "compare",
    *(f"metrics-{p}" for p, _ in panel_tabs()),
]


@pytest.fixture(scope="module")
def synthetic_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    path = tmp_path_factory.mktemp("snapshots") / "template.duckdb"
    return path, snapshot_store(path)[0]


async def _open(pilot: Pilot[Any], screen: str, run_id: str, theme: str) -> None:
    pilot.app.theme = theme
    await settle(pilot)
    if screen == "wizard":
        await pilot.press("n")
        await settle(pilot)
        picker = pilot.app.screen.query_one(ModelPicker)
        # the size of the assembled file and the folders differ between machines: keep the row
        picker.entries = picker.entries[:1]
        picker._fill()
    elif screen == "explorer":
        pilot.app.push_screen(ExplorerScreen(run_id))
    elif screen == "sql":
        await pilot.press("s")
        await settle(pilot)
        # a blinking cursor would make the picture depend on when it is taken
        pilot.app.screen.query_one("#sql-editor", TextArea).cursor_blink = False
    elif screen == "help":
        await pilot.press("question_mark")
    elif screen == "compare":
        await pilot.press("c")
    elif screen.startswith("metrics-"):
        pilot.app.push_screen(MetricsScreen(panel=screen.removeprefix("metrics-")))
    await settle(pilot)
    await pilot.pause()


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("size", ["80x24", "200x60"])
@pytest.mark.parametrize("screen", SCREENS)
def test_every_screen(
    snap_compare: Any,
    synthetic_db: tuple[Path, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    screen: str,
    size: str,
    theme: str,
) -> None:
    assert _snapshot(snap_compare, synthetic_db, tmp_path, monkeypatch, screen, size, theme)


@pytest.mark.parametrize("screen", SCREENS)
def test_every_screen_at_160x48(
    snap_compare: Any,
    synthetic_db: tuple[Path, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    screen: str,
) -> None:
    assert _snapshot(snap_compare, synthetic_db, tmp_path, monkeypatch, screen, "160x48", "dark")


def _snapshot(
    snap_compare: Any,
    synthetic_db: tuple[Path, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    screen: str,
    size: str,
    theme: str,
) -> bool:
    # the model folders hold only what this test puts there (none): the embedded model
    monkeypatch.setenv("HAF_HOME", str(tmp_path))
    monkeypatch.delenv("HAF_MODELS_PATH", raising=False)
    monkeypatch.chdir(tmp_path)
    template, run_id = synthetic_db
    db = tmp_path / "haf.duckdb"
    shutil.copyfile(template, db)

    async def prepare(pilot: Pilot[Any]) -> None:
        await _open(pilot, screen, run_id, THEMES[theme])

    return bool(snap_compare(create_app(db), terminal_size=SIZES[size], run_before=prepare))
