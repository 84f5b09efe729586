"""The comparison view (issue 18 §6), driven by keys on a seeded synthetic store: ``c`` opens
it from the runs list, ``space`` / ``a`` choose runs (marked ● / ○), the statistics show each
metric's bootstrap interval and the paired line with n, and ``]`` / ``[`` / ``/`` step through
one instance across runs side by side. Snapshots at 80×24 and 160×48."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable

from benchmarks.benchdata import build_bench_db
from haf_tui.reports import format_number
from haf_tui.reports.registry import run_report
from haf_tui.store import open_store
from haf_tui.store.annotations import set_run_label
from haf_tui.tui import create_app
from haf_tui.tui.screens.compare import CompareScreen
from haf_tui.tui.screens.metrics import MetricsScreen
from haf_tui.tui.widgets.panel_view import PanelView
from tests.support import settle, static_text

DOCS_SCREENSHOT_ENV = "HAF_DOCS_SCREENSHOT"
"""Set to a path (docs/compare.svg) to write the screenshot of docs/usage.md there."""


@pytest.fixture(scope="module")
def template_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """Two runs of one synthetic dataset: run1 finished 20 instances, run2 19 (interrupted)."""
    path = tmp_path_factory.mktemp("compare") / "template.duckdb"
    run_ids = build_bench_db(path, n_instances=20, n_runs=2, seed=7)
    with open_store(path) as store:  # (a fixed date: the list shows it; run1 lists first)
        store.connection.execute("UPDATE runs SET created_at = TIMESTAMP '2026-01-02 03:04:05'")
    return path, run_ids


@pytest.fixture
def db(template_db: tuple[Path, list[str]], tmp_path: Path) -> Path:
    path = tmp_path / "haf.duckdb"
    shutil.copyfile(template_db[0], path)
    return path


def _view(app: Any, pane: str) -> str:
    return str(app.screen.query_one(f"#cmp-{pane}-view", PanelView).text())


def _marks(app: Any) -> list[str]:
    table = app.screen.query_one("#cmp-runs", DataTable)
    return [str(table.get_row_at(row)[0]) for row in range(table.row_count)]


def _checksum(path: Path) -> list[tuple[Any, ...]]:
    with open_store(path, read_only=True) as store:
        tables = ("runs", "instance_metrics", "reason_metrics", "instance_results")
        return [store.query(f"SELECT count(*), sum(hash(t)) FROM {t} AS t")[1][0] for t in tables]


def _line(text: str, label: str) -> str:
    return next(line for line in text.splitlines() if line.split()[:1] == [label])


async def test_c_opens_the_comparison_with_intervals_and_the_paired_line(
    db: Path, template_db: tuple[Path, list[str]]
) -> None:
    run1, run2 = template_db[1]
    before = _checksum(db)
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        assert isinstance(app.screen, CompareScreen)
        # fewer than two runs finished: every run is chosen, lettered in the list's order
        assert _marks(app) == ["● A", "● B"]
        assert "runs 2/2 chosen" in static_text(app.screen, "#cmp-status")
        shown = _view(app, "stats")
        assert f"A  {run1} · " in shown and f"B  {run2} · " in shown
        assert "95 % bootstrap CI" in shown and "paired B − A" in shown
        with open_store(db, read_only=True) as store:
            sql = (
                "SELECT avg(value), count(value) FROM instance_metrics "
                "WHERE run_id = $r AND metric = 'sos'"
            )
            mean, n = store.query(sql, {"r": run1})[1][0]
            pairs_sql = (
                "SELECT count(*) FROM instance_metrics a JOIN instance_metrics b "
                "USING (instance_id, metric) WHERE a.run_id = $a AND b.run_id = $b "
                "AND metric = 'sos' AND a.value IS NOT NULL AND b.value IS NOT NULL"
            )
            pairs = store.query(pairs_sql, {"a": run1, "b": run2})[1][0][0]
            only = store.query(
                "SELECT instance_id FROM instance_results WHERE run_id = $a "
                "EXCEPT SELECT instance_id FROM instance_results WHERE run_id = $b",
                {"a": run1, "b": run2},
            )[1]
        means, paired = shown.split("paired B − A", 1)
        means_sos = _line(means, "SoS").split()
        assert means_sos[1] == format_number(mean) and means_sos[4] == str(n)
        assert means_sos[2].startswith("[") and means_sos[3].endswith("]")
        paired_sos = _line(paired, "SoS").split()
        assert paired_sos[5] == str(pairs)  # n pairs
        assert f"only A: {only[0][0]}" in shown and len(only) == 1
    assert _checksum(db) == before  # the view only reads


async def test_space_and_a_choose_runs_marked_by_a_character(db: Path) -> None:
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        await pilot.press("space")  # the run under the cursor (run1) is dropped
        await settle(pilot)
        assert _marks(app) == ["○", "● A"]
        assert "runs 1/2 chosen" in static_text(app.screen, "#cmp-status")
        assert "pick a second run" in _view(app, "stats")
        assert "paired B" not in _view(app, "stats")
        await pilot.press("a")  # not all chosen: all, run2 (chosen already) still A
        await settle(pilot)
        assert _marks(app) == ["● B", "● A"]
        await pilot.press("a")  # all chosen: none
        await settle(pilot)
        assert _marks(app) == ["○", "○"]
        assert "no runs chosen" in _view(app, "stats")
        await pilot.press("space", "down", "space")  # run1 first, then run2: B
        await settle(pilot)
        assert _marks(app) == ["● A", "● B"]  # letters follow the order chosen
        assert "paired B − A" in _view(app, "stats")
        await pilot.press("up", "space", "space")  # run1 dropped, chosen again: after run2
        await settle(pilot)
        assert _marks(app) == ["● B", "● A"]  # run2 is the reference now
        assert "paired B − A" in _view(app, "stats")
        assert "A: the reference, the first run chosen" in _view(app, "stats")


async def test_one_instance_across_runs_side_by_side(db: Path) -> None:
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        await pilot.press("right_square_bracket")
        await settle(pilot)
        shown = _view(app, "instance")
        assert shown.startswith("t00001") and "2 of 20" in shown
        assert "A · Llama" in shown and "B · Llama" in shown
        with open_store(db, read_only=True) as store:
            stance_sql = (
                "SELECT run_id, stance FROM instance_results WHERE instance_id = 't00001' "
                "ORDER BY run_id"
            )
            stances = store.query(stance_sql)[1]
            sos_sql = (
                "SELECT value FROM reason_metrics WHERE instance_id = 't00001' AND run_id = $r "
                "AND stage = 'justify' AND metric = 'sos' ORDER BY reason_index"
            )
            reason_sos = [v for (v,) in store.query(sos_sql, {"r": stances[0][0]})[1]]
        stance_line = _line(shown, "stance")
        assert all(str(stance) in stance_line for _, stance in stances)
        assert reason_sos and all(format_number(v) in shown for v in reason_sos)
        view = app.screen.query_one("#cmp-instance-view", PanelView)
        assert view.virtual_size.width > view.size.width  # two runs side by side at 80 columns
        view.focus()
        await pilot.press("right", "right", "down")
        await settle(pilot)
        assert view.scroll_x > 0 and view.scroll_y > 0  # it scrolls both ways
        await pilot.press("left_square_bracket")
        await settle(pilot)
        assert _view(app, "instance").startswith("t00000")
        await pilot.press("slash")
        await pilot.press(*"t00019", "enter")
        await settle(pilot)
        shown = _view(app, "instance")
        assert shown.startswith("t00019") and "20 of 20" in shown
        assert "not finished in this run" in shown  # run2 stopped before it
        await pilot.press("slash", *"nope", "enter")
        await settle(pilot)
        assert any("no instance 'nope'" in n.message for n in app._notifications)
        await pilot.press("escape", "escape")
        await settle(pilot)
        assert not isinstance(app.screen, CompareScreen)


async def test_c_on_the_metrics_screen_compares_the_runs_picked_there(
    db: Path, template_db: tuple[Path, list[str]]
) -> None:
    run2 = template_db[1][1]
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.push_screen(MetricsScreen([run2]))
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        assert isinstance(app.screen, CompareScreen)
        assert _marks(app) == ["○", "● A"]
        assert f"A  {run2} · " in _view(app, "stats") and "pick a second run" in _view(app, "stats")
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, MetricsScreen)


async def _open_compare(pilot: Pilot[Any], pane: str = "stats") -> None:
    await settle(pilot)
    await pilot.press("c")
    await settle(pilot)
    if pane == "instance":
        await pilot.press("right_square_bracket")
        await settle(pilot)


@pytest.mark.parametrize(
    ("size", "pane"),
    [((80, 24), "stats"), ((160, 48), "stats"), ((80, 24), "instance"), ((160, 48), "instance")],
    ids=["80x24-stats", "160x48-stats", "80x24-instance", "160x48-instance"],
)
def test_compare_snapshot(snap_compare: Any, db: Path, size: tuple[int, int], pane: str) -> None:
    async def prepare(pilot: Pilot[Any]) -> None:
        await _open_compare(pilot, pane)

    assert snap_compare(create_app(db), terminal_size=size, run_before=prepare)


async def test_the_readme_screenshot(db: Path, tmp_path: Path) -> None:
    """Writes docs/usage.md's picture where ``HAF_DOCS_SCREENSHOT`` says (else to tmp_path)."""
    target = Path(os.environ.get(DOCS_SCREENSHOT_ENV) or tmp_path / "compare.svg")
    app = create_app(db)
    async with app.run_test(size=(120, 36)) as pilot:
        await _open_compare(pilot)
        app.save_screenshot(target.name, path=str(target.parent.resolve()))
    assert "paired B − A" in target.read_text(encoding="utf-8").replace("&#160;", " ")


