"""The comparison view, ``compare-ci`` and ``compare`` compare every metric of every suite the
runs share (issue 26): classify's next to HAF's, a method registered at runtime's with no
change to any face or report file, and nothing of a suite only one run holds or of a metric no
run has a value of."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from benchmarks.benchdata import build_bench_db
from haf_tui import reports
from haf_tui.cli import main
from haf_tui.methods.declare import Method, MetricSpec
from haf_tui.methods.registry import register_method
from haf_tui.reports.compared_metrics import shared_suites
from haf_tui.reports.comparison import mean_interval, paired_difference
from haf_tui.store import open_store
from haf_tui.store.comparison_readers import compared_runs, run_metric_values
from haf_tui.tui import create_app
from haf_tui.tui.compare_data import load_compare_data, run_statistics
from haf_tui.tui.screens.compare import CompareScreen
from haf_tui.tui.screens.help import help_markdown
from haf_tui.tui.widgets.compare_tables import statistics_parts
from haf_tui.tui.widgets.panel_view import PanelView, render_strips
from tests.support import settle
from tests.support.toy_suite import ToySuite

TOY_SCORE = MetricSpec("toy_score", "toy score", "a toy's score", better="lower")
TOY = Method(
    name="toy",
    title="Toy",
    description="a method registered at runtime",
    suite=ToySuite(),
    metrics=(TOY_SCORE, MetricSpec("toy_never", "toy never", "never stored")),
)


@pytest.fixture(scope="module")
def template_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """Two runs of one synthetic dataset (20 and 19 instances finished)."""
    path = tmp_path_factory.mktemp("compare-suites") / "template.duckdb"
    return path, build_bench_db(path, n_instances=20, n_runs=2, seed=7)


@pytest.fixture
def db(template_db: tuple[Path, list[str]], tmp_path: Path) -> Path:
    path = tmp_path / "haf.duckdb"
    shutil.copyfile(template_db[0], path)
    return path


def _add_suite(path: Path, run_ids: Sequence[str], suite: str, metrics: Sequence[str]) -> None:
    """Have ``run_ids`` hold ``suite`` too, with a value of each of ``metrics`` on every
    finished instance (different per run and instance)."""
    with open_store(path) as store:
        for k, run_id in enumerate(run_ids):
            store.connection.execute(
                "UPDATE runs SET config = json_merge_patch(config, json_object('suites', "
                "list_append(CAST(json_extract(config, '$.suites') AS VARCHAR[]), $suite))) "
                "WHERE run_id = $run_id",
                {"suite": suite, "run_id": run_id},
            )
            ids = store.query(
                "SELECT instance_id FROM instance_results WHERE run_id = $r ORDER BY ALL",
                {"r": run_id},
            )[1]
            for j, (instance_id,) in enumerate(ids):
                for m, metric in enumerate(metrics):
                    value = ((j * 7 + m * 3) % 10) / 10 + 0.05 * k
                    store.connection.execute(
                        "INSERT INTO instance_metrics VALUES (?, ?, ?, ?, 1)",
                        [run_id, instance_id, metric, value],
                    )


CLASSIFY = ("classify_p_toxic", "classify_label_mass", "classify_toxic")


def _ci_rows(path: Path, run_ids: Sequence[str], capsys: pytest.CaptureFixture[str]) -> Any:
    argv = ["--db", str(path), "report", "--report", "compare-ci", "--format", "json"]
    assert main([*argv, *(a for r in run_ids for a in ("--run", r))]) == 0
    return json.loads(capsys.readouterr().out)


def _row(text: str, label: str) -> list[str]:
    return next(line.split() for line in text.splitlines() if line.split()[:1] == [label])


def test_shared_suites_keep_the_first_runs_order() -> None:
    assert shared_suites([("haf", "classify", "toy"), ("toy", "haf")]) == ("haf", "toy")
    assert shared_suites([("haf",)]) == ("haf",) and shared_suites([]) == ()


def test_two_haf_and_classify_runs_compare_classifys_metrics(
    db: Path, template_db: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    run1, run2 = template_db[1]
    _add_suite(db, [run1, run2], "classify", CLASSIFY)
    rows = _ci_rows(db, [run1, run2], capsys)
    labels = list(dict.fromkeys(r["metric"] for r in rows))
    haf = ["SoS", "DiS", "UII", "UEI", "RS", "RN", "C(JUSTIFY)"]
    assert labels == [*haf, "p(toxic)", "mass", "ŷ toxic"]
    with open_store(db, read_only=True) as store:
        values = run_metric_values(store, [run1, run2], CLASSIFY)
    p_toxic = {
        run: {i: v.get("classify_p_toxic") for i, v in of.items()} for run, of in values.items()
    }
    first, second = (r for r in rows if r["metric"] == "p(toxic)")
    expected = mean_interval(p_toxic[run1])
    assert first["mean"] == pytest.approx(expected.mean) and first["n"] == 20
    assert first["CI low"] == pytest.approx(expected.low)
    paired = paired_difference(p_toxic[run1], p_toxic[run2])
    assert second["Δ vs first"] == pytest.approx(paired.mean) == pytest.approx(0.05)
    assert second["n pairs"] == 19 and second["Δ CI low"] is not None
    assert second["better"] is None  # p(toxic) has no better direction
    (mass,) = (r for r in rows if r["metric"] == "mass" and r["run"] == run2)
    assert mass["better"] == "this"  # higher is better, and the second is 0.05 higher

    with open_store(db, read_only=True) as store:
        data = load_compare_data(store)
    runs = [run for run in data.runs if run.run_id in (run1, run2)]
    stats = run_statistics(runs, data.values)
    assert [s.name for s in stats[0].metrics][7:] == list(CLASSIFY)
    shown = "\n".join(
        "".join(s.text for s in line) for line in render_strips(statistics_parts(stats), 160)
    )
    means, paired_part = shown.split("paired B − A", 1)  # (A: run2, listed first)
    assert _row(means, "p(toxic)")[1] != "—" and _row(means, "p(toxic)")[4] == "19"
    assert _row(paired_part, "p(toxic)")[:2] == ["p(toxic)", "-0.050"]
    assert len(_row(paired_part, "p(toxic)")) == 8  # no better direction: no mark
    assert _row(paired_part, "mass")[-1] == "A"  # higher is better, and A is 0.05 higher
    assert "p(toxic)↑" not in shown and "mass↑" in shown and "UII↓" in shown


def test_a_suite_only_one_run_holds_is_not_compared(
    db: Path, template_db: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    run1, run2 = template_db[1]
    _add_suite(db, [run1], "classify", CLASSIFY)
    rows = _ci_rows(db, [run1, run2], capsys)
    assert list(dict.fromkeys(r["metric"] for r in rows)) == [
        "SoS",
        "DiS",
        "UII",
        "UEI",
        "RS",
        "RN",
        "C(JUSTIFY)",
    ]
    with open_store(db, read_only=True) as store:
        runs = {run.run_id: run for run in compared_runs(store)}
        compare = reports.run_report(store, "compare", {"run_ids": [run1, run2]})
    assert runs[run1].suites == ("haf", "classify") and runs[run2].suites == ("haf",)
    assert "p(toxic)" not in [row[0] for row in compare.rows]


def test_a_method_registered_at_runtime_is_compared(
    db: Path,
    template_db: tuple[Path, list[str]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    register_method(TOY)
    run1, run2 = template_db[1]
    _add_suite(db, [run1, run2], "toy", ["toy_score"])
    rows = _ci_rows(db, [run1, run2], capsys)
    labels = list(dict.fromkeys(r["metric"] for r in rows))
    assert labels[-1] == "toy score" and "toy never" not in labels  # no values: left out
    toy = [r for r in rows if r["metric"] == "toy score"]
    assert toy[0]["n"] == 20 and toy[1]["Δ vs first"] == pytest.approx(0.05)
    assert toy[1]["better"] == "first"  # lower is better
    with open_store(db, read_only=True) as store:
        compare = reports.run_report(store, "compare", {"run_ids": [run1, run2]})
    (toy_row,) = (row for row in compare.rows if row[0] == "toy score")
    assert toy_row[2] == 20 and toy_row[4] == 19


async def test_the_comparison_view_shows_a_runtime_methods_metric(
    db: Path, template_db: tuple[Path, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    register_method(TOY)
    run1, run2 = template_db[1]
    _add_suite(db, [run1, run2], "toy", ["toy_score"])
    app = create_app(db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        assert isinstance(app.screen, CompareScreen)
        shown = str(app.screen.query_one("#cmp-stats-view", PanelView).text())
        means, paired = shown.split("paired B − A", 1)
        means_toy = next(line for line in means.splitlines() if line.startswith(" toy score"))
        assert means_toy.split()[2] != "—" and "toy never" not in shown
        paired_toy = next(line for line in paired.splitlines() if line.startswith(" toy score"))
        assert paired_toy.split()[-1] in ("A", "B", "=")  # lower is better: a better mark
        assert "toy score↓" in shown
        assert "toy score (0–1, lower is better): a toy's score" in help_markdown(app.screen)
        await pilot.press("2")
        await settle(pilot)
        instance = str(app.screen.query_one("#cmp-instance-view", PanelView).text())
        assert "toy score" in instance
