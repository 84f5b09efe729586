"""Runs that can be told apart in the workbench (issue 34 §4 and the comparison's instance pane
of §7): the runs list, the comparison's runs and the metrics screen's run picker name each
run's suites (and the picker its label and dataset size); ``c`` on the runs list starts with
the runs that share a suite with the one under the cursor, not with every finished run (a
HAF run and a classify-only run share no metric); the instance pane shows C(JUSTIFY) once
and tells an instance a run's dataset lacks from one the run did not finish.

The store: three runs of the synthetic bench data, one model family: ``run1`` HAF (finished,
20 instances), ``run2`` classify only (finished, 20), ``run3`` HAF (interrupted) on a dataset
of the first 10 instances, of which it finished all but ``t00003``."""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, SelectionList, Static

from benchmarks.benchdata import build_bench_db
from haf_tui.store import open_store
from haf_tui.store.comparison_readers import ComparedRun
from haf_tui.tui import create_app
from haf_tui.tui.compare_data import sharing_a_suite
from haf_tui.tui.metrics_data import RunInfo, run_prompts
from haf_tui.tui.screens.compare import CompareScreen
from haf_tui.tui.screens.metrics import MetricsScreen
from haf_tui.tui.widgets.panel_view import PanelView
from tests.support import settle

CLASSIFY = ("classify_p_toxic", "classify_label_mass", "classify_toxic")
HALF = "bench-half"
"""run3's dataset: the first 10 instances of the synthetic one."""
SIZES = ((80, 24), (200, 50))
PICKER_TEXT_WIDTH = 26
"""The characters of a prompt the metrics screen's run list shows (36 cells, less its border,
padding and check box)."""


def _build(path: Path) -> list[str]:
    run1, run2, run3 = build_bench_db(path, n_instances=20, n_runs=3, seed=7)
    with open_store(path) as store:
        run = store.connection.execute
        run("UPDATE runs SET created_at = TIMESTAMP '2026-01-02 03:04:05'")  # (list: run1 first)
        run(
            "UPDATE runs SET config = json_merge_patch(config, json_object('suites', ['classify']))"
            " WHERE run_id = $r",
            {"r": run2},
        )
        run("DELETE FROM instance_metrics WHERE run_id = $r", {"r": run2})
        for j, (instance_id,) in enumerate(
            run(
                "SELECT instance_id FROM instance_results WHERE run_id = $r", {"r": run2}
            ).fetchall()
        ):
            for m, metric in enumerate(CLASSIFY):
                run(
                    "INSERT INTO instance_metrics VALUES (?, ?, ?, ?, 1)",
                    [run2, instance_id, metric, ((j * 7 + m * 3) % 10) / 10],
                )
        run(
            "INSERT INTO datasets SELECT $half, $half, source, created_at, 10, meta FROM datasets"
            " WHERE dataset_id = 'bench-synthetic'",
            {"half": HALF},
        )
        run(
            "INSERT INTO instances SELECT $half, instance_id, position, text, label, extra"
            " FROM instances WHERE dataset_id = 'bench-synthetic' AND position < 10",
            {"half": HALF},
        )
        run("UPDATE runs SET dataset_id = $half, n_planned = 10 WHERE run_id = $r",
            {"half": HALF, "r": run3})  # fmt: skip
        for table in ("instance_results", "instance_metrics", "reason_metrics"):
            run(
                f"DELETE FROM {table} WHERE run_id = $r AND (instance_id = 't00003' OR "
                f"instance_id NOT IN (SELECT instance_id FROM instances WHERE dataset_id = $half))",
                {"r": run3, "half": HALF},
            )
    return [run1, run2, run3]


@pytest.fixture(scope="module")
def template_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    path = tmp_path_factory.mktemp("runs-suites") / "template.duckdb"
    return path, _build(path)


@pytest.fixture
def db(template_db: tuple[Path, list[str]], tmp_path: Path) -> Path:
    path = tmp_path / "haf.duckdb"
    shutil.copyfile(template_db[0], path)
    return path


