"""A comparison whose read or computation fails says what failed, in one line, on its status
line and in the pane that waited for it, never "reading instances …" or "loading …" forever;
the runs listed can still be chosen, and a failed look-up of kept statistics does not stop
the values' read (the statistics are then computed from them)."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from benchmarks.benchdata import build_bench_db
from haf_tui.tui import compare_data, create_app
from haf_tui.tui.run_cache import RUN_CACHE
from haf_tui.tui.screens import compare, compare_instance, home
from haf_tui.tui.screens.compare import CompareScreen
from haf_tui.tui.widgets.panel_view import PanelView
from tests.support import settle, static_text, until

NEVER = 10_000.0
"""A rest the runs list's cursor never reaches in a test (no read ahead)."""
OPENED = 60.0
"""Seconds the opening's values (or their failure) may take (only catches "never")."""
HELD = 2 * OPENED
"""The values' read's wait for the first statistics drawn: a failure that does not end it
holds them past :data:`OPENED`."""


@pytest.fixture(scope="module")
def template_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two runs of one synthetic dataset (8 instances)."""
    path = tmp_path_factory.mktemp("compare-failures") / "template.duckdb"
    build_bench_db(path, n_instances=8, n_runs=2, seed=3)
    return path


@pytest.fixture
def db(template_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the template with a HAF home of its own (nothing kept: a first opening)."""
    monkeypatch.setenv("HAF_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(home, "REST_SECONDS", NEVER)
    monkeypatch.setattr(home, "FIRST_REST_SECONDS", NEVER)
    monkeypatch.setattr(compare, "FIRST_DRAW_WAIT", HELD)  # (a failure must end the wait)
    RUN_CACHE.clear()
    path = tmp_path / "haf.duckdb"
    shutil.copyfile(template_db, path)
    return path


def _failing(message: str) -> Callable[..., Any]:
    def fail(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(message)

    return fail


def _pane(screen: CompareScreen, view_id: str) -> str:
    return str(screen.query_one(view_id, PanelView).text()).strip()


async def _opened(db: Path, pilot: Any) -> CompareScreen:
    """The comparison opened, once its values are read or their read failed."""
    await settle(pilot)
    await pilot.press("c")
    await until(pilot, lambda: isinstance(pilot.app.screen, CompareScreen))
    screen = pilot.app.screen
    assert isinstance(screen, CompareScreen)
    await until(  # (before the settling: it would wait for a worker waiting "never")
        pilot,
        lambda: screen.read_failed is not None or bool(screen.data and screen.data.values_read),
        OPENED,
    )
    await settle(pilot)
    return screen


async def test_a_failed_look_up_of_kept_statistics_lets_the_values_come(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(compare, "kept_statistics", _failing("the kept files are unreadable"))
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _opened(db, pilot)
        assert screen.data is not None and screen.data.values_read  # (read all the same)
        status = static_text(screen, "#cmp-status")
        assert "reading" not in status and status.startswith("runs 2/2 chosen")
        assert "instance 1/8" in status
        assert "95 % bootstrap CI" in _pane(screen, "#cmp-stats-view")  # (from the values)
        messages = [n.message for n in app._notifications]
        assert messages == ["the kept files are unreadable"]  # (said once, by the app)


async def test_a_failed_values_read_says_so_instead_of_reading_forever(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(compare, "load_compare_data", _failing("disk I/O error"))
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _opened(db, pilot)
        failed = "could not read the instances: RuntimeError: disk I/O error"
        assert static_text(screen, "#cmp-status") == f"runs 2/2 chosen (space, a) {failed}"
        assert _pane(screen, "#cmp-instance-view") == failed
        assert "Δ" in _pane(screen, "#cmp-stats-view")  # (the means, from the defined values)
        await pilot.press("space")  # (the runs still chosen: the failure still said)
        await settle(pilot)
        assert static_text(screen, "#cmp-status") == f"runs 1/2 chosen (space, a) {failed}"


async def test_a_choice_after_a_failed_values_read_says_the_failure_while_it_computes(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The status line as a run is chosen, its statistics not drawn yet (held here), says
    what failed: not "reading instances …", which no read would end."""
    monkeypatch.setattr(compare, "load_compare_data", _failing("disk I/O error"))
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _opened(db, pilot)
        released = threading.Event()

        def held(*args: Any, **kwargs: Any) -> Any:
            assert released.wait(OPENED)  # (the test has read the status line)
            return compare_data.kept_statistics(*args, **kwargs)

        monkeypatch.setattr(compare, "kept_statistics", held)
        failed = "could not read the instances: RuntimeError: disk I/O error"
        try:
            await pilot.press("space")
            status = static_text(screen, "#cmp-status")
        finally:
            released.set()
        assert status == f"runs 1/2 chosen (space, a) {failed}"
        await settle(pilot)
        assert static_text(screen, "#cmp-status") == f"runs 1/2 chosen (space, a) {failed}"


async def test_a_failed_runs_read_says_so_instead_of_loading_forever(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(compare, "list_runs", _failing("database is locked"))
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _opened(db, pilot)
        failed = "could not read the runs: RuntimeError: database is locked"
        assert static_text(screen, "#cmp-status") == f"runs 0/0 chosen (space, a) {failed}"


@pytest.mark.parametrize("failing", ["statistics_at_once", "run_statistics"])
async def test_a_failed_computation_says_so_in_both_panes(
    db: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    """The means at once failing (before the values are read), or the intervals (after the
    means were shown, their intervals pending)."""
    monkeypatch.setattr(compare, failing, _failing("no memory for the draws"))
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _opened(db, pilot)
        failed = "could not compute the statistics: RuntimeError: no memory for the draws"
        assert _pane(screen, "#cmp-stats-view") == failed
        assert _pane(screen, "#cmp-instance-view") == failed  # (drawn with the statistics)
        assert static_text(screen, "#cmp-status").endswith(failed)
        assert screen.data is not None and screen.data.values_read  # (not held, nor ever)
        await pilot.press("right_square_bracket")
        await settle(pilot)
        status = static_text(screen, "#cmp-status")
        assert "instance 2/8" in status and "computing" not in status  # (nothing computes)
        assert _pane(screen, "#cmp-instance-view") == failed


async def test_a_failed_computation_is_not_said_once_the_statistics_are_computed(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The intervals failing once: the next choice that computes (none chosen, then all)
    says no failure that has passed."""
    monkeypatch.setattr(compare, "run_statistics", _failing("no memory for the draws"))
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _opened(db, pilot)
        assert _pane(screen, "#cmp-instance-view").startswith("could not compute")
        monkeypatch.setattr(compare, "run_statistics", compare_data.run_statistics)
        await pilot.press("a")  # (every run chosen: none)
        await settle(pilot)
        assert static_text(screen, "#cmp-status") == "runs 0/2 chosen (space, a)"
        for view_id in ("#cmp-stats-view", "#cmp-instance-view"):
            assert "could not" not in _pane(screen, view_id)
        await pilot.press("a")  # (every run again: computed)
        await settle(pilot)
        assert "95 % bootstrap CI" in _pane(screen, "#cmp-stats-view")
        assert _pane(screen, "#cmp-instance-view").startswith("t0000")


async def test_a_failed_instance_read_says_so_in_the_instance_pane(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(compare_instance, "instance_across", _failing("a torn page"))
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _opened(db, pilot)
        failed = "could not read the instance: RuntimeError: a torn page"
        assert _pane(screen, "#cmp-instance-view") == failed
        assert "95 % bootstrap CI" in _pane(screen, "#cmp-stats-view")
