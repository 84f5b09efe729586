# Over 400 lines because every panel of the metrics screen reads the one hand-made store here.
"""The metrics screen and its charts, on a hand-made store of two runs and on a real run.

The hand-made store (built through the Store API, fixed run ids and dates):

Run A (``20250101-100000-aaaa``, alpha-3b.gguf on toy):
  i1 toxic, JUSTIFY C 0.9; internal NO with 1 new reason (a contradiction), external YES;
     SoS 0.8 (reason terms 0.7, 0.9), DiS 0.3, UII 0.5, UEI 0.6, RS 0.2 (reasons 0.1, 0.3);
     SUF decisions NO (C(Y) 0.9, S 1.0, I_S 0.0) and YES (0.5, 0.1, 0.4) for its two reasons
  i2 toxic, C 0.7; internal NO, external NO; SoS 0.4 (0.4), DiS 0.5, UII undefined, UEI 0.2,
     RS 0.4 (0.4)
  i3 maybe, C 0.5; internal YES, external UNCLEAR; SoS 0.6 (0.6), DiS undefined, UII 0.1,
     UEI undefined, RS 0.6 (0.6)
  (only i1 has UPHOLD-STANCE generations, so Table 4 sees i1's two reasons)
  i4 unclear stance, stopped after JUSTIFY: nothing defined. No non-toxic stance: RN undefined.
Run B (``20250102-100000-bbbb``, beta-8b.gguf on toy):
  i1 non-toxic, C 0.95; internal NO, external NO; SoS 0.9, DiS 0.1, UII 0.3, UEI 0.3, RN 0.05
  i2 non-toxic, C 0.65; internal YES, external NO; SoS 0.5, DiS 0.2, UII 0.7, UEI 0.1, RN 0.15
  i3 toxic, C 0.3; internal NO, external YES; SoS 0.2, DiS 0.4, UII 0.9, UEI 0.5, RS 0.5
"""

from __future__ import annotations

import io
import math
import shutil
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console, RenderableType
from textual.pilot import Pilot
from textual.widgets import SelectionList, Static, TabbedContent

from haf_tui.reports import chart_layout, charts
from haf_tui.store import (
    GenerationRecord,
    InstanceRecord,
    InstanceResult,
    ReasonRecord,
    RunRecord,
    Store,
    open_store,
)
from haf_tui.tui import create_app
from haf_tui.tui.metrics_data import load_metrics_data
from haf_tui.tui.screens.metrics import MetricsScreen
from haf_tui.tui.widgets.metric_panels import POOLING_MODES, render_panel
from haf_tui.tui.widgets.panel_view import PanelView
from tests.support import settle

A = "20250101-100000-aaaa"
B = "20250102-100000-bbbb"
NAN = math.nan

# (instance, stance, JUSTIFY C, internal, external, instance metrics, reason metrics, stopped)
RUN_A: list[tuple[Any, ...]] = [
    ("i1", "toxic", 0.9, "NO", "YES",
     {"sos": 0.8, "dis": 0.3, "uii": 0.5, "uei": 0.6, "rs": 0.2},
     {"sos": [0.7, 0.9], "rs": [0.1, 0.3], "c_y": [0.9, 0.5], "decision_weight": [1.0, 0.1],
      "i_s": [0.0, 0.4]}, None),
    ("i2", "toxic", 0.7, "NO", "NO",
     {"sos": 0.4, "dis": 0.5, "uii": NAN, "uei": 0.2, "rs": 0.4},
     {"sos": [0.4], "rs": [0.4]}, None),
    ("i3", "maybe", 0.5, "YES", "UNCLEAR",
     {"sos": 0.6, "dis": NAN, "uii": 0.1, "uei": NAN, "rs": 0.6},
     {"sos": [0.6], "rs": [0.6]}, None),
    ("i4", "unclear", NAN, None, None, {}, {}, "unclear stance"),
]  # fmt: skip
# UPHOLD-STANCE (individual) decisions: (run, instance) -> [(test, decision, C(Y)) per reason]
INDIVIDUAL = {(A, "i1"): [("SUF", "NO", 0.9), ("SUF", "YES", 0.5)]}
RUN_B: list[tuple[Any, ...]] = [
    ("i1", "non-toxic", 0.95, "NO", "NO",
     {"sos": 0.9, "dis": 0.1, "uii": 0.3, "uei": 0.3, "rn": 0.05}, {"sos": [0.9]}, None),
    ("i2", "non-toxic", 0.65, "YES", "NO",
     {"sos": 0.5, "dis": 0.2, "uii": 0.7, "uei": 0.1, "rn": 0.15}, {"sos": [0.5]}, None),
    ("i3", "toxic", 0.3, "NO", "YES",
     {"sos": 0.2, "dis": 0.4, "uii": 0.9, "uei": 0.5, "rs": 0.5}, {"sos": [0.2]}, None),
]  # fmt: skip


