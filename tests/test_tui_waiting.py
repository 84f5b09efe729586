"""Work asked for in the workbench while another process writes the database (issue 43 §2):
queued and shown where the work is shown — the runs list's work line for a re-score, the
monitor for a run — as "waiting for haf.duckdb — held by PID … (`command`, what it does)…",
whole at 80×24 and 200×50, and started by itself when the file frees; the similarity model is
not loaded while the file is held (the lock is checked first); an error stays readable in
full where the work was shown; C stops the wait, nothing started.

The holder is a real second process holding a real DuckDB file for writing with its note."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import ContentSwitcher, DataTable, Input, Static

from benchmarks.benchdata import build_bench_db
from haf_tui.pipeline.rescore import load_rescore_similarity
from haf_tui.similarity import load_similarity
from haf_tui.store import open_store
from haf_tui.store.derived_runs import children_of
from haf_tui.store.holder import holder_note_path
from haf_tui.tui import app_runs, create_app
from haf_tui.tui.app import HafApp
from haf_tui.tui.screens import run_rescore
from haf_tui.tui.screens.confirm import ConfirmScreen
from haf_tui.tui.screens.home import HomeScreen
from haf_tui.tui.screens.monitor import MonitorScreen
from haf_tui.tui.screens.text_editor import TextEditorScreen
from haf_tui.vocabulary import HafError
from tests.support import settle
from tests.support.rescore_runs import save_tiny_dataset, scripted_run
from tests.support.tiny_similarity import tiny_bi_encoder
from tests.test_tui_width import screen_text

ROOT = Path(__file__).resolve().parent.parent
DEADLINE = 120.0  # (generous: only "never" fails)
SIZES = [(80, 24), (200, 50)]

HOLDER = """\
import sys
from haf_tui.store import open_store

with open_store(sys.argv[1], purpose="run ab12cd: writing"):
    print("holding", flush=True)
    sys.stdin.readline()
