"""The comparison view opens at once and fills in from its worker (issue 44 §2): its frame says
"loading …" while the runs are read; the intervals it then shows are those of the seeded
bootstrap (:data:`~haf_tui.reports.comparison.SEED`) on the stored values; what it computed
is kept per run version (:data:`~haf_tui.tui.run_cache.RUN_CACHE`), so opening it again
computes nothing, and a run that gains rows (a resumed run, a re-score going on) is computed
anew."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

from benchmarks.benchdata import build_bench_db
from haf_tui.reports.comparison import SEED, mean_interval, paired_difference
from haf_tui.store import Store, open_store
from haf_tui.store.comparison_readers import run_metric_values
from haf_tui.tui import create_app
from haf_tui.tui.compare_data import CompareData, RunStatistics, load_compare_data
from haf_tui.tui.run_cache import RUN_CACHE, RunCache
from haf_tui.tui.screens import compare
from haf_tui.tui.screens.compare import CompareScreen
from haf_tui.tui.widgets.panel_view import PanelView
from tests.support import settle, static_text

RELEASE_SECONDS = 60.0
"""How long the held read waits for the test to let it go (only catches "never")."""


@pytest.fixture(scope="module")
def template_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """Two runs of one synthetic dataset: run1 finished 20 instances, run2 19 (interrupted)."""
    path = tmp_path_factory.mktemp("compare-cache") / "template.duckdb"
    return path, build_bench_db(path, n_instances=20, n_runs=2, seed=7)


@pytest.fixture
def db(template_db: tuple[Path, list[str]], tmp_path: Path) -> Path:
    path = tmp_path / "haf.duckdb"
    shutil.copyfile(template_db[0], path)
    return path


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


async def _open_compare(db: Path) -> list[RunStatistics]:
    """Open the comparison on a fresh app and return the statistics it shows."""
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        assert isinstance(app.screen, CompareScreen)
        assert "95 % bootstrap CI" in str(app.screen.query_one("#cmp-stats-view", PanelView).text())
        return list(app.screen.stats)


async def test_the_frame_shows_loading_then_the_seeded_intervals(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()
    real_load = load_compare_data

    def held_load(store: Store, database: str = "") -> CompareData:
        assert release.wait(RELEASE_SECONDS), "the test never let the read go"
        return real_load(store, database)

    monkeypatch.setattr(compare, "load_compare_data", held_load)
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
        assert "runs 2/2 chosen" in static_text(screen, "#cmp-status")
        shown = _shown(screen.stats)
        metrics = list(shown["paired"])
    with open_store(db, read_only=True) as store:
        assert shown == _expected(store, shown["order"], metrics)


async def test_opening_again_computes_nothing_and_a_run_with_new_rows_anew(
    db: Path, template_db: tuple[Path, list[str]]
) -> None:
    run1, run2 = template_db[1]
    first = _shown(await _open_compare(db))
    computed = RUN_CACHE.computed
    again = _shown(await _open_compare(db))  # another app, the same process
    assert again == first and RUN_CACHE.computed == computed  # kept, not computed again
    # run2 resumed: its 20th instance finished (the values run1 has for it)
    with open_store(db) as store:
        for table in ("instance_metrics", "instance_results"):  # (results last: they decide)
            store.connection.execute(
                f"INSERT INTO {table} SELECT * REPLACE ($run2 AS run_id) FROM {table} "
                "WHERE run_id = $run1 AND instance_id NOT IN "
                "(SELECT instance_id FROM instance_results WHERE run_id = $run2)",
                {"run1": run1, "run2": run2},
            )
    after = _shown(await _open_compare(db))
    assert RUN_CACHE.computed > computed
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
