"""The metrics screen's judge panel (key 8, issue 15) and the help's judge definitions: on the
judge run of :mod:`tests.support.judge_runs` (a HAF run's explanations) and on a judge run of
an ACORN import (human ratings: the meta tables)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import SelectionList, TabbedContent

from haf_tui.methods.judge.core.metrics import spearman
from haf_tui.methods.judge.reports.meta import meta_items, meta_tables
from haf_tui.methods.judge.views.panel import NO_JUDGE
from haf_tui.reports import charts, format_number
from haf_tui.store import open_store
from haf_tui.tui import create_app
from haf_tui.tui.metrics_data import load_metrics_data
from haf_tui.tui.screens.help import help_markdown
from haf_tui.tui.screens.metrics import MetricsScreen
from haf_tui.tui.widgets.metric_panels import panel_tabs, render_panel
from tests.support import settle
from tests.support.judge_runs import JUDGE_RUN, SOURCE_RUN, judge_store
from tests.test_tui_metrics import open_metrics, plain, shown


@pytest.fixture(scope="module")
def template_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("judge-tui") / "j.duckdb"
    judge_store(path).close()
    return path


@pytest.fixture
def judge_db(template_db: Path, tmp_path: Path) -> Path:
    path = tmp_path / "j.duckdb"
    shutil.copyfile(template_db, path)
    return path


@pytest.fixture(scope="module")
def acorn_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An ACORN import (the meta tests' rows) judged by the suite tests' scripted judge."""
    from haf_tui.cli import main
    from tests.support.acorn_rows import acorn_rows, write_rows
    from tests.test_judge_suite import _judge_run

    folder = tmp_path_factory.mktemp("acorn-tui")
    acorn = write_rows(folder / "ACORN.jsonl", acorn_rows())
    db = folder / "haf.duckdb"
    assert main(["--db", str(db), "datasets", "import", "acorn", "--file", str(acorn)]) == 0
    with open_store(db) as store:
        ((dataset_id, n),) = store.query("SELECT dataset_id, count(*) FROM instances GROUP BY 1")[1]
        _judge_run(store, "acorn-judged", dataset_id, n, "default")
    return db


def judge_text(db: Path, run_ids: list[str] | None = None, width: int = 120) -> str:
    with open_store(db, read_only=True) as store:
        data = load_metrics_data(store)
    runs = [r for r in data.runs if run_ids is None or r.run_id in run_ids]
    return plain(render_panel("judge", data, runs, width=width), width=width)


# ---------------------------------------------------------------- the panel (no Textual)


def test_the_judge_panel_is_key_8() -> None:
    assert [pane for pane, _ in panel_tabs()].index("judge") == 7


def test_the_panel_shows_the_report_warnings_and_the_heat_grids(template_db: Path) -> None:
    text = judge_text(template_db)
    assert "Judge — ACORN criteria" in text
    assert "0.375" in text  # Overall's normalised mean
    assert "33.333" in text and "16.667" in text  # mismatches 2/6, mass warnings 1/6
    assert "label mass < 0.5 in judge · explanations-source · judged: i1 overall 0.25" in text
    assert f"without the judge suite (not shown): scripted · tiny · {SOURCE_RUN}" in text
    assert "judge Overall × SoS" in text and "judge Overall × DiS" in text
    with open_store(template_db, read_only=True) as store:
        pairs = store.query(
            "SELECT j.value, h.value FROM instance_metrics j JOIN instance_metrics h "
            "USING (instance_id) WHERE j.run_id = ? AND j.metric = 'judge_overall' "
            "AND h.run_id = ? AND h.metric = 'sos'",
            [JUDGE_RUN, SOURCE_RUN],
        )[1]
    rho = spearman([p[0] for p in pairs], [p[1] for p in pairs])
    assert rho is not None
    assert f"Spearman ρ(Overall, SoS) = {rho:+.3f}, n = 6" in text
    assert "n = 6 pairs" in text


