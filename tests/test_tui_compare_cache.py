"""The comparison view opens at once and fills in from its worker (issue 44 §2): its frame says
"loading …" while the runs are read; the intervals it then shows are those of the seeded
bootstrap (:data:`~haf_tui.reports.comparison.SEED`) on the stored values; what it computed
is kept per run version (:data:`~haf_tui.tui.run_cache.RUN_CACHE` and the files of
:mod:`haf_tui.reports.statistics_files`), so opening it again, in this process or a new one,
computes nothing and shows the kept intervals before the instance values are read, and a run
that gains rows (a resumed run, a re-score going on) is computed anew."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from benchmarks.benchdata import build_bench_db
from haf_tui.reports.comparison import SEED, mean_interval, paired_difference
from haf_tui.store import Store, open_store
from haf_tui.store.comparison_readers import run_metric_values
from haf_tui.tui import create_app
from haf_tui.tui.compare_data import (
    RunStatistics,
    kept_statistics,
    list_runs,
    load_compare_data,
    run_statistics,
)
from haf_tui.tui.run_cache import RUN_CACHE, RunCache
from haf_tui.tui.screens import compare, home
from haf_tui.tui.screens.compare import CompareScreen
from haf_tui.tui.screens.compare_messages import StatisticsDrawn
from haf_tui.tui.widgets.compare_tables import statistics_parts
from haf_tui.tui.widgets.panel_view import PanelView, render_strips
from tests.support import settle, static_text

NEVER = 10_000.0
"""A rest the runs list's cursor never reaches in a test."""
RELEASE_SECONDS = 60.0
"""How long the held read waits for the test to let it go (only catches "never")."""


@pytest.fixture(scope="module")
def template_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """Two runs of one synthetic dataset: run1 finished 20 instances, run2 19 (interrupted)."""
    path = tmp_path_factory.mktemp("compare-cache") / "template.duckdb"
    return path, build_bench_db(path, n_instances=20, n_runs=2, seed=7)


