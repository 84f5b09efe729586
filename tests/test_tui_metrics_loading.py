"""The metrics screen opens at once and fills in from its worker (issue 44 §2): its frame says
"loading …" while the first panel's reports are read; the first panel is drawn from those
alone while the others are still read; then every panel shows what reading everything at
once (the screen's former single read) draws."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Static
from textual.worker import WorkerState

from haf_tui.reports import run_report
from haf_tui.store import Store, open_store
from haf_tui.store.readers import run_overviews
from haf_tui.tui import create_app
from haf_tui.tui.metrics_data import (
    MetricsData,
    RunInfo,
    bin_values,
    histogram_metrics,
    load_metrics_data,
    panel_specs,
    reports_read,
)
from haf_tui.tui.run_cache import DatabaseState
from haf_tui.tui.screens import metrics
from haf_tui.tui.screens.metrics import MetricsScreen
from haf_tui.tui.widgets.metric_panels import render_panel
from tests.support import settle
from tests.test_tui_metrics import plain, shown
from tests.test_tui_metrics import template_db as template_db  # (the hand-made store)
from tests.test_tui_metrics import toy_db as toy_db

DEADLINE_SECONDS = 60.0
"""How long a wait may take before it counts as "never"."""


async def _until(pilot: Pilot[Any], condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not condition():
        assert time.monotonic() < deadline, "the screen never got there"
        await pilot.pause(0.01)


BUSY = (WorkerState.PENDING, WorkerState.RUNNING)


def _drawing(app: Any) -> bool:
    return any(
        worker.group == "metrics-draw"
        and worker.state in (WorkerState.PENDING, WorkerState.RUNNING)
        for worker in app.workers
    )


def _read_at_once(store: Store, runs: list[RunInfo]) -> MetricsData:
    """What the screen read before it read the shown panel first: every report, histogram and
    panel loader at once."""
    specs = panel_specs()
    reports = {name: run_report(store, name) for name in reports_read(specs)}
    histograms = bin_values(store, runs, histogram_metrics(specs))
    extra = {spec.key: spec.load(store, reports) for spec in specs if spec.load is not None}
    return MetricsData(runs, reports, histograms, extra)


async def test_the_first_panel_is_drawn_before_the_others_are_read(
    toy_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first_read, rest_read = threading.Event(), threading.Event()
    asked: list[Sequence[str] | None] = []

    def held(
        store: Store,
        panes: Sequence[str] | None = None,
        known: MetricsData | None = None,
        state: DatabaseState | None = None,
    ) -> MetricsData:
        asked.append(panes)
        release = first_read if panes is not None else rest_read
        assert release.wait(DEADLINE_SECONDS), "the test never let the read go"
        return load_metrics_data(store, panes, known, state)

    monkeypatch.setattr(metrics, "load_metrics_data", held)
    panes = [spec.key for spec in panel_specs()]
    first, other = panes[0], panes[1]
    app = create_app(toy_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = MetricsScreen()
        app.push_screen(screen)
        await pilot.pause()
        assert app.screen is screen  # the frame, before anything was read
        assert str(screen.query_one("#mx-status", Static).render()) == "loading …"
        assert shown(screen, first).strip() == "loading …"
        first_read.set()
        await _until(pilot, lambda: shown(screen, first).strip() != "loading …")
        await _until(pilot, lambda: not _drawing(app))  # (every panel it may draw, drawn)
        assert asked[0] == [first]
        assert screen.data is not None and screen.data.loaded == frozenset([first])
        assert shown(screen, other).strip() == "loading …"  # not read yet, not drawn
        assert str(screen.query_one("#mx-status", Static).render()).startswith("runs 2/2")
        rest_read.set()
        await settle(pilot)
        assert screen.data is not None and screen.data.loaded is None
        assert all(shown(screen, pane).strip() != "loading …" for pane in panes)
        runs = screen.chosen_runs()
        with open_store(toy_db, read_only=True) as store:
            at_once = _read_at_once(store, screen.data.runs)
        for pane in panes:
            expected = plain(render_panel(pane, at_once, runs, width=100))
            assert plain(render_panel(pane, screen.data, runs, width=100)) == expected, pane


def test_the_screens_runs_are_the_runs_lists(toy_db: Path) -> None:
    """The screen reads its runs without the runs list's means (the cheaper read, issue 44
    §2); every field it shows is the runs list's, in its order: a label, suites, a run whose
    writer is gone (interrupted), one with no finished instance."""
    with open_store(toy_db) as store:
        first = store.list_runs()[0]["run_id"]
        store.connection.execute(
            "INSERT INTO runs (run_id, created_at, status, dataset_id, n_planned, config, "
            "model_file, similarity_model, similarity_kind, label, writer_pid, writer_host) "
            "SELECT 'gone-run', TIMESTAMP '2030-01-01', 'running', dataset_id, 7, "
            '\'{"suites": ["haf", "classify"]}\', \'other.gguf\', similarity_model, '
            "similarity_kind, 'mine', NULL, NULL FROM runs LIMIT 1"
        )
        store.connection.execute("UPDATE runs SET label = 'named' WHERE run_id = ?", [first])
    with open_store(toy_db, read_only=True) as store:
        expected = [
            RunInfo(
                run.run_id,
                run.model_file,
                run.dataset_id,
                run.status,
                run.done,
                run.suites,
                run.label,
                run.planned,
            )
            for run in run_overviews(store)
        ]
        read = load_metrics_data(store, [panel_specs()[0].key]).runs
    assert read == expected
    assert read[0].run_id == "gone-run"
    assert read[0].status == "interrupted" and read[0].suites == ("haf", "classify")
    assert read[0].n_done == 0 and read[0].n_planned == 7 and read[0].run_label == "mine"
    assert next(run for run in read if run.run_id == first).run_label == "named"
