"""A screen whose worker fails says what failed, in one line, where it said "loading …" (which
stayed for ever): the runs list's hint, the campaigns' line, the explorer's count and
instance, the metrics' panels not read; the app's notification comes too. A read that
succeeds afterwards shows its data."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from benchmarks.benchdata import build_bench_db
from haf_tui.store.readers import run_overviews
from haf_tui.tui import create_app, instance_reader
from haf_tui.tui.instance_reader import read_instances
from haf_tui.tui.metrics_data import load_metrics_data
from haf_tui.tui.run_cache import VALUES_CACHE
from haf_tui.tui.screens import campaign, explorer_detail, home, metrics
from haf_tui.tui.screens.campaign import CampaignScreen
from haf_tui.tui.screens.explorer import ExplorerScreen
from haf_tui.tui.screens.metrics import MetricsScreen
from tests.support import settle, static_text, until
from tests.test_tui_metrics import shown


@pytest.fixture(scope="module")
def bench_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """One synthetic run of 6 instances."""
    path = tmp_path_factory.mktemp("failed-reads") / "haf.duckdb"
    return path, build_bench_db(path, n_instances=6, n_runs=1, seed=5)


def _instances_read_by(monkeypatch: pytest.MonkeyPatch, read: Callable[..., Any]) -> None:
    """Every instance read of the explorer, its first instances' included, made by ``read``;
    none read ahead by the runs list, none kept from an earlier test."""
    for rest in ("FIRST_REST_SECONDS", "REST_SECONDS"):
        monkeypatch.setattr(home, rest, 10_000.0)
    VALUES_CACHE.clear()
    monkeypatch.setattr(explorer_detail, "read_instances", read)
    monkeypatch.setattr(instance_reader, "read_instances", read)


def _failing(message: str) -> Callable[..., Any]:
    def fail(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(message)

    return fail


async def test_the_runs_list_says_its_read_failed_then_shows_the_runs(
    bench_db: tuple[Path, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(home, "run_overviews", _failing("database is locked"))
    monkeypatch.setattr(home, "POLL_SECONDS", 10_000.0)  # (no poll fails again meanwhile)
    app = create_app(bench_db[0])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        hint = static_text(app.screen, "#runs-hint")
        assert hint == "could not read the runs: RuntimeError: database is locked"
        assert [n.message for n in app._notifications] == ["database is locked"]
        monkeypatch.setattr(home, "run_overviews", run_overviews)
        app.screen.load_runs()  # type: ignore[attr-defined]
        await settle(pilot)
        assert static_text(app.screen, "#runs-hint").startswith("1 run in haf.duckdb")


async def test_the_campaigns_say_their_read_failed(
    bench_db: tuple[Path, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(campaign, "read_campaigns", _failing("a torn page"))
    app = create_app(bench_db[0])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.push_screen(CampaignScreen())
        await settle(pilot)
        line = static_text(app.screen, "#campaign-line")
        assert line == "could not read the campaigns: RuntimeError: a torn page"


async def test_the_explorer_says_its_run_could_not_be_read(
    bench_db: tuple[Path, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(instance_reader, "instance_notes", _failing("no such table: annotations"))
    app = create_app(bench_db[0])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.push_screen(ExplorerScreen(bench_db[1][0]))
        await settle(pilot)
        failed = "could not read the run's instances: RuntimeError: no such table: annotations"
        assert static_text(app.screen, "#ex-shown") == failed
        assert static_text(app.screen, "#ex-input") == failed


async def test_the_explorer_says_an_instance_could_not_be_read(
    bench_db: tuple[Path, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    _instances_read_by(monkeypatch, _failing("out of memory"))
    app = create_app(bench_db[0])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.push_screen(ExplorerScreen(bench_db[1][0]))
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ExplorerScreen)
        current = screen.current
        assert current is not None and static_text(screen, "#ex-shown").startswith("6")
        failed = f"could not read {current}: RuntimeError: out of memory"
        assert static_text(screen, "#ex-input") == failed
        assert [n.message for n in app._notifications] == ["out of memory"]  # (the app's too)
        screen._loading(current)  # (the "loading" timer of that read, firing late)
        assert static_text(screen, "#ex-input") == failed
        _instances_read_by(monkeypatch, read_instances)
        await pilot.press("down", "up")  # (back to it: read again)
        await settle(pilot)
        assert screen.current == current and current in screen.cache
        assert "could not" not in static_text(screen, "#ex-input")


@pytest.mark.parametrize("failing", ["first", "rest"])
async def test_the_metrics_say_the_panels_not_read_could_not_be(
    bench_db: tuple[Path, list[str]], monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    """The first panel's reports failing (nothing read: the status line says it too), or the
    other panels' (the first drawn): every panel not read says what failed, not "loading …"
    for ever."""

    def failing_read(store: Any, panes: Any = None, known: Any = None, state: Any = None) -> Any:
        if (panes is None) == (failing == "rest"):
            raise RuntimeError("a torn page")
        return load_metrics_data(store, panes, known, state)

    monkeypatch.setattr(metrics, "load_metrics_data", failing_read)
    app = create_app(bench_db[0])
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = MetricsScreen()
        app.push_screen(screen)
        await settle(pilot)
        failed = "could not read the metrics: RuntimeError: a torn page"
        first, *others = screen.panels
        assert others and [n.message for n in app._notifications] == ["a torn page"]
        if failing == "first":
            assert screen.data is None and static_text(screen, "#mx-status") == failed
            assert shown(screen, first).strip() == failed
        else:
            assert screen.data is not None and screen.data.holds(first)
            assert shown(screen, first).strip() not in ("loading …", failed)
        assert all(shown(screen, pane).strip() == failed for pane in others)


async def test_the_explorer_says_loading_while_an_instance_is_read_slowly(
    bench_db: tuple[Path, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read still under way when its "loading" timer fires says so (only a failed or
    finished read keeps the line as it is); then the instance comes."""
    released = threading.Event()

    def held(*args: Any, **kwargs: Any) -> Any:
        assert released.wait(60.0)  # (the test has seen "loading")
        return read_instances(*args, **kwargs)

    _instances_read_by(monkeypatch, held)
    app = create_app(bench_db[0])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = ExplorerScreen(bench_db[1][0])
        try:
            await app.push_screen(screen)
            await until(pilot, lambda: static_text(screen, "#ex-input").startswith("loading t"))
        finally:
            released.set()
        await settle(pilot)
        current = screen.current
        assert current is not None and current in screen.cache
        assert "loading" not in static_text(screen, "#ex-input")