def test_no_judge_runs_chosen_or_stored(template_db: Path, tmp_path: Path) -> None:
    assert "no judge runs chosen" in judge_text(template_db, [SOURCE_RUN])
    db = tmp_path / "empty.duckdb"
    open_store(db).close()
    assert "no run stored yet" in judge_text(db)
    with open_store(template_db, read_only=True) as store:
        data = load_metrics_data(store)
    data.reports["judge"] = data.reports["judge"].__class__("judge", "t", ["run"], [])
    assert (
        plain(render_panel("judge", data, data.runs, width=100)).strip().startswith(NO_JUDGE[:40])
    )


def test_the_heat_grid_bins_pairs_by_level() -> None:
    grid = charts.heat_grid(
        [(0.0, 1), (0.1, 1), (1.0, 5), (0.55, 3), (None, 2), (0.5, None), (0.2, 7)], (5, 4, 3, 2, 1)
    )
    assert (grid.lo, grid.hi, grid.n, grid.left_out) == (0.0, 1.0, 4, 3)
    assert grid.counts == ((0, 0, 0, 0, 1), (0,) * 5, (0, 0, 1, 0, 0), (0,) * 5, (2, 0, 0, 0, 0))
    text = plain(charts.render_heat_grid(grid, title="t", x_label="SoS", y_label="Overall"))
    assert "Overall ╲ SoS" in text and "█  2" in text and "3 without both values" in text


def test_the_meta_tables_of_an_acorn_judge_run(acorn_db: Path) -> None:
    text = judge_text(acorn_db)
    for title in ("Table 4.1", "Table 4.2", "Table 4.5"):
        assert title in text
    assert "Fig. 4.3" not in text  # the screen leaves the slow curve to haf judge meta
    with open_store(acorn_db, read_only=True) as store:
        prompt, items = meta_items(store, "acorn-judged")
        (bias,) = meta_tables(items, tables=("bias",))
    assert f"{len(items)} explanations rated by humans and judged ({prompt} prompt)" in text
    maes = [row[2] for row in bias.rows if row[2] is not None]
    assert maes and all(format_number(mae) in text for mae in maes)
    assert "judge Overall × SoS" not in text  # no HAF run behind these explanations


# ---------------------------------------------------------------- the screen


async def test_key_8_shows_the_judge_panel(judge_db: Path) -> None:
    app = create_app(judge_db)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_metrics(pilot)
        await pilot.press("8")
        await settle(pilot)
        assert screen.query_one("#mx-tabs", TabbedContent).active == "judge"
        text = shown(screen, "judge")
        assert "0.375" in text and "i1 overall 0.25" in text and "judge Overall × SoS" in text
        screen.query_one("#mx-run-list", SelectionList).deselect(JUDGE_RUN)
        await settle(pilot)
        assert "no judge runs chosen" in shown(screen, "judge")
        await pilot.press("right_square_bracket")  # the last panel: next is Table 1
        assert screen.query_one("#mx-tabs", TabbedContent).active == "table1"


def test_judge_panel_snapshot_120x40(snap_compare: Any, judge_db: Path) -> None:
    async def prepare(pilot: Pilot[Any]) -> None:
        await open_metrics(pilot, MetricsScreen([JUDGE_RUN], panel="judge"))

    assert snap_compare(create_app(judge_db), terminal_size=(120, 40), run_before=prepare)


# ---------------------------------------------------------------- help


def test_help_defines_every_judge_number() -> None:
    help_text = help_markdown()
    assert "Judge (`docs/methods/judge.md`, metrics key `8`" in help_text
    for term in (
        "**label**",
        "**p(label)**",
        "**mass**",
        "mass < 0.5",
        "**E**",
        "**≠ stance**",
        "**normalised mean**",
        "**mismatch rate**",
        "**% failed**",
        "**sensitivity cell**",
        "**ρ**",
    ):
        assert term in help_text, term