def _generation(
    run_id: str, instance: str, stage: str, decision: str, conf: float, sub: int = -1
) -> Any:
    new_reasons = []
    if (run_id, instance, stage) == (A, "i1", "internal"):  # Y = NO yet a new reason
        text = "It also mocks them."
        new_reasons = [ReasonRecord(0, text, 4, 4 + len(text), None, 0, (), (), 0.5)]
    output = f"{decision}.\n"
    return GenerationRecord(
        run_id, instance, stage, sub, "SUF" if sub >= 0 else None, 1, "prompt", 3, output, "stop",
        decision, "rule",
        output.strip(), 0, len(decision) + 1, conf, 0.1, reasons=new_reasons,
    )  # fmt: skip


def build_store(store: Store) -> None:
    """The two hand-made runs described in the module docstring."""
    instances = [InstanceRecord(instance_id=f"i{k}", position=k, text=f"t{k}") for k in range(4)]
    store.save_dataset("toy", "Toy", "hand-made", instances)
    for run_id, model, rows in ((A, "alpha-3b.gguf", RUN_A), (B, "beta-8b.gguf", RUN_B)):
        record = RunRecord(
            run_id=run_id,
            status="finished",
            dataset_id="toy",
            n_planned=len(rows),
            config_json="{}",
            model_file=model,
            similarity_model="minilm",
            similarity_kind="bi-encoder",
        )
        store.create_run(record)
        for instance, stance, conf, internal, external, values, reasons, stopped in rows:
            store.save_generation(_generation(run_id, instance, "justify", stance, conf))
            for stage, decision in (("internal", internal), ("external", external)):
                if decision is not None:
                    store.save_generation(_generation(run_id, instance, stage, decision, 0.8))
            for j, (_, decision, c_y) in enumerate(INDIVIDUAL.get((run_id, instance), [])):
                store.save_generation(_generation(run_id, instance, "individual", decision, c_y, j))
            per_reason = [
                ("justify", -1, j, metric, value)
                for metric, found in reasons.items()
                for j, value in enumerate(found)
            ]
            per_instance = [(m, v, 1) for m, v in values.items()]
            per_instance.append(("decision_confidence_justify", conf, 1))
            store.save_instance_result(
                InstanceResult(
                    run_id,
                    instance,
                    stance,
                    len(reasons.get("sos", [])),
                    stopped,
                    per_reason,
                    per_instance,
                )
            )
    store.connection.execute(
        "UPDATE runs SET created_at = TIMESTAMP '2025-01-01 10:00:00' + "
        "(CASE run_id WHEN ? THEN 0 ELSE 1 END) * INTERVAL 1 DAY, updated_at = created_at",
        [A],
    )


@pytest.fixture(scope="module")
def template_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("metrics") / "template.duckdb"
    with open_store(path) as store:
        build_store(store)
    return path


@pytest.fixture
def toy_db(tmp_path: Path, template_db: Path) -> Path:
    path = tmp_path / "haf.duckdb"
    shutil.copyfile(template_db, path)
    return path


