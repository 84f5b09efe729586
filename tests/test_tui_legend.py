"""Say what the numbers mean (issue 18 §7): ``?`` defines each metric with its range and better
direction, the metrics screen and the explorer show a legend of the metrics and their marks,
and the token view shows the token under the cursor with its logprob and its relevance."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest
from textual.pilot import Pilot
from textual.widgets import Markdown, Static

from benchmarks.benchdata import build_bench_db
from benchmarks.tui_latency import settle as app_settle
from haf_tui.tui import create_app
from haf_tui.tui.definitions import MARKS, METRIC_DEFINITIONS, METRICS_BY_LABEL, SHORT_MEANINGS
from haf_tui.tui.screens.explorer import EXPLORER_MARKS, ExplorerScreen
from haf_tui.tui.screens.help import HelpScreen, help_markdown
from haf_tui.tui.screens.metrics import MetricsScreen
from haf_tui.tui.widgets.legend import Legend
from haf_tui.tui.widgets.token_view import Span, TokenView

RunDb = tuple[Path, str]


@pytest.fixture(scope="module")
def synth_db(tmp_path_factory: pytest.TempPathFactory) -> RunDb:
    path = tmp_path_factory.mktemp("legend") / "haf.duckdb"
    return path, build_bench_db(path, n_instances=20, n_runs=1, seed=3)[0]


async def wait(pilot: Pilot[Any]) -> None:
    await pilot.pause()
    await app_settle(pilot)


def rows(db: Path, sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql, params).fetchall()


def test_every_metric_has_a_definition_range_and_direction() -> None:
    assert [m.label for m in METRIC_DEFINITIONS] == ["SoS", "DiS", "UII", "UEI", "RS", "RN"]
    assert all(m.definition and m.value_range == "0–1" for m in METRIC_DEFINITIONS)
    assert {m.label for m in METRIC_DEFINITIONS if m.better == "lower"} == {"UII", "UEI"}
    text = help_markdown()
    for metric in METRIC_DEFINITIONS:
        assert f"**{metric.label}** (0–1, {metric.better} is better)" in text
    for mark in MARKS:
        assert f"| `{mark.mark}` | {mark.meaning} |" in text
    assert set(SHORT_MEANINGS) <= {mark.mark for mark in MARKS}


def test_span_relevance_and_weight() -> None:
    span = Span(3, 3, (0.2, 0.6, 0.2))
    found = span.relevance_at(4)
    assert found is not None and found[0] == 0.6 and found[1] == pytest.approx(0.6)
    assert span.relevance_at(2) is None and span.relevance_at(6) is None
    assert Span(0, 2, (0.0, 0.0)).relevance_at(1) == (0.0, 0.5)  # uniform when Σ R = 0


async def test_question_mark_on_the_metrics_screen_defines_sos(synth_db: RunDb) -> None:
    db, _ = synth_db
    async with create_app(db).run_test(size=(80, 24)) as pilot:
        await wait(pilot)
        await pilot.press("m")
        await wait(pilot)
        assert isinstance(pilot.app.screen, MetricsScreen)
        legend = pilot.app.screen.query_one("#mx-legend", Legend)
        shown = str(legend.render())
        assert legend.display and legend.region.height >= 1
        assert legend.region.bottom <= pilot.app.screen.region.bottom - 1  # above the footer
        assert "SoS↑" in shown and "UII↓" in shown and "◆: edit's target" in shown
        await pilot.press("question_mark")
        await wait(pilot)
        help_screen = pilot.app.screen
        assert isinstance(help_screen, HelpScreen)
        sos = METRICS_BY_LABEL["SoS"]
        assert f"**SoS** (0–1, higher is better): {sos.definition}" in help_screen.text
        assert help_screen.text.index("## Keys here: Metrics") < help_screen.text.index("**SoS**")
        assert "| `g` | pooling | Pooling |" in help_screen.text
        assert help_screen.query_one(Markdown).display


async def test_the_explorer_legend_and_the_token_under_the_cursor(synth_db: RunDb) -> None:
    db, run_id = synth_db
    async with create_app(db).run_test(size=(80, 24)) as pilot:
        await wait(pilot)
        pilot.app.push_screen(ExplorerScreen(run_id))
        await wait(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, ExplorerScreen) and screen.current is not None
        legend = screen.query_one("#ex-legend", Legend)
        assert legend.display and legend.region.height >= 1 and legend.marks == EXPLORER_MARKS
        assert "U: UNCLEAR · !: contradiction" in str(legend.render())
        first, count, relevance = rows(
            db,
            "SELECT token_first, token_count, relevance FROM reasons WHERE run_id = ? AND "
            "instance_id = ? AND stage = 'justify' AND sub_index = -1 AND reason_index = 0",
            [run_id, screen.current],
        )[0]
        assert count >= 2
        view = screen.query_one("#ex-tokens", TokenView)
        assert view.cursor == 0
        status = view.query_one("#tv-status", Static)
        for _ in range(first + 1):  # into the first reason, its second token
            await pilot.press("greater_than_sign")
        assert view.cursor == first + 1
        ((text, logprob),) = rows(
            db,
            "SELECT text, logprob FROM tokens WHERE run_id = ? AND instance_id = ? AND "
            "stage = 'justify' AND sub_index = -1 AND position = ?",
            [run_id, screen.current, first + 1],
        )
        shown = str(status.render())
        assert repr(text) in shown and f"logprob {logprob:.3f}" in shown
        weight = relevance[1] / sum(relevance)
        assert f"relevance {relevance[1]:.3f} (weight {weight:.2f}, reason 1)" in shown
        assert "green likely → red unlikely" in shown  # what the NLL colours mean
        await pilot.press("l")
        assert "green high → red low" in str(status.render())
