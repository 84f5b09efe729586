"""Every number a metric panel prints stays whole (issue 34 §6: "0.098 n=", "█… 1 100",
"37.5% 3/" at 200×50). Two checks: each chart squeezed by its container gives up its bar,
never its value or its note; and every panel of the metrics screen, at 80×24, 120×40 and
200×50, over a store of several runs (three HAF runs of different models, one of them with
fewer instances, a rationales run and a judge run), shows every number of its data whole
(Pilot; the numbers come from the same rows drawn at a width nothing is squeezed at)."""

from __future__ import annotations

import io
import re
from collections import Counter
from pathlib import Path

import pytest
from rich.console import Console, RenderableType

from benchmarks.benchdata import build_bench_db
from haf_tui.reports import charts, format_value
from haf_tui.reports.panel_tables import report_rows
from haf_tui.store import open_store
from haf_tui.tui import create_app
from haf_tui.tui.metrics_data import MetricsData, load_metrics_data, panel_specs
from haf_tui.tui.screens.metrics import MetricsScreen, PanelView
from haf_tui.tui.widgets.metric_panels import render_panel
from haf_tui.tui.widgets.panel_view import MAX_DRAWN_WIDTH, render_strips
from tests.support import settle
from tests.support.judge_runs import store_judge_run
from tests.support.rationale_runs import store_rationale_run

NUMBER = re.compile(r"(?<![\w.%/=-])(?:n=)?-?\d+(?:\.\d+)?%?(?:/\d+)?(?![\w.%/=])")
"""A number as the panels print it: 0.098, n=12, 37.5%, 3/8, 100% (not one inside a name)."""


def numbers(text: str) -> Counter[str]:
    """The numbers in ``text``, each as often as it is printed."""
    return Counter(NUMBER.findall(text))


ROW_CHECKED = ("table1", "table2", "table4", "figure2", "stances")
"""HAF's panels, whose numbers are also checked against their report rows one by one."""
CHARTS = ("figure2", "distributions", "stances")
"""The panels of charts, whose numbers are also whole within the view's width."""
SHARE_DIGITS = {("stances", "%"): 1}
"""Columns a panel prints with other digits than a table's 3."""


def row_numbers(pane: str, data: MetricsData, run_ids: list[str]) -> set[str]:
    """Every number of the report rows ``pane`` draws for ``run_ids``, as printed."""
    spec = next(spec for spec in panel_specs() if spec.key == pane)
    wanted: set[str] = set()
    for name in spec.reports:
        result = data.reports[name]
        for row in report_rows(result, run_ids):
            for column, value in zip(result.columns, row, strict=True):
                if isinstance(value, bool) or not isinstance(value, int | float):
                    continue
                if column in ("pooling", "run") or format_value(value) == "—":
                    continue
                wanted.add(format_value(value, SHARE_DIGITS.get((name, column), 3)))
    return wanted


def shown_whole(number: str, text: str) -> bool:
    """Whether ``number`` is printed in ``text`` with nothing of it cut."""
    return re.search(rf"(?<![\d.]){re.escape(number)}(?![\d…]|\.\d)", text) is not None


def printed(renderable: RenderableType, width: int) -> str:
    console = Console(width=width, file=io.StringIO(), color_system=None, legacy_windows=False)
    console.print(renderable)
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert isinstance(out, str)
    return out


# ---------------------------------------------------------------- a chart squeezed


FIGURE2_ROWS = [
    {"stance": "toxic", "confidence": "low", "SoS": 0.098, "SoS n": 12},
    {"stance": "toxic", "confidence": "high", "SoS": 0.5, "SoS n": 3},
    {"stance": "non-toxic", "confidence": "medium", "SoS": None, "SoS n": 0},
]
STANCE_ROWS = [
    {"stance": "toxic", "n": 3, "%": 37.5, "of": 8},
    {"stance": "non-toxic", "n": 5, "%": 62.5, "of": 8},
]