def plain(renderable: RenderableType, width: int = 100) -> str:
    console = Console(file=io.StringIO(), width=width, color_system=None, legacy_windows=False)
    console.print(renderable)
    output = console.file
    assert isinstance(output, io.StringIO)
    return output.getvalue()


LARGE_SQL = """
INSERT INTO runs (run_id, created_at, status, dataset_id, n_planned, config, model_file,
                  similarity_model, similarity_kind)
SELECT 'big-run-' || r, TIMESTAMP '2025-02-01' + r * INTERVAL 1 HOUR, 'finished', 'big',
       $n, '{}', 'model-' || r || '.gguf', 'minilm', 'bi-encoder'
FROM range($runs) t(r);
CREATE TEMP TABLE cells AS
SELECT 'big-run-' || r AS run_id, 'x' || i AS instance_id, r, i,
       CASE i % 4 WHEN 0 THEN 'toxic' WHEN 1 THEN 'maybe' WHEN 2 THEN 'non-toxic'
            ELSE 'unclear' END AS stance,
       ((i * 7919 + r * 104729) % 1000) / 1000.0 AS u
FROM range($runs) a(r), range($n) b(i);
INSERT INTO instance_results (run_id, instance_id, stance, n_reasons, stopped)
SELECT run_id, instance_id, stance, 3, CASE stance WHEN 'unclear' THEN 'unclear stance' END
FROM cells;
INSERT INTO generations (run_id, instance_id, stage, sub_index, test, seed, prompt_text,
    prompt_tokens, output_text, output_tokens, finish_reason, decision, decision_confidence,
    seconds)
SELECT run_id, instance_id, s.stage, -1, NULL, 1, 'p', 1, 'o', 1, 'stop',
       CASE WHEN s.stage = 'justify' THEN stance WHEN u < 0.5 THEN 'NO' ELSE 'YES' END, u, 0.1
FROM cells, (VALUES ('justify'), ('internal'), ('external')) s(stage);
INSERT INTO instance_metrics (run_id, instance_id, metric, value, n)
SELECT run_id, instance_id, m.metric, (u + m.k / 10.0) % 1.0, 3
FROM cells, (VALUES ('sos', 1), ('dis', 2), ('uii', 3), ('uei', 4), ('rs', 5),
                    ('decision_confidence_justify', 0)) m(metric, k)
WHERE stance <> 'unclear';
INSERT INTO reason_metrics (run_id, instance_id, stage, sub_index, reason_index, metric, value)
SELECT run_id, instance_id, 'justify', -1, j, 'sos', (u + j / 10.0) % 1.0
FROM cells, range(3) t(j) WHERE stance <> 'unclear';
"""


def build_large_store(path: Path, n_instances: int = 5000, n_runs: int = 4) -> None:
    """``n_runs`` runs of ``n_instances`` instances with JUSTIFY / UPHOLD-REASON generations,
    instance metrics and reason SoS terms, written with plain SQL (seconds, not minutes)."""
    with open_store(path) as store:
        store.connection.execute(
            "INSERT INTO datasets (dataset_id, name, source, n_instances) "
            "VALUES ('big', 'Big', 'generated', ?)",
            [n_instances],
        )
        for statement in LARGE_SQL.split(";"):
            params = {"n": n_instances, "runs": n_runs}
            used = {name: value for name, value in params.items() if f"${name}" in statement}
            if statement.strip():
                store.connection.execute(statement, used)


async def open_metrics(pilot: Pilot[Any], screen: MetricsScreen | None = None) -> MetricsScreen:
    await settle(pilot)
    pushed = screen or MetricsScreen()
    pilot.app.push_screen(pushed)
    await settle(pilot)
    assert pilot.app.screen is pushed
    return pushed


def shown(screen: MetricsScreen, pane: str) -> str:
    """The plain text a panel shows."""
    return screen.query_one(f"#mx-body-{pane}", PanelView).text()


# ---------------------------------------------------------------- charts (no Textual)


