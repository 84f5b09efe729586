"""A first comparison shows what is cheap at once and fills in its intervals (issue 44 §2): with
nothing kept, each run's means and n are read as arrays and shown while the instance values
are read (the paired differences say they wait for them), then the paired differences' n and
means, every interval and Wilcoxon p shown as pending ("…", the status saying so) while a
thread worker computes them; the numbers shown at once are those the computation gives, and a
superseded worker's pending numbers arriving after the computed ones are not shown."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable

from benchmarks.benchdata import build_bench_db
from haf_tui.reports.comparison import WILCOXON_MIN_PAIRS, defined
from haf_tui.store import open_store
from haf_tui.tui import create_app
from haf_tui.tui.compare_data import (
    RunStatistics,
    list_runs,
    load_compare_data,
    read_defined,
    run_statistics,
    statistics_at_once,
)
from haf_tui.tui.run_cache import RUN_CACHE
from haf_tui.tui.screens import compare
from haf_tui.tui.screens.compare import CompareScreen
from haf_tui.tui.screens.compare_messages import StatisticsDrawn
from haf_tui.tui.widgets.compare_tables import PENDING, statistics_parts
from haf_tui.tui.widgets.panel_view import PanelView, render_strips
from tests.support import settle, static_text, until

RELEASE_SECONDS = 60.0
"""How long a held computation waits for the test to let it go (only catches "never")."""


@pytest.fixture(scope="module")
def template_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two runs of one synthetic dataset: run1 finished 20 instances, run2 19 (interrupted)."""
    path = tmp_path_factory.mktemp("compare-pending") / "template.duckdb"
    build_bench_db(path, n_instances=20, n_runs=2, seed=7)
    return path