def _cells(table: DataTable[Any], column: str) -> list[str]:
    index = [str(c.label) for c in table.columns.values()].index(column)
    return [str(table.get_row_at(row)[index]) for row in range(table.row_count)]


def _plain(prompt: Any) -> str:
    return " ".join(prompt.plain.split()) if hasattr(prompt, "plain") else str(prompt)


def _fits(table: DataTable[Any]) -> bool:
    return table.virtual_size.width <= table.size.width


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "200x50"])
async def test_the_runs_list_has_a_suites_column_that_fits(db: Path, size: tuple[int, int]) -> None:
    app = create_app(db)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#runs", DataTable)
        assert _cells(table, "suites") == ["haf", "classify", "haf"]
        assert _fits(table)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "200x50"])
async def test_c_chooses_the_runs_sharing_a_suite_with_the_one_under_the_cursor(
    db: Path, template_db: tuple[Path, list[str]], size: tuple[int, int]
) -> None:
    run1, run2, run3 = template_db[1]
    app = create_app(db)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("c")  # on run1 (HAF): run3 shares HAF, run2 (classify) does not
        await settle(pilot)
        assert isinstance(app.screen, CompareScreen)
        table = app.screen.query_one("#cmp-runs", DataTable)
        assert _cells(table, "") == ["● A", "○", "● B"]
        assert _cells(table, "suites") == ["haf", "classify", "haf"] and _fits(table)
        shown = str(app.screen.query_one("#cmp-stats-view", PanelView).text())
        assert "no metric to compare" not in shown
        assert any(line.split()[:1] == ["SoS"] for line in shown.splitlines())
        assert f"A  {run1} · haf · " in shown and f"B  {run3} · haf · " in shown
        await pilot.press("escape", "down", "c")  # on run2: the only classify run
        await settle(pilot)
        assert _cells(app.screen.query_one("#cmp-runs", DataTable), "") == ["○", "● A", "○"]
        shown = str(app.screen.query_one("#cmp-stats-view", PanelView).text())
        assert f"A  {run2} · classify · " in shown and "no metric to compare" not in shown
        assert app.screen.query_one("#cmp-runs", DataTable).cursor_row == 1


async def _instance(pilot: Any, app: Any, instance_id: str) -> str:
    await pilot.press("slash", *instance_id, "enter")
    await settle(pilot)
    return str(app.screen.query_one("#cmp-instance-view", PanelView).text())


async def test_the_instance_pane_says_why_a_run_lacks_an_instance(db: Path) -> None:
    app = create_app(db)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        await pilot.press("c")  # run1 and run3 (HAF both)
        await settle(pilot)
        shown = await _instance(pilot, app, "t00001")
        assert shown.count("C(JUSTIFY)") == 1  # once, not as a row and again as a metric
        stance = next(line for line in shown.splitlines() if line.split()[:1] == ["stance"])
        assert "not finished" not in stance and "not in" not in stance
        shown = await _instance(pilot, app, "t00003")  # in run3's dataset, not finished there
        stance = next(line for line in shown.splitlines() if line.split()[:1] == ["stance"])
        assert "not finished in this run" in stance and "dataset" not in stance
        shown = await _instance(pilot, app, "t00015")  # not in run3's dataset at all
        stance = next(line for line in shown.splitlines() if line.split()[:1] == ["stance"])
        assert f"not in this run's dataset ({HALF})" in stance
        assert "not finished" not in stance


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "200x50"])
async def test_the_metrics_picker_names_suites_label_and_size(
    db: Path, template_db: tuple[Path, list[str]], size: tuple[int, int]
) -> None:
    run1, run2, run3 = template_db[1]
    with open_store(db) as store:
        store.connection.execute(
            "UPDATE runs SET label = 'baseline' WHERE run_id = $r", {"r": run1}
        )
    app = create_app(db)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        app.push_screen(MetricsScreen())
        await settle(pilot)
        picker = app.screen.query_one("#mx-run-list", SelectionList)
        prompts = [_plain(picker.get_option_at_index(i).prompt) for i in range(picker.option_count)]
        assert len(prompts) == 3 and len(set(prompts)) == 3
        model = "Llama-3.2-3B-Instruct-Q4_K_M"  # (suites, models, datasets differ: all first)
        assert prompts[0] == f"baseline · haf {run1[-4:]} · {model} · bench-synthetic n=20"
        assert prompts[1].startswith(f"classify {run2[-4:]} · ") and "synthetic n=20" in prompts[1]
        assert prompts[2].startswith(f"haf {run3[-4:]} · ") and prompts[2].endswith(f"{HALF} n=10")
        info = str(app.screen.query_one("#mx-run-info", Static).render())
        assert "baseline" in info and "haf · bench-synthetic" in info and "20/20" in info