def test_bar_text_draws_eighths_and_clamps() -> None:
    assert charts.bar_text(0.5, 10) == "█" * 5
    assert charts.bar_text(1 / 16, 2) == "▏"
    assert charts.bar_text(2.0, 4) == "████" and charts.bar_text(-1.0, 4) == ""
    assert charts.bar_text(math.nan, 4) == ""


def test_histogram_bins_counts_and_undefined_values() -> None:
    data = charts.histogram([0.0, 0.05, 0.1, 0.55, 1.0, None, math.nan], bins=10)
    assert (data.lo, data.hi) == (0.0, 1.0)
    assert data.counts == (2, 1, 0, 0, 0, 1, 0, 0, 0, 1)  # 1.0 goes in the last bin
    assert (data.defined, data.undefined, data.total) == (5, 2, 7)
    assert data.edges()[:3] == pytest.approx([0.0, 0.1, 0.2])
    wide = charts.histogram([-2.0, 0.0, 2.0], bins=4)  # outside [0, 1]: the data's own range
    assert (wide.lo, wide.hi, wide.counts) == (-2.0, 2.0, (1, 0, 1, 1))
    assert charts.value_range([3.0, 3.0]) == (2.5, 3.5)
    assert charts.histogram([0.5], value_range_=(0.0, 0.25), bins=2).counts == (0, 1)


def test_histogram_text_says_what_is_undefined() -> None:
    text = plain(
        charts.render_histogram(
            charts.histogram([0.25, 0.3, None]), width=60, title="run x", undefined_reason="why"
        )
    )
    assert "run x" in text and "[0.20, 0.30)" in text and "[0.90, 1.00]" in text
    assert "2 defined, 1 undefined (NaN / no value): why" in text
    empty = plain(charts.render_histogram(charts.histogram([None, None]), width=60, title="t"))
    assert "— no defined value among 2 instances" in empty and "[0.00" not in empty


def test_bar_chart_shows_values_notes_and_dashes() -> None:
    groups = [
        charts.BarGroup("toxic", (charts.Bar("low", 0.5, "n=2"), charts.Bar("high", None, "n=0")))
    ]
    lines = plain(charts.bar_chart(groups, width=40, title="SoS"), width=40).splitlines()
    assert lines[0].strip() == "SoS"
    shown = lines[1].rstrip("\xa0")
    assert shown.startswith("toxic low ") and shown.endswith("0.500 n=2 █████████▌")
    assert "█" not in lines[2] and lines[2].split() == ["high", "—", "n=0"]  # (the bar last)
    assert all(len(line) <= 40 for line in lines)


def test_fit_table_transposes_only_when_too_wide() -> None:
    columns, rows = ["a", "b"], [(1, "x"), (2, "y")]
    assert "field" not in plain(chart_layout.fit_table("t", columns, rows, width=80))
    wide = [(1, "x" * 60), (2, "y")]
    assert "field" in plain(chart_layout.fit_table("t", columns, wide, width=40))
    assert "field" not in plain(
        chart_layout.fit_table("t", columns, wide, width=40, max_transposed=1)
    )
    assert (
        chart_layout.columns_that_fit(4, 160, 46) == 3
        and chart_layout.columns_that_fit(4, 40, 46) == 1
    )
    assert chart_layout.panel_width(100, 2) == 49


# ---------------------------------------------------------------- panels on the hand-made store


@pytest.fixture(scope="module")
def toy_data(template_db: Path) -> Any:
    with open_store(template_db, read_only=True) as store:
        return load_metrics_data(store)


def panel(
    data: Any, name: str, run_ids: tuple[str, ...] = (A, B), width: int = 160, **options: Any
) -> str:
    runs = [run for run in data.runs if run.run_id in run_ids]
    return plain(render_panel(name, data, runs, width=width, **options), width=width)


