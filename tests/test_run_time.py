"""Progress that tells the truth (issue 43 §3): a run's running time counts every session (a
killed one's up to its last stored generation), a resumed run's pace and ETA are those of its
sessions, and a run another process writes is shown from its stored rows: totals from its
stored generations (no bar stuck at 100 % with "64/≥64"), its elapsed time, rate and ETA.
Arithmetic on hand-set numbers; the store real DuckDB; the other process a real one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from textual.geometry import Region

import haf_tui.pipeline.runner as runner_module
from haf_tui.config import DecodingSettings, RunConfig
from haf_tui.pipeline.events import ProgressEvent
from haf_tui.pipeline.models import LoadedModels
from haf_tui.pipeline.runner import HafRunner
from haf_tui.pipeline.runs import RunRequest, start_or_resume
from haf_tui.pipeline.totals import InstanceCounts, stored_totals
from haf_tui.store import Store, open_store
from haf_tui.store.records import RunRecord
from haf_tui.tui import create_app
from haf_tui.tui.live import LiveRun, StoredProgress
from haf_tui.tui.screens.monitor import MonitorScreen
from haf_tui.tui.widgets.stage_progress import pace_text
from tests.support import settle, static_text
from tests.support.held_run import wait_until_held
from tests.support.rescore_runs import save_tiny_dataset, scripted_run
from tests.test_scheduler import FlatSimilarity, ScriptedBackend

ROOT = Path(__file__).resolve().parents[1]


# -- the arithmetic -----------------------------------------------------------------------------


def test_a_resumed_run_s_elapsed_time_adds_its_earlier_sessions_and_paces_this_one() -> None:
    live = LiveRun("m", status="running", seconds_before=1500.0, started=0.0, ended=100.0)
    live.instances_total, live.done_at_start, live.instances_done = 20, 10, 15
    assert live.total_elapsed() == 1600.0  # (28 min before, not the session's 100 s)
    assert live.eta() == pytest.approx(100.0)  # 5 left at this session's 20 s each
    text = pace_text(live).plain
    assert "elapsed 26 min 40 s (1 min 40 s since the resume)" in text, text


def _stored(status: str, seconds: float, since: float) -> StoredProgress:
    return StoredProgress(
        "r", status, 2, 9, {"judge": 22}, {"judge": 46}, {"judge": 46}, (), {"judge": 1100},
        {"judge": "tokens"}, seconds, since,
    )  # fmt: skip


def test_a_watched_run_is_timed_by_its_stored_time_and_paced_over_it() -> None:
    live = LiveRun.watched("m", _stored("running", 1500.0, 20.0))  # (timed from now on)
    assert live.elapsed() == pytest.approx(1520.0, abs=5.0)  # stored + since its last write
    assert live.rates == {"tokens": pytest.approx(1100 / 1520.0)}
    assert live.eta() == pytest.approx(1520.0 * 24 / 22, rel=1e-3)  # 24 of 46 left, exact
    text = pace_text(live).plain
    assert "0.7 tok/s" in text and "ETA about 28 min" in text and "elapsed 25 min" in text, text
    ended = LiveRun.watched("m", _stored("interrupted", 1500.0, 900.0))
    assert ended.elapsed() == 1500.0  # (no writer: the time since its last write is not running)
    assert "ETA" not in pace_text(ended).plain


def test_stored_totals_grow_past_a_plan_s_lower_bound() -> None:
    config = RunConfig(suites=["haf"])
    fresh = {f"i{n}": InstanceCounts({"justify": 1}, frozenset({"justify"})) for n in range(4)}
    keys = {("i0", "justify", s) for s in range(3)} | {("i1", "justify", s) for s in range(5)}
    totals = stored_totals(config, fresh, keys, {"i0"})
    assert totals.planned()["justify"] == 3 + 5 + 1 + 1  # i1 started: at least its 5
    assert "justify" in totals.growing()
    assert totals.expected()["justify"] > totals.planned()["justify"]  # the others like i0


# -- the store: a killed session's time --------------------------------------------------------


@pytest.fixture
def stored(tmp_path: Path) -> Store:
    store = open_store(tmp_path / "haf.duckdb")
    save_tiny_dataset(store)
    scripted_run(store, "r", FlatSimilarity())  # type: ignore[arg-type]
    return store


def test_a_resume_adds_the_time_a_killed_session_worked_after_storing_its_time(
    stored: Store,
) -> None:
    stored.query(
        "UPDATE runs SET seconds_running = 214, updated_at = TIMESTAMP '2026-01-01 10:00:00'"
    )
    stored.query("UPDATE generations SET created_at = TIMESTAMP '2026-01-01 09:59:00'")
    stored.query(
        "UPDATE generations SET created_at = TIMESTAMP '2026-01-01 10:24:00' "
        "WHERE instance_id = 'i2' AND stage = 'justify'"
    )  # (the killed session's last stored generation, 24 minutes on)
    assert stored.account_unstored_time("r") == pytest.approx(1440.0)
    assert stored.get_run("r").seconds_running == pytest.approx(214.0 + 1440.0)
    assert stored.account_unstored_time("r") == 0.0  # (counted once)
    assert stored.get_run("r").seconds_running == pytest.approx(1654.0)


def test_a_resume_through_the_pipeline_counts_the_killed_session(stored: Store) -> None:
    stored.query("UPDATE runs SET status = 'interrupted', seconds_running = 214")
    stored.query(
        "UPDATE runs SET updated_at = "
        "(SELECT max(created_at) FROM generations) - INTERVAL 90 SECOND"
    )  # (its last 90 s of work stored as generations, not as time)
    models = LoadedModels(ScriptedBackend(), FlatSimilarity())  # type: ignore[arg-type]
    start_or_resume(stored, RunRequest(resume_run_id="r", preloaded=models))
    assert stored.get_run("r").seconds_running == pytest.approx(214.0 + 90.0)


def test_running_time_is_stored_as_generations_are_not_only_as_instances_finish(
    stored: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runner_module, "ACCOUNT_SECONDS", 0.0)
    config = RunConfig(dataset_id="tiny", decoding=DecodingSettings(max_new_tokens=64))
    record = RunRecord(
        run_id="t", status="created", dataset_id="tiny", n_planned=4,
        config_json=config.model_dump_json(), model_file="scripted.gguf",
        similarity_model="flat", similarity_kind="bi-encoder",
    )  # fmt: skip
    stored.create_run(record)
    seen: list[float] = []

    def listen(event: ProgressEvent) -> None:
        if event.kind == "generation" and event.instances_done == 0 and not seen:
            seen.append(stored.get_run("t").seconds_running)  # (the scorer's thread: stored)

    runner = HafRunner(stored, ScriptedBackend(), FlatSimilarity(), config, listener=listen)  # type: ignore[arg-type]
    assert runner.run("t").status == "finished"
    assert seen and seen[0] > 0.0  # before the first instance finished


# -- a run another process writes, in the monitor ------------------------------------------------


@pytest.mark.parametrize("size", [(80, 24), (200, 50)])
async def test_the_monitor_shows_another_process_s_run_from_its_stored_rows(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    db, marker = tmp_path / "haf.duckdb", tmp_path / "held"
    env = {
        **os.environ, "PYTHONPATH": str(ROOT), "HAF_HOME": str(tmp_path / "home"),
        "HAF_TEST_HOLD": f"{marker}:14",
    }  # fmt: skip
    command = [sys.executable, "-m", "tests.support.scripted_cli", "--db", str(db), "run",
               "--dataset", "sample", "--suites", "haf", "--limit", "9"]  # fmt: skip
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        (run_id,) = wait_until_held(marker, process)
        app = create_app(db)
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            app.push_screen(MonitorScreen(run_id))
            await settle(pilot)
            stats = static_text(app.screen, "#mon-stats")
            assert stats.startswith("running"), stats
            assert "tok/s" in stats and "ETA about" in stats and "elapsed" in stats, stats
            widget = app.screen.query_one("#mon-stats")
            strips = widget.render_lines(Region(0, 0, widget.size.width, widget.size.height))
            shown = " ".join(" ".join(strip.text.split()) for strip in strips)
            assert shown.strip() == " ".join(stats.split()), (shown, stats)  # whole, wrapped
            counts = {
                stage: str(app.screen.query_one(f"#count-{stage}").render())
                for stage in ("instances", "justify", "individual")
            }
            # held at the 14th generation: 3 texts done, each with 3 reasons asked about one
            # by one: the rest are expected like them (not "6/≥6" at 100 %, nor "≈9")
            assert counts == {"instances": "3/9", "justify": "4/9", "individual": "6/≈18"}
            assert "another process writes this run" in static_text(app.screen, "#mon-note")
    finally:
        process.kill()
        process.wait()