def test_runs_of_one_model_differ_within_the_pickers_width() -> None:
    """Seven runs of one model (the issue's picker listed "SmolLM2-135M-Instruct.Q4_1…" seven
    times): what differs comes first, so each line's visible start is its own."""
    model = "/models/SmolLM2-135M-Instruct.Q4_1.gguf"
    suites = [("haf",), ("haf",), ("haf", "classify"), ("rationales",), ("judge",), ("haf",)]
    runs = [
        RunInfo(f"20261128-0{k}0000-ab{k}{k}", model, f"builtin-sample-n{k % 2 + 2}-s17",
                "finished", 8, found, None, 8 + k % 2)
        for k, found in enumerate(suites)
    ] + [RunInfo("20261128-090000-cafe", model, "builtin-sample-n2-s17", "finished", 8,
                 ("haf",), "my label", 8)]  # fmt: skip
    shown = [prompt.plain for prompt in run_prompts(runs).values()]
    visible = PICKER_TEXT_WIDTH
    assert len({line[:visible] for line in shown}) == len(runs), shown
    assert shown[2] == "haf+classify ab22 · builtin-sample-n2-s17 n=8 · SmolLM2-135M-Instruct.Q4_1"
    assert shown[-1].startswith("my label · haf cafe · builtin-sample-n2-s17 n=8 · SmolLM2")
    same = run_prompts(runs[:1])[runs[0].run_id].plain  # (one run: nothing differs)
    assert same == "ab00 · haf · SmolLM2-135M-Instruct.Q4_1 · builtin-sample-n2-s17 n=8"


def _run(run_id: str, suites: tuple[str, ...], status: str = "finished") -> ComparedRun:
    return ComparedRun(run_id, "m.gguf", None, "d", 3, 3, datetime(2026, 1, 1), status, suites)


def test_the_runs_chosen_around_one_share_its_first_shared_suite() -> None:
    runs = [
        _run("a", ("haf", "classify")),
        _run("b", ("classify",)),
        _run("c", ("haf",)),
        _run("d", ("haf",), "interrupted"),
        _run("e", ("judge",)),
        _run("f", ("rationales",), "interrupted"),
        _run("g", ("rationales",)),
    ]
    assert sharing_a_suite(runs, "a") == ["a", "c"]  # HAF first; finished runs before others
    assert sharing_a_suite(runs, "b") == ["b", "a"]  # (the run asked around: the reference)
    assert sharing_a_suite(runs, "d") == ["d", "a", "c"]  # (itself, though unfinished)
    assert sharing_a_suite(runs[:2] + runs[3:4], "a") == ["a", "b"]  # d unfinished: classify
    assert sharing_a_suite(runs[3:4] + runs[:1], "a") == ["a", "d"]  # only an unfinished one
    assert sharing_a_suite(runs, "e") == ["e"] and sharing_a_suite(runs, "zz") == []
    assert sharing_a_suite(runs, "f") == ["f", "g"]