def test_load_reads_runs_reports_and_bins_values(toy_data: Any) -> None:
    assert [(r.run_id, r.label, r.n_done) for r in toy_data.runs] == [
        (B, f"beta-8b · toy · {B}", 3),
        (A, f"alpha-3b · toy · {A}", 4),
    ]
    sos = toy_data.histograms[(A, "sos")]
    assert sos.counts == (0, 0, 0, 0, 1, 0, 1, 0, 1, 0) and sos.undefined == 1  # i4 stopped
    assert toy_data.histograms[(A, "rn")].defined == 0
    assert toy_data.histograms[(B, "rn")].counts[0:2] == (1, 1)
    assert toy_data.extra["figure2"]["band_edges"] == (0.6, 0.8)


def cells(text: str, field: str) -> list[str]:
    """The cells of one row of a transposed table (one column per result row)."""
    line = next(line for line in text.splitlines() if line.startswith(f"│ {field} "))
    return [cell.strip() for cell in line.strip("│").split("│")[1:]]


def test_table1_shows_both_pooling_rules_with_n_and_why_undefined(toy_data: Any) -> None:
    text = panel(toy_data, "table1")  # transposed at 160: one column per run × pooling rule
    assert "pooling: both" in text
    assert cells(text, "run") == [A, A, B, B]
    assert cells(text, "pooling") == ["pooled (reference)", "instance mean"] * 2
    # SoS pooled over A's 4 reason terms: (0.7 + 0.9 + 0.4 + 0.6) / 4; mean of 3 instances
    assert cells(text, "SoS") == ["0.650", "0.600", "0.533", "0.533"]
    assert cells(text, "SoS n") == ["4", "3", "3", "3"]
    assert cells(text, "RS")[:2] == ["0.350", "0.400"] and cells(text, "RN n") == [
        "0",
        "0",
        "0",
        "2",
    ]
    assert cells(text, "instances") == ["4", "4", "3", "3"]
    assert f"RN — for every instance of alpha-3b · toy · {A}: defined only for non-toxic" in text
    assert "RS —" not in text  # B has one RS value: defined somewhere
    only = panel(toy_data, "table1", pooling=POOLING_MODES[1])
    assert "pooled (reference)" in only and "instance mean" not in only
    assert cells(only, "SoS") == ["0.650", "0.533"]


def test_table2_table4_and_figure2(toy_data: Any) -> None:
    table2 = panel(toy_data, "table2")
    row_a = next(line for line in table2.splitlines() if A in line)
    assert "66.667" in row_a and "33.333" in row_a  # internal 2 of 3 say NO, external 1 of 3
    table4 = panel(toy_data, "table4", (A,), pooling=POOLING_MODES[1])
    rs = next(line for line in table4.splitlines() if "│ RS " in line)
    # A's i1 reasons under SUF: RS (0.1 + 0.3) / 2, C(Y) (0.9 + 0.5) / 2, S (1 + 0.1) / 2, I_S 0.2
    assert [c.strip() for c in rs.split("│")[4:13]] == [
        "RS", "pooled (reference)", "0.200", "2", "0.700", "2", "0.550", "2", "0.200",
    ]  # fmt: skip
    assert f"RS, RN — in beta-8b · toy · {B}: no UPHOLD-STANCE decision" in panel(
        toy_data, "table4"
    )
    figure2 = panel(toy_data, "figure2", (A,), width=70)  # SoS above DiS
    assert "low C < 0.6, medium 0.6 ≤ C < 0.8, high C ≥ 0.8" in " ".join(figure2.split())
    sos_lines = figure2.split("DiS —")[0].splitlines()
    toxic = [line for line in sos_lines if "0.800 n=1" in line or "0.400 n=1" in line]
    assert [line.split()[0] for line in toxic] == ["medium", "high"]  # under "toxic"
    maybe = next(line for line in sos_lines if line.startswith("maybe"))
    assert maybe.split()[:4] == ["maybe", "low", "0.600", "n=1"]
    wide = panel(toy_data, "figure2", (A, B), width=160).splitlines()
    assert any("SoS — beta" in line and "DiS — beta" in line for line in wide)  # side by side