@pytest.fixture
def db(
    template_db: tuple[Path, list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """A copy of the template, with a HAF home of its own (where the kept files go); the runs
    list does not read ahead (the metrics screen's report it keeps would count in
    ``RUN_CACHE.computed``, which these tests read as the comparison's)."""
    monkeypatch.setenv("HAF_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(home, "REST_SECONDS", NEVER)
    monkeypatch.setattr(home, "FIRST_REST_SECONDS", NEVER)
    path = tmp_path / "haf.duckdb"
    shutil.copyfile(template_db[0], path)
    return path


def _a_new_process() -> None:
    """What a new process starts with: nothing kept in memory (the files stay)."""
    RUN_CACHE.clear()


def _expected(store: Store, run_ids: list[str], metrics: list[str]) -> dict[str, Any]:
    """Each run's interval and run 2's paired difference with run 1, computed here from the
    stored values with the stated seed (what the view computed before anything was kept)."""
    values = run_metric_values(store, run_ids, metrics)

    def of(run_id: str, metric: str) -> dict[str, float | None]:
        return {i: found.get(metric) for i, found in values[run_id].items()}

    first, second = run_ids
    return {
        "order": run_ids,
        "means": {r: {m: mean_interval(of(r, m), seed=SEED) for m in metrics} for r in run_ids},
        "paired": {m: paired_difference(of(first, m), of(second, m), seed=SEED) for m in metrics},
    }


def _shown(stats: list[RunStatistics]) -> dict[str, Any]:
    assert stats[1].paired is not None
    return {
        "order": [s.run.run_id for s in stats],  # (the first is the paired difference's first)
        "means": {s.run.run_id: s.means for s in stats},
        "paired": stats[1].paired,
    }


async def _open_compare(db: Path, size: tuple[int, int] = (120, 40)) -> list[RunStatistics]:
    """Open the comparison on a fresh app and return the statistics it shows."""
    return (await _open_compare_text(db, size))[0]


async def _open_compare_text(
    db: Path, size: tuple[int, int] = (120, 40)
) -> tuple[list[RunStatistics], str]:
    """Open the comparison on a fresh app: the statistics it shows, and its statistics pane."""
    app = create_app(db)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        assert isinstance(app.screen, CompareScreen)
        text = str(app.screen.query_one("#cmp-stats-view", PanelView).text())
        assert "95 % bootstrap CI" in text
        return list(app.screen.stats), text


def _held(release: threading.Event, real: Any) -> Any:
    """``real``, waiting first until the test lets it go."""

    def held(*args: Any) -> Any:
        assert release.wait(RELEASE_SECONDS), "the test never let the read go"
        return real(*args)

    return held


async def test_the_frame_shows_loading_then_the_seeded_intervals(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()
    monkeypatch.setattr(compare, "list_runs", _held(release, list_runs))
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, CompareScreen)  # shown while its data is still being read
        assert static_text(screen, "#cmp-status") == "loading …"
        assert not screen.stats and "CI" not in str(
            screen.query_one("#cmp-stats-view", PanelView).text()
        )
        release.set()
        await settle(pilot)
        assert static_text(screen, "#cmp-status").startswith("runs 2/2 chosen")
        shown = _shown(screen.stats)
        metrics = list(shown["paired"])
    with open_store(db, read_only=True) as store:
        assert shown == _expected(store, shown["order"], metrics)


@pytest.mark.parametrize("size", [(80, 24), (200, 50)])
async def test_a_new_process_shows_the_kept_intervals_before_the_values_are_read(
    db: Path, monkeypatch: pytest.MonkeyPatch, size: tuple[int, int]
) -> None:
    first, first_text = await _open_compare_text(db, size)  # (computed, kept in the files)
    _a_new_process()
    release = threading.Event()
    monkeypatch.setattr(compare, "load_compare_data", _held(release, load_compare_data))
    app = create_app(db)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("c")
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        deadline = time.monotonic() + RELEASE_SECONDS  # (only catches "never")
        while not screen.stats and time.monotonic() < deadline:
            await pilot.pause(0.05)  # (the kept statistics come while the values are held)
        assert screen.stats, "the kept statistics were not shown while the values were held"
        assert RUN_CACHE.computed == 0  # (read from the files, nothing computed)
        assert _shown(screen.stats) == _shown(first)
        assert str(screen.query_one("#cmp-stats-view", PanelView).text()) == first_text
        status = static_text(screen, "#cmp-status")
        assert status == "runs 2/2 chosen (space, a) reading instances …"
        assert len(status) <= size[0]
        instance = str(screen.query_one("#cmp-instance-view", PanelView).text())
        assert instance.strip() == "loading …"
        await pilot.press("right_square_bracket")  # (a key before the values: no wait, no step)
        assert screen.instance_index == 0
        release.set()
        await settle(pilot)
        assert static_text(screen, "#cmp-status").startswith("runs 2/2 chosen (space, a) · ")
        assert "instance 1/20" in static_text(screen, "#cmp-status")
        assert RUN_CACHE.computed == 0
        await pilot.press("right_square_bracket")
        await settle(pilot)
        assert "instance 2/20" in static_text(screen, "#cmp-status")


async def test_opening_again_computes_nothing_and_a_run_with_new_rows_anew(
    db: Path, template_db: tuple[Path, list[str]]
) -> None:
    run1, run2 = template_db[1]
    first = _shown(await _open_compare(db))
    computed = RUN_CACHE.computed
    again = _shown(await _open_compare(db))  # another app, the same process
    assert again == first and RUN_CACHE.computed == computed  # kept, not computed again
    _a_new_process()
    assert _shown(await _open_compare(db)) == first and RUN_CACHE.computed == 0  # (the files)
    # run2 resumed: its 20th instance finished (the values run1 has for it)
    with open_store(db) as store:
        for table in ("instance_metrics", "instance_results"):  # (results last: they decide)
            store.connection.execute(
                f"INSERT INTO {table} SELECT * REPLACE ($run2 AS run_id) FROM {table} "
                "WHERE run_id = $run1 AND instance_id NOT IN "
                "(SELECT instance_id FROM instance_results WHERE run_id = $run2)",
                {"run1": run1, "run2": run2},
            )
    _a_new_process()
    after = _shown(await _open_compare(db))
    assert RUN_CACHE.computed > 0  # (run2's means and the pair: computed anew)
    metrics = list(after["paired"])
    with open_store(db, read_only=True) as store:
        expected = _expected(store, after["order"], metrics)
    assert after == expected
    assert after["means"][run2] != first["means"][run2]  # (the new row changed run2's means)
    assert after["means"][run1] == first["means"][run1]


def test_the_cache_keeps_its_bound_forgetting_the_least_recently_used() -> None:
    cache = RunCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # (a is now the most recently used)
    cache.put("c", 3)
    assert cache.get("b") is None and cache.get("a") == 1 and cache.get("c") == 3
    assert cache.computed_once("d", lambda: 4) == 4 and cache.computed == 1
    assert cache.computed_once("d", lambda: 5) == 4 and cache.computed == 1  # kept


async def test_an_opening_computes_the_statistics_once(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []

    def counted(name: str, real: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            calls.append(name)
            return real(*args, **kwargs)

        return call

    monkeypatch.setattr(compare, "kept_statistics", counted("kept", kept_statistics))
    monkeypatch.setattr(compare, "run_statistics", counted("computed", run_statistics))
    await _open_compare(db)  # (nothing kept: looked for once, then computed once the values came)
    assert calls == ["kept", "computed"]  # (the screen's first resize draws nothing again)
    calls.clear()
    _a_new_process()
    await _open_compare(db)
    assert calls == ["kept"]  # (the kept statistics shown; the values' arrival computes nothing)


async def test_a_drawing_at_a_width_no_longer_asked_for_is_not_shown(db: Path) -> None:
    """A superseded worker's statistics, drawn at the old width, arriving after the newer
    drawing (posted here by hand: the order threads may finish in) leave the pane at the
    width asked for (they were shown, and no redraw came, the width being asked already)."""
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CompareScreen) and screen.stats
        view = screen.query_one("#cmp-stats-view", PanelView)
        shown = str(view.text())
        ids = tuple(found.run.run_id for found in screen.stats)
        old_width = 60
        assert screen.asked_width != old_width
        stale = render_strips(statistics_parts(screen.stats), old_width)
        assert "\n".join(line.text.rstrip() for line in stale) != shown  # (a width to tell)
        screen.post_message(StatisticsDrawn((ids, old_width), screen.stats, stale))
        await settle(pilot)
        assert str(view.text()) == shown