@pytest.fixture
def db(template_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the template with an empty HAF home (nothing kept) and nothing in memory."""
    monkeypatch.setenv("HAF_HOME", str(tmp_path / "home"))
    RUN_CACHE.clear()
    path = tmp_path / "haf.duckdb"
    shutil.copyfile(template_db, path)
    return path


def _held(release: threading.Event, real: Any) -> Any:
    def held(*args: Any, **kwargs: Any) -> Any:
        assert release.wait(RELEASE_SECONDS), "the test never let it go"
        return real(*args, **kwargs)

    return held


def _numbers(stats: list[RunStatistics]) -> dict[str, Any]:
    """What is final at once: each run's n and mean, each pair's n and mean difference."""
    return {
        found.run.run_id: (
            {m: (v.n, v.mean) for m, v in found.means.items()},
            None if found.paired is None else {m: (d.n, d.mean) for m, d in found.paired.items()},
        )
        for found in stats
    }


def _view(screen: CompareScreen) -> str:
    return str(screen.query_one("#cmp-stats-view", PanelView).text())


def _means_line(text: str, label: str, table: str = "mean over instances") -> list[str]:
    start = text.index(table)
    return next(line.split() for line in text[start:].splitlines() if line.split()[:1] == [label])


async def test_the_means_come_first_then_the_intervals_fill_in(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    values_go, intervals_go = threading.Event(), threading.Event()
    monkeypatch.setattr(compare, "load_compare_data", _held(values_go, load_compare_data))
    monkeypatch.setattr(compare, "run_statistics", _held(intervals_go, run_statistics))
    app = create_app(db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        await pilot.press("c")
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        await until(pilot, lambda: bool(screen.stats))  # (the values still held)
        before_values = list(screen.stats)
        assert all(found.pending for found in before_values)
        assert before_values[1].pairing and before_values[1].paired is None
        text = _view(screen)
        assert "paired B − A" in text and f"{PENDING} computing: reading the instances" in text
        sos = _means_line(text, "SoS")
        assert sos[2::3] == [PENDING, PENDING]  # (each run's CI, next to its mean and n)
        assert all(n.isdigit() and int(n) > 1 for n in sos[3::3])
        assert static_text(screen, "#cmp-status").endswith("reading instances …")

        values_go.set()  # the values read: the pairs' n and means, the intervals still pending
        await until(pilot, lambda: not screen.stats[1].pairing)
        pending = list(screen.stats)
        assert pending[1].paired is not None and pending[1].pending_paired
        text = _view(screen)
        assert f"{PENDING} computing: the means and n are final" in text
        assert "Δ mean" in text
        paired_sos = _means_line(text, "SoS", "paired B")  # (label, Δ, CI, p, n pairs, …)
        assert int(paired_sos[4]) >= WILCOXON_MIN_PAIRS
        assert paired_sos[2:4] == [PENDING, PENDING]  # (the interval and Wilcoxon's p)
        assert static_text(screen, "#cmp-status").endswith("computing intervals …")

        intervals_go.set()
        await settle(pilot)
        final = list(screen.stats)
        assert not any(found.computing for found in final)
        assert PENDING not in _view(screen)
        assert "computing" not in static_text(screen, "#cmp-status")
        assert _means_line(_view(screen), "SoS")[2].startswith("[")  # (an interval now)
    assert _numbers(pending) == _numbers(final)  # (shown at once: the computed numbers)
    means = {r: m for r, (m, _) in _numbers(final).items()}
    assert {r: m for r, (m, _) in _numbers(before_values).items()} == means


def test_the_numbers_at_once_are_those_computed_from_either_source(db: Path) -> None:
    path = str(db)
    with open_store(db, read_only=True) as store:
        data = load_compare_data(store, path, list_runs(store, path))
        runs = data.runs
        from_arrays = statistics_at_once(runs, defined=read_defined(store, runs))
    from_values = statistics_at_once(runs, data.values)
    computed = run_statistics(runs, data.values)
    assert _numbers(from_values) == _numbers(computed)
    assert {r: m for r, (m, _) in _numbers(from_arrays).items()} == {
        r: m for r, (m, _) in _numbers(computed).items()
    }
    assert [f.metrics for f in from_arrays] == [f.metrics for f in computed]
    assert all(f.pending == frozenset(f.means) for f in from_values)
    assert from_values[1].pending_paired == frozenset(from_values[1].means)
    assert not any(f.computing for f in computed)
    assert all(v.low is None for f in from_values for v in f.means.values())  # (none guessed)


async def test_pending_numbers_arriving_after_the_computed_ones_are_not_shown(db: Path) -> None:
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CompareScreen) and screen.stats
        assert not screen.computing()
        shown = _view(screen)
        assert screen.data is not None
        late = statistics_at_once([f.run for f in screen.stats], screen.data.values)
        lines = render_strips(statistics_parts(late), screen.asked_width)
        key = (tuple(found.run.run_id for found in late), screen.asked_width)
        screen.post_message(StatisticsDrawn(key, late, lines))  # (a superseded worker's)
        await settle(pilot)
        assert _view(screen) == shown and not screen.computing()


def test_the_arrays_hold_the_defined_values_in_the_values_order(db: Path) -> None:
    """The arrays the means are shown from at once hold exactly the values the computation
    takes, in its order (the dataset's, not the ids'): a NaN or a NULL stored, an instance
    with no value and a metric a run defines nowhere all left out alike."""

    with open_store(db) as store:
        con = store.connection
        runs = con.execute("SELECT run_id FROM runs ORDER BY run_id").fetchall()
        run1, run2 = (row[0] for row in runs)
        con.execute("UPDATE instances SET position = 1000 - position")  # (ids' order reversed)
        listed = "SELECT instance_id FROM instance_results WHERE run_id = $r ORDER BY instance_id"
        ids = [row[0] for row in con.execute(listed, {"r": run1}).fetchall()]
        at = "WHERE run_id = $r AND metric = 'sos' AND instance_id = $i"
        nan = "UPDATE instance_metrics SET value = 'NaN'::DOUBLE"
        null = "UPDATE instance_metrics SET value = NULL"
        con.execute(f"{nan} {at}", {"r": run1, "i": ids[0]})
        con.execute(f"{null} {at}", {"r": run1, "i": ids[1]})
        con.execute(f"DELETE FROM instance_metrics {at}", {"r": run1, "i": ids[2]})
        con.execute("UPDATE instance_metrics SET value = NULL WHERE run_id = $r AND metric = 'dis'",
                    {"r": run2})  # fmt: skip
    path = str(db)
    with open_store(db, read_only=True) as store:
        data = load_compare_data(store, path, list_runs(store, path))
        arrays = read_defined(store, data.runs)
    for run in data.runs:
        for spec in run_statistics(data.runs, data.values)[0].metrics:
            of_run = data.values[run.run_id]
            expected = list(defined({i: v.get(spec.name) for i, v in of_run.items()}).values())
            found = arrays[run.run_id].get(spec.name, ())
            assert [float(v) for v in found] == expected, (run.run_id, spec.name)
    assert "dis" not in arrays[run2] and len(arrays[run1]["sos"]) <= len(ids) - 3
    from_arrays = statistics_at_once(data.runs, defined=arrays)
    computed = run_statistics(data.runs, data.values)
    assert {r: m for r, (m, _) in _numbers(from_arrays).items()} == {
        r: m for r, (m, _) in _numbers(computed).items()
    }


async def test_the_runs_are_fitted_once_on_opening_and_again_at_a_new_width(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The screen's first resize, as it is laid out, finds the runs' columns fitted (the table
    was filled again beside the first statistics' read); a new width fits them again."""
    fills: list[int] = []
    real_fill = CompareScreen.fill_runs

    def counted(screen: CompareScreen) -> None:
        fills.append(screen.app.size.width)
        real_fill(screen)

    monkeypatch.setattr(CompareScreen, "fill_runs", counted)
    app = create_app(db)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        table = app.screen.query_one("#cmp-runs", DataTable)
        wide = [column.label.plain for column in table.columns.values()]
        assert fills == [200] and "date" in wide
        await pilot.resize_terminal(60, 24)
        await settle(pilot)
        narrow = [column.label.plain for column in table.columns.values()]
        assert fills[1:] == [60] and "date" not in narrow and "run" in narrow


async def test_what_the_runs_worker_found_is_taken_only_for_its_runs(db: Path) -> None:
    """The kept statistics or defined values looked up with the runs are of the runs first
    chosen: a worker computing another choice looks again, and they are taken once."""
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CompareScreen) and screen.data is not None
        runs = screen.data.runs
        found = compare.FirstFound(tuple(run.run_id for run in runs), None, {})
        screen.first_found = found
        assert screen.take_first_found(runs[:1]) is None  # (another choice)
        screen.first_found = found
        assert screen.take_first_found(runs) is found
        assert screen.take_first_found(runs) is None  # (taken once)