def test_distributions_and_stances(toy_data: Any) -> None:
    sos = panel(toy_data, "distributions", (A,))
    assert "[SoS]" in sos and "3 defined, 1 undefined" in sos
    rn = panel(toy_data, "distributions", (A,), metric_index=5)
    assert "— no defined value among 4 instances: defined only for non-toxic stances" in rn
    stances = panel(toy_data, "stances", (A,))
    assert "50.0% 2/4" in stances and "25.0% 1/4" in stances
    assert "unclear stance" in stances  # the stop reason
    contradiction = next(
        line for line in stances.splitlines() if "internal" in line and "50.0" in line
    )
    assert "│      2 │" in contradiction  # 2 said NO, 1 of them with a new reason


def test_no_runs_chosen_or_stored(toy_data: Any) -> None:
    assert "no run chosen" in panel(toy_data, "table1", ())
    empty = type(toy_data)([], {})
    assert "no run stored yet" in plain(render_panel("figure2", empty, [], width=80))


# ---------------------------------------------------------------- the screen


def status(screen: MetricsScreen) -> str:
    return str(screen.query_one("#mx-status", Static).render())


async def test_keys_switch_panels_options_and_runs(toy_db: Path) -> None:
    app = create_app(toy_db)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_metrics(pilot)
        tabs = screen.query_one("#mx-tabs", TabbedContent)
        assert tabs.active == "table1" and "0.650" in shown(screen, "table1")
        assert not screen.query_one("#mx-runs").display  # narrow: the run list waits for space
        for key, pane, expected in (
            ("2", "table2", "66.667"),
            ("3", "table4", "0.700"),
            ("4", "figure2", "SoS — beta-8b"),
            ("5", "distributions", "[SoS]"),
            ("6", "stances", "50.0% 2/4"),
            ("1", "table1", "0.650"),
        ):
            await pilot.press(key)
            await settle(pilot)
            assert tabs.active == pane and expected in shown(screen, pane), key
        await pilot.press("right_square_bracket")
        assert tabs.active == "table2"
        await pilot.press("left_square_bracket", "left_square_bracket")
        assert tabs.active == "judge"  # the last panel (8)
        await pilot.press("g")  # Table 1 under the reference's pooling only
        await settle(pilot)
        assert "pooling pooled (reference)" in status(screen)
        assert "instance mean" not in shown(screen, "table1")
        await pilot.press("d")  # next histogram metric, and show it
        await settle(pilot)
        assert tabs.active == "distributions" and "[DiS]" in shown(screen, "distributions")
        # space shows the run list; there space unticks the highlighted (newest) run B
        await pilot.press("space")
        await settle(pilot)
        run_list = screen.query_one("#mx-run-list", SelectionList)
        assert screen.query_one("#mx-runs").display and run_list.has_focus
        await pilot.press("space")
        await settle(pilot)
        assert run_list.selected == [A] and "runs 1/2" in status(screen)
        assert "beta-8b" not in shown(screen, "distributions")
        await pilot.press("1")
        await settle(pilot)
        assert B not in shown(screen, "table1") and A in shown(screen, "table1")
        await pilot.press("a")  # every run
        await settle(pilot)
        assert sorted(run_list.selected) == [A, B]
        await pilot.press("a")  # none
        await settle(pilot)
        assert "no run chosen" in shown(screen, "table1")
        await pilot.press("escape")  # back to the panels; narrow: the list hides again
        await settle(pilot)
        assert not screen.query_one("#mx-runs").display
        await pilot.press("escape")
        assert not isinstance(app.screen, MetricsScreen)


async def test_constructor_runs_and_panel(toy_db: Path) -> None:
    app = create_app(toy_db)
    async with app.run_test(size=(200, 60)) as pilot:
        screen = await open_metrics(pilot, MetricsScreen(["20250101"], panel="stances"))
        assert screen.query_one("#mx-run-list", SelectionList).selected == [A]
        assert screen.query_one("#mx-tabs", TabbedContent).active == "stances"
        assert "alpha-3b" in shown(screen, "stances") and "beta-8b" not in shown(screen, "stances")
        assert screen.query_one("#mx-runs").display  # wide: the run list stays
        assert A in str(screen.query_one("#mx-run-info", Static).render()) or B in str(
            screen.query_one("#mx-run-info", Static).render()
        )