print("done", flush=True)
"""
"""A ``haf run`` in miniature: holds the file for writing, with its note, until told."""


@pytest.fixture
def hold() -> Iterator[Callable[[Path], subprocess.Popen[str]]]:
    """Starts a holder of a database on demand; lets it go at the end if still holding."""
    started: list[subprocess.Popen[str]] = []

    def start(db: Path) -> subprocess.Popen[str]:
        script = db.with_name("haf_holder.py")
        script.write_text(HOLDER)
        child = subprocess.Popen(
            [sys.executable, str(script), str(db)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        assert child.stdout is not None and child.stdout.readline().strip() == "holding"
        started.append(child)
        return child

    yield start
    for child in started:
        child.kill()
        child.wait(DEADLINE)


def let_go(child: subprocess.Popen[str]) -> None:
    child.communicate("go\n", timeout=DEADLINE)
    assert child.returncode == 0


async def until(pilot: Pilot[Any], ok: Callable[[], bool], seconds: float = DEADLINE) -> None:
    """Run the app until ``ok()`` (no settle: a waiting worker does not complete)."""
    deadline = time.monotonic() + seconds
    while not ok():
        assert time.monotonic() < deadline, "not within the deadline"
        await pilot.pause(0.1)


def squeezed(text: str) -> str:
    return "".join(text.split())


def whole_on_screen(pilot: Pilot[Any], text: str) -> bool:
    """Whether ``text`` is drawn whole (wrapped as it may be) on the screen now."""
    return squeezed(text) in squeezed("".join(screen_text(pilot.app)))


def work_line(pilot: Pilot[Any]) -> str:
    return str(pilot.app.screen.query_one("#runs-work", Static).render())


@pytest.fixture
def rescorable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, list[str]]:
    """A database with a finished run ``parent``, a second g's folder, and the names the
    re-score loaded g by (the real loader, recorded)."""
    first, second = tiny_bi_encoder(tmp_path, 1), tiny_bi_encoder(tmp_path, 2)
    db = tmp_path / "haf.duckdb"
    with open_store(db) as store:
        save_tiny_dataset(store)
        scripted_run(store, "parent", load_similarity(str(first)))
    loads: list[str] = []
    real = load_rescore_similarity

    def recorded(name: str, *args: Any, **kwargs: Any) -> Any:
        loads.append(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(run_rescore, "load_rescore_similarity", recorded)
    return db, second, loads


async def _ask_rescore(pilot: Pilot[Any], model: str) -> None:
    """``r`` on the run ``parent``, re-score, the model typed, enter: the box closes."""
    home = pilot.app.screen
    assert isinstance(home, HomeScreen)
    table = home.query_one("#runs", DataTable)
    await until(pilot, lambda: "parent" in [str(key.value) for key in table.rows])
    table.move_cursor(row=table.get_row_index("parent"))
    await pilot.press("r")
    await until(pilot, lambda: isinstance(pilot.app.screen, ConfirmScreen))
    await pilot.press("y")
    await until(pilot, lambda: isinstance(pilot.app.screen, TextEditorScreen))
    pilot.app.screen.query_one(Input).value = model
    await pilot.press("enter")
    await until(pilot, lambda: isinstance(pilot.app.screen, HomeScreen))


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "200x50"])
async def test_a_rescore_asked_for_while_another_process_writes_waits_then_starts(
    rescorable: tuple[Path, Path, list[str]],
    hold: Callable[[Path], subprocess.Popen[str]],
    size: tuple[int, int],
) -> None:
    db, second, loads = rescorable
    app = create_app(db)
    app.wait_poll_seconds = 0.2
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        holder = hold(db)
        await _ask_rescore(pilot, str(second))
        held = f"waiting for haf.duckdb — held by PID {holder.pid} (`haf_holder.py "
        await until(pilot, lambda: held in work_line(pilot))
        line = work_line(pilot)
        assert ", run ab12cd: writing, since " in line and line.endswith("C stops waiting")
        assert loads == []  # the lock was checked before g loaded: it is not loaded yet
        await pilot.pause(1.0)  # (polls go on: still waiting, the line stays)
        assert work_line(pilot) == line
        assert whole_on_screen(pilot, line), screen_text(app)
        let_go(holder)
        await until(pilot, lambda: "done as run " in work_line(pilot))
        assert loads == [str(second)]  # (loaded once the file was free)
        assert whole_on_screen(pilot, work_line(pilot))
    with open_store(db, read_only=True) as store:
        (derived,) = children_of(store, "parent")
        assert derived.status == "finished" and derived.similarity_model == str(second)
    assert not holder_note_path(db).exists()


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "200x50"])
async def test_a_rescore_that_fails_after_waiting_keeps_its_whole_reason_on_the_list(
    rescorable: tuple[Path, Path, list[str]],
    hold: Callable[[Path], subprocess.Popen[str]],
    size: tuple[int, int],
) -> None:
    db, _, loads = rescorable
    app = create_app(db)
    app.wait_poll_seconds = 0.2
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        holder = hold(db)
        await _ask_rescore(pilot, "no-such/model")  # (held: the box loads nothing)
        await until(pilot, lambda: "waiting for haf.duckdb" in work_line(pilot))
        let_go(holder)
        await until(pilot, lambda: "failed: " in work_line(pilot))
        assert loads == ["no-such/model"]
        line = work_line(pilot)
        assert line.startswith("re-score of run parent with no-such/model: failed: cannot load")
        assert line.endswith("or pass its local folder"), line  # (whole: not cut)
        assert "huggingface-cli download no-such/model" in line
        home = app.screen
        assert isinstance(home, HomeScreen)
        assert home.query_one("#runs-work").has_class("-failed")
        home.load_runs()  # (the list read again: the line stays)
        await settle(pilot)
        assert work_line(pilot) == line
        assert whole_on_screen(pilot, line), screen_text(app)


async def test_c_stops_a_rescore_waiting_for_the_database(
    rescorable: tuple[Path, Path, list[str]],
    hold: Callable[[Path], subprocess.Popen[str]],
) -> None:
    db, second, loads = rescorable
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        holder = hold(db)
        await _ask_rescore(pilot, str(second))
        await until(pilot, lambda: "waiting for haf.duckdb" in work_line(pilot))
        await pilot.press("C")
        await until(pilot, lambda: "stopped waiting" in work_line(pilot))
        await settle(pilot)
        assert holder.poll() is None and loads == []
    let_go(holder)
    with open_store(db, read_only=True) as store:
        assert children_of(store, "parent") == []


@pytest.fixture
def interrupted(tmp_path: Path) -> tuple[Path, str]:
    db = tmp_path / "haf.duckdb"
    (run_id,) = build_bench_db(db, n_instances=3, n_runs=1, seed=1)
    with open_store(db) as store:
        store.update_run(run_id, status="interrupted")
    return db, run_id


def _stand_ins(monkeypatch: pytest.MonkeyPatch, fail: str = "") -> list[str]:
    """The model and the pipeline as stand-ins: each start (a model load) is recorded
    (``fail``: the start raises it instead)."""
    starts: list[str] = []

    def start(store: Any, request: Any) -> Any:
        starts.append(request.resume_run_id or "new")
        if fail:
            raise HafError(fail)
        models = SimpleNamespace(backend=SimpleNamespace(close=lambda: None))
        run_id = request.resume_run_id or store.list_runs()[0]["run_id"]  # (a new run: stand-in)
        return SimpleNamespace(run_id=run_id, config=None, models=models)

    def execute(store: Any, run_id: str, config: Any, models: Any, **_: Any) -> Any:
        store.update_run(run_id, status="finished")
        return SimpleNamespace(status="finished")

    monkeypatch.setattr(app_runs, "start_or_resume", start)
    monkeypatch.setattr(app_runs, "execute_run", execute)
    return starts


def monitor_note(pilot: Pilot[Any]) -> str:
    return str(pilot.app.screen.query_one("#mon-note", Static).render())


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "200x50"])
async def test_a_run_resumed_while_another_process_writes_waits_on_the_monitor_then_starts(
    interrupted: tuple[Path, str],
    hold: Callable[[Path], subprocess.Popen[str]],
    monkeypatch: pytest.MonkeyPatch,
    size: tuple[int, int],
) -> None:
    db, run_id = interrupted
    starts = _stand_ins(monkeypatch)
    app = create_app(db)
    app.wait_poll_seconds = 0.2
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        holder = hold(db)
        await pilot.press("R")
        await until(pilot, lambda: isinstance(app.screen, MonitorScreen))
        held = f"waiting for haf.duckdb — held by PID {holder.pid} (`haf_holder.py "
        await until(pilot, lambda: held in monitor_note(pilot))
        note = monitor_note(pilot)
        assert note.endswith("It starts by itself when the file frees · C stops waiting")
        assert app.session is not None and app.session.runs[0].status == "waiting"
        assert app.session.active and starts == []
        assert whole_on_screen(pilot, note), screen_text(app)
        stats = str(app.screen.query_one("#mon-stats", Static).render())
        assert stats.startswith("waiting")  # (the run's status, above the note)
        await pilot.pause(1.0)  # (polls go on: still waiting, nothing loaded)
        assert starts == [] and monitor_note(pilot) == note
        let_go(holder)
        await until(pilot, lambda: app.session is not None and not app.session.active)
        assert app.session.runs[0].status == "finished" and app.session.runs[0].reason == ""
        assert starts == [run_id]  # started by itself, once, when the file was free
    with open_store(db, read_only=True) as store:
        assert store.get_run(run_id).status == "finished"


async def test_c_on_the_monitor_stops_a_run_waiting_for_the_database(
    interrupted: tuple[Path, str],
    hold: Callable[[Path], subprocess.Popen[str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    db, run_id = interrupted
    starts = _stand_ins(monkeypatch)
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        holder = hold(db)
        await pilot.press("R")
        await until(pilot, lambda: "waiting for haf.duckdb" in monitor_note(pilot))
        await pilot.press("C")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await until(pilot, lambda: app.session is not None and not app.session.active)
        session = app.session
        assert session is not None and session.runs[0].status == "interrupted" and starts == []
        assert holder.poll() is None
    let_go(holder)
    with open_store(db, read_only=True) as store:
        assert store.get_run(run_id).status == "interrupted"


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "200x50"])
async def test_a_run_that_fails_keeps_its_whole_error_on_the_monitor(
    interrupted: tuple[Path, str],
    monkeypatch: pytest.MonkeyPatch,
    size: tuple[int, int],
) -> None:
    db, _ = interrupted
    reason = (
        "the model file moved: /data/models/some-long-folder-name/Llama-3.2-3B-Instruct-Q4_K_M."
        "gguf is gone since the run started; put it back, or resume with --model NEW_PATH "
        "pointing at the same file (its sha256 is checked) — end of the reason"
    )
    _stand_ins(monkeypatch, fail=reason)
    app = create_app(db)
    assert isinstance(app, HafApp)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("R")
        await until(pilot, lambda: app.session is not None and not app.session.active)
        await settle(pilot)
        await until(pilot, lambda: isinstance(app.screen, MonitorScreen))
        note = monitor_note(pilot)
        assert note.startswith(f"failed: {reason} · R resumes it here"), note
        assert whole_on_screen(pilot, note), screen_text(app)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "200x50"])
async def test_the_wizard_says_the_file_is_held_and_its_start_waits_then_runs(
    interrupted: tuple[Path, str],
    hold: Callable[[Path], subprocess.Popen[str]],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    size: tuple[int, int],
) -> None:
    """Through the wizard's four steps (no model: the calibration probe refused, the run a
    stand-in): the review says who holds the file, ctrl+s queues the run on the monitor."""
    from haf_tui.tui.screens import wizard_reading
    from haf_tui.tui.screens.wizard import WizardScreen

    def no_model(*_: Any, **__: Any) -> Any:
        raise HafError("no model in this test")

    monkeypatch.setenv("HAF_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(wizard_reading, "load_models", no_model)
    starts = _stand_ins(monkeypatch)
    db, _ = interrupted
    app = create_app(db)
    app.wait_poll_seconds = 0.2
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        holder = hold(db)
        await pilot.press("n")
        await settle(pilot)
        wizard = app.screen
        assert isinstance(wizard, WizardScreen)
        await pilot.press("ctrl+n", "ctrl+n", "ctrl+n")
        await settle(pilot)
        assert str(wizard.query_one("#wz-body", ContentSwitcher).current) == "review"
        said = str(wizard.query_one("#wz-error", Static).render())
        assert said.startswith(f"haf.duckdb — held by PID {holder.pid} (`haf_holder.py "), said
        assert said.endswith(": Start queues the run; it starts once the file frees")
        assert whole_on_screen(pilot, said), screen_text(app)
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, MonitorScreen))
        await until(pilot, lambda: f"held by PID {holder.pid}" in monitor_note(pilot))
        assert starts == []
        let_go(holder)
        await until(pilot, lambda: app.session is not None and not app.session.active)
        session = app.session
        assert len(starts) == 1 and session is not None and session.runs[0].status == "finished"