async def test_a_run_labelled_like_markup_is_compared_by_its_label(
    db: Path, template_db: tuple[Path, list[str]]
) -> None:
    """A label is text (issue 42 §6): ``[/]`` once stopped the comparison's legend."""
    run1, _ = template_db[1]
    with open_store(db) as store:
        set_run_label(store, run1, "[/] [bold]base")
    app = create_app(db)
    async with app.run_test(size=(120, 30)) as pilot:
        await _open_compare(pilot)
        assert isinstance(app.screen, CompareScreen)
        assert f"A  [/] [bold]base ({run1}) · " in _view(app, "stats")


@pytest.mark.parametrize("order", [(0, 1), (1, 0)], ids=["run1-first", "run2-first"])
async def test_the_reference_is_the_first_run_asked_as_in_compare_ci(
    db: Path, template_db: tuple[Path, list[str]], order: tuple[int, int]
) -> None:
    """The screen opened with runs (the metrics screen's, a campaign's) compares each with the
    first asked, as ``haf report --report compare-ci --run A --run B`` does: the same Δ, its
    sign included, whichever run the list shows first."""
    run_ids = [template_db[1][at] for at in order]
    app = create_app(db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        await app.push_screen(CompareScreen(run_ids))
        await settle(pilot)
        assert isinstance(app.screen, CompareScreen)
        stats = list(app.screen.stats)
        assert f"{stats[1].letter} − {stats[0].letter}" in _view(app, "stats")
    assert [found.run.run_id for found in stats] == run_ids
    with open_store(db, read_only=True) as store:
        result = run_report(store, "compare-ci", {"run_ids": run_ids})
    labels = {spec.label: spec.name for spec in stats[1].metrics}
    paired = stats[1].paired
    assert paired is not None
    rows = [dict(zip(result.columns, row, strict=True)) for row in result.rows]
    compared = [row for row in rows if row["run"] == run_ids[1] and row["metric"] in labels]
    assert {row["metric"] for row in compared} == set(labels)
    for row in compared:
        shown = paired[labels[row["metric"]]]
        assert (shown.mean, shown.low, shown.high) == (
            row["Δ vs first"],
            row["Δ CI low"],
            row["Δ CI high"],
        )


async def test_the_run_under_the_lists_cursor_is_the_reference(
    db: Path, template_db: tuple[Path, list[str]]
) -> None:
    """``c`` on the runs list compares the runs sharing a suite with the run under its cursor,
    that run first (A, the reference): each Δ is the other run minus it, wherever the list
    shows it."""
    run1, run2 = template_db[1]
    app = create_app(db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        await pilot.press("down")  # (run2, listed second)
        await pilot.press("c")
        await settle(pilot)
        assert isinstance(app.screen, CompareScreen)
        stats = list(app.screen.stats)
        assert [found.run.run_id for found in stats] == [run2, run1]
        assert _marks(app) == ["● B", "● A"]
        assert "A: the reference, the first run chosen; each Δ is a run − A" in _view(app, "stats")
        assert "paired B − A" in _view(app, "stats")
