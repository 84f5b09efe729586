"""The workbench with damaged side files (issue 33 §3), through its keys: the SQL screen opened
and closed over truncated buffers keeps them set aside and says so once; a query runs over a
history with a bad byte; the runs list loads over a pending queue that is a FIFO (no freeze)
and says so once; ``n`` opens the wizard over answers with a bad key."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable

from benchmarks.benchdata import build_bench_db
from haf_tui.store import pending_annotations
from haf_tui.tui import create_app, sql_history
from haf_tui.tui.screens.home import HomeScreen
from haf_tui.tui.screens.wizard import WizardScreen
from tests.support import settle, until
from tests.test_tui_sql_workbench import editor_of, open_sql, results


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HAF_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(pending_annotations, "_read_cache", {})
    monkeypatch.setattr(pending_annotations, "_notices", [])
    (tmp_path / "home").mkdir()
    path = tmp_path / "haf.duckdb"
    build_bench_db(path, n_instances=4, n_runs=1, seed=3)
    return path


def notices(app: Any, word: str) -> list[str]:
    return [str(n.message) for n in app._notifications if word in str(n.message)]


async def test_the_sql_screen_over_truncated_buffers_and_a_bad_history_byte(db: Path) -> None:
    folder = sql_history.state_dir()
    folder.mkdir(parents=True)
    whole = sql_history.SqlBuffers(
        buffers=[sql_history.SqlBuffer(text=f"SELECT {n}") for n in range(3)]
    ).model_dump_json()
    (folder / sql_history.BUFFERS_FILE).write_text(whole[:40])
    (folder / sql_history.HISTORY_FILE).write_bytes(b'{"sql": "\xff"}\n')
    app = create_app(db)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_sql(pilot)
        (said,) = notices(app, "buffers")
        assert "set aside as buffers.json.unreadable-" in said
        editor_of(screen).load_text("SELECT 42 AS answer")
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert results(screen).row_count == 1  # (the bad byte made every query fail)
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, HomeScreen)
    (aside,) = folder.glob("buffers.json.unreadable-*")
    assert aside.read_text() == whole[:40]
    assert json.loads((folder / sql_history.BUFFERS_FILE).read_text())["buffers"]


async def test_the_runs_list_loads_over_a_fifo_pending_queue(db: Path) -> None:
    os.mkfifo(pending_annotations.pending_path())
    app = create_app(db)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        # (the queue is tried every 3 s: waited for, not 3.5 s, which a loaded machine overran)
        await until(pilot, lambda: bool(notices(app, "pending annotations")))
        await settle(pilot)
        assert isinstance(app.screen, HomeScreen)
        assert app.screen.query_one("#runs", DataTable).row_count == 1
        assert len(notices(app, "pending annotations")) == 1


async def test_n_opens_the_wizard_over_answers_with_a_bad_key(db: Path) -> None:
    answers = Path(os.environ["HAF_HOME"]) / "wizard-answers.json"
    answers.write_text(json.dumps({"models": [], "dataset": {}, "settings": {"bad key!": "x"}}))
    app = create_app(db)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        assert isinstance(app.screen, WizardScreen)
        assert len(notices(app, "wizard's last answers")) == 1
    assert not answers.exists() and len(list(answers.parent.glob("wizard-answers.json.*"))) == 1
