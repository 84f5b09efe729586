"""A method registered at runtime shows in the metrics screen with no change to any face:
its panel (tab, key 9, its report's rows, drawn generically) and its legend, and ``?`` defines
its metric (issue 26)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from textual.widgets import TabbedContent

from benchmarks.benchdata import build_bench_db
from haf_tui.methods.base import Suite
from haf_tui.methods.declare import Method, MetricSpec, PanelSpec
from haf_tui.methods.registry import methods
from haf_tui.reports import queries
from haf_tui.reports.registry import REPORTS, Report
from haf_tui.tui import create_app
from haf_tui.tui.screens.help import help_markdown
from haf_tui.tui.widgets.legend import Legend
from tests.support import settle
from tests.test_tui_metrics import open_metrics, shown

TOY_QUERY = """\
-- name: toy_rows
-- title: Toy rows
-- description: Per run: its stored instance results.
SELECT run_id AS run, count(*) AS "toy n" FROM instance_results GROUP BY run_id ORDER BY run_id
"""
TOY_SCORE = MetricSpec("toy_score", "ToyScore", "how toy-like the answer is", better="lower")


@pytest.fixture
def toy_method(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Method[Any]:
    """The toy method in the registry, with its report over a named query of its own folder
    (registered as loading a method registers them), all undone after the test."""
    folder = tmp_path / "toy_queries"
    folder.mkdir()
    (folder / "toy_rows.sql").write_text(TOY_QUERY, encoding="utf-8")
    report = Report("toy-rows", "Toy — rows per run", "toy_rows")
    method: Method[Any] = Method(
        name="toy",
        title="Toy",
        description="a method registered at runtime",
        suite=cast(Suite, SimpleNamespace(name="toy", stages=(), titles={})),
        metrics=(TOY_SCORE,),
        reports=(report,),
        queries_dir=folder,
        panels=(PanelSpec("toy", "Toy", reports=(report.name,), legend=(TOY_SCORE.name,)),),
    )
    monkeypatch.setitem(methods(), "toy", method)
    monkeypatch.setitem(REPORTS, report.name, report)
    monkeypatch.setattr(queries, "METHOD_QUERY_DIRS", [*queries.METHOD_QUERY_DIRS, folder])
    return method


async def test_a_runtime_method_shows_its_panel_and_legend(
    toy_method: Method[Any], tmp_path: Path
) -> None:
    db = tmp_path / "haf.duckdb"
    run_ids = build_bench_db(db, n_instances=5, n_runs=2, seed=5)
    async with create_app(db).run_test(size=(120, 40)) as pilot:
        screen = await open_metrics(pilot)
        tabs = screen.query_one("#mx-tabs", TabbedContent)
        assert str(tabs.get_tab("toy").label) == "9 Toy"
        legend = screen.query_one("#mx-legend", Legend)
        assert "SoS↑" in str(legend.render())  # Table 1's legend first
        await pilot.press("9")
        await settle(pilot)
        assert tabs.active == "toy"
        text = shown(screen, "toy")
        assert "Toy — rows per run" in text and "toy n" in text
        for run_id in run_ids:
            assert run_id in text
        shown_legend = str(legend.render())
        assert "ToyScore↓ 0–1 (↓ lower is better)" in shown_legend and "SoS" not in shown_legend
        assert f"**ToyScore**{TOY_SCORE.line().removeprefix('ToyScore')}" in help_markdown(screen)
        await pilot.press("right_square_bracket")  # after the last panel: Table 1 again
        assert tabs.active == "table1"
        assert "SoS↑" in str(legend.render())