@pytest.mark.parametrize("squeeze", [1, 4, 12])
@pytest.mark.parametrize("chart", ["figure2", "stances", "histogram"])
def test_a_squeezed_chart_keeps_its_numbers_whole(chart: str, squeeze: int) -> None:
    width = 60
    drawn: RenderableType = {
        "figure2": lambda: charts.figure2_chart(FIGURE2_ROWS, "SoS", width=width),
        "stances": lambda: charts.stance_chart(STANCE_ROWS, width=width),
        "histogram": lambda: charts.render_histogram(
            charts.histogram([0.95, 0.1, 0.12, 0.13]), width=width
        ),
    }[chart]()
    whole = numbers(printed(drawn, width))
    assert whole  # (the chart prints numbers to lose)
    squeezed = printed(drawn, width - squeeze)
    assert numbers(squeezed) == whole, squeezed
    assert all(len(line) <= width - squeeze for line in squeezed.splitlines())


@pytest.mark.parametrize("chart", ["figure2", "stances", "histogram"])
def test_a_chart_cut_at_its_right_edge_loses_bar_never_a_number(chart: str) -> None:
    """A view narrower than a chart crops it on the right (issue 42 §3: "50.0% 8/1" for 8 of
    16, "1 100" for 1 at 100%): the bar comes last, so a crop cuts a bar, never a count."""
    width = 60
    drawn: RenderableType = {
        "figure2": lambda: charts.figure2_chart(FIGURE2_ROWS, "SoS", width=width),
        "stances": lambda: charts.stance_chart(
            [{"stance": "maybe", "n": 8, "%": 50.0, "of": 16}] * 2, width=width
        ),
        "histogram": lambda: charts.render_histogram(charts.histogram([0.5]), width=width),
    }[chart]()
    text = printed(drawn, width)
    whole = numbers(text)
    assert (
        whole
        and ("8/16" in whole or chart != "stances")
        and ("100%" in whole or chart != "histogram")
    )
    for cut in range(1, 20):
        cropped = "\n".join(line[: width - cut] for line in text.splitlines())
        assert numbers(cropped) == whole, cropped


# ---------------------------------------------------------------- every panel on screen


@pytest.fixture(scope="module")
def several_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three HAF runs of three models (the last interrupted: fewer instances), a rationales
    run and a judge run over the first's explanations."""
    db = tmp_path_factory.mktemp("panels") / "haf.duckdb"
    haf_runs = build_bench_db(db, n_instances=37, n_runs=3, seed=5)
    with open_store(db) as store:
        store_rationale_run(store)
        store_judge_run(store, haf_runs[0])
    return db


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 50)])
async def test_every_panel_shows_every_number_whole(
    several_runs: Path, size: tuple[int, int]
) -> None:
    with open_store(several_runs, read_only=True) as store:
        data = load_metrics_data(store)
    assert len(data.runs) == 5
    app = create_app(several_runs)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        screen = MetricsScreen()
        app.push_screen(screen)
        await settle(pilot)
        for spec in panel_specs():
            screen.action_panel(spec.key)
            await settle(pilot)
            view = screen.query_one(f"#mx-body-{spec.key}", PanelView)
            reference = render_strips(
                render_panel(spec.key, data, screen.chosen_runs(), width=MAX_DRAWN_WIDTH),
                MAX_DRAWN_WIDTH,
            )
            wanted = numbers("\n".join(line.text for line in reference))
            assert sum(wanted.values()) > 0, spec.key
            lost = wanted - numbers(view.text())
            assert not lost, f"{spec.key} at {size}: {dict(lost)} not whole\n{view.text()}"
            if spec.key in CHARTS:  # and whole where the view shows it, scrolled to the left
                room = view.scrollable_content_region.width
                seen = "\n".join(line.text[:room] for line in view.lines)
                cut = wanted - numbers(seen)
                assert not cut, f"{spec.key} at {size}: {dict(cut)} cut at the edge\n{seen}"
            if spec.key in ROW_CHECKED:  # and each number of its rows, one by one
                run_ids = [run.run_id for run in screen.chosen_runs()]
                of_rows = row_numbers(spec.key, data, run_ids)
                assert len(of_rows) > 3, spec.key
                missing = {n for n in of_rows if not shown_whole(n, view.text())}
                assert not missing, f"{spec.key} at {size}: {missing}\n{view.text()}"
            # what is drawn fits the view, or the view scrolls to the rest (shift+→)
            widest = max(line.cell_length for line in view.lines)
            room = view.scrollable_content_region.width
            assert widest <= room or view.max_scroll_x >= widest - room, spec.key