async def test_an_empty_database_says_so(tmp_path: Path) -> None:
    db = tmp_path / "empty.duckdb"
    open_store(db).close()
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_metrics(pilot)
        assert "no run stored yet" in shown(screen, "table1")


async def test_keys_never_wait_on_a_large_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """5,000 instances × 4 runs: after the one read, handlers touch no database; the panels
    still show the right counts. (How fast keys are is measured by ``make bench``.)"""
    db = tmp_path / "large.duckdb"
    build_large_store(db)
    app = create_app(db)
    async with app.run_test(size=(200, 60)) as pilot:
        screen = await open_metrics(pilot)

        def no_database(*_: Any) -> Any:
            raise AssertionError("a handler read the database")

        monkeypatch.setattr(app.reader, "reading", no_database)  # (every read goes through it)
        monkeypatch.setattr(app.reader, "query_user", no_database)
        actions = [f"panel('{pane}')" for pane in ("table2", "table4", "figure2", "stances")]
        actions += ["pooling", "next_metric", "step_panel(1)", "all_runs", "all_runs"]
        actions += ["toggle_runs", "toggle_runs", "panel('table1')"]
        for action in actions:
            await screen.run_action(action)
            screen.redraw()  # what the messages that follow an action run
            await pilot.pause()
        await settle(pilot)
        rows = [line for line in shown(screen, "table1").splitlines() if "│ big-run-" in line]
        assert len(rows) == 4  # one rule (g was pressed): a row per run
        for row in rows:  # 5000 instances, 3 SoS terms for each of the 3750 with reasons
            assert "│      5000 │ pooled (reference) │" in row and "│ 11250 │" in row
        assert not [w for w in app.workers if w.state.name == "ERROR"]


@pytest.mark.real_model
async def test_a_real_stored_run(full_run_db: tuple[Path, str, list[str]]) -> None:
    db, run_id, _ = full_run_db
    with open_store(db, read_only=True) as store:
        (pooled_sos, n_terms), *_ = store.query(
            "SELECT avg(value), count(value) FROM reason_metrics WHERE run_id = ? "
            "AND metric = 'sos'",
            [run_id],
        )[1]
        n_done = store.query("SELECT count(*) FROM instance_results WHERE run_id = ?", [run_id])[1][
            0
        ][0]
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_metrics(pilot, MetricsScreen([run_id]))
        table1 = shown(screen, "table1")  # one run, two rules: transposed at this width
        assert cells(table1, "pooling") == [POOLING_MODES[1], POOLING_MODES[2]]
        assert run_id in table1 and cells(table1, "instances")[0] == str(n_done)
        assert cells(table1, "SoS")[0] == f"{pooled_sos:.3f}"
        assert cells(table1, "SoS n")[0] == str(n_terms)
        await pilot.press("5")
        await settle(pilot)
        histogram = shown(screen, "distributions")
        assert "[SoS]" in histogram and ("defined" in histogram)
        await pilot.press("6")
        await settle(pilot)
        assert f"/{n_done}" in shown(screen, "stances")


def test_metrics_snapshot_80x24(snap_compare: Any, toy_db: Path) -> None:
    async def prepare(pilot: Pilot[Any]) -> None:
        await open_metrics(pilot)

    assert snap_compare(create_app(toy_db), terminal_size=(80, 24), run_before=prepare)


def test_metrics_snapshot_200x60(snap_compare: Any, toy_db: Path) -> None:
    async def prepare(pilot: Pilot[Any]) -> None:
        await open_metrics(pilot, MetricsScreen(panel="figure2"))

    assert snap_compare(create_app(toy_db), terminal_size=(200, 60), run_before=prepare)