@pytest.mark.parametrize("asked", [False, True])
async def test_the_first_choices_values_are_read_once_by_the_runs_worker(
    db: Path, monkeypatch: pytest.MonkeyPatch, asked: bool
) -> None:
    """Nothing kept: the defined values of the runs the screen opens with (its own choice, or
    the runs it was asked for, in another order) are read once, by the worker that listed the runs;
    the statistics' worker takes them (a choice the runs' worker did not make: read again)."""
    from textual.worker import get_current_worker

    readers: list[tuple[str, tuple[str, ...]]] = []

    def counted(store: Any, runs: Any) -> Any:
        readers.append((get_current_worker().group, tuple(run.run_id for run in runs)))
        return read_defined(store, runs)

    monkeypatch.setattr(compare, "read_defined", counted)
    with open_store(db) as store:
        run_ids = sorted(str(run["run_id"]) for run in store.list_runs())
    app = create_app(db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        if asked:
            app.push_screen(CompareScreen(run_ids))
        else:
            await pilot.press("c")
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        await until(pilot, lambda: bool(screen.stats) and not screen.computing())
        shown = tuple(found.run.run_id for found in screen.stats)
    assert len(shown) == 2 and (shown == tuple(run_ids)) is asked  # (the default: newest first)
    assert readers == [("compare-load", shown)]
