"""Reports that leave something out say why (issue 43 §6), on real DuckDB stores: a campaign
whose cells had no instance past JUSTIFY says that Tables 1, 2 and 4 have no rows and why; a
run report speaks of runs, not cells; ``haf campaign status`` before the campaign ran names
``haf campaign run``; ``compare-ci`` gives no Wilcoxon p on too few pairs, and says why."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from benchmarks.benchdata import build_bench_db
from haf_tui.campaign.report import write_campaign_report
from haf_tui.cli import main
from haf_tui.methods.registry import methods
from haf_tui.reports.comparison import WILCOXON_MIN_PAIRS
from haf_tui.store import InstanceResult, RunRecord, open_store
from tests.support import one_line_error
from tests.support.report_store import A, build_store

C = "run-gamma-0003"
"""A finished HAF run on the toy dataset whose every instance stopped after JUSTIFY."""
STOPS = {"i1": "unclear stance", "i2": "no reasons", "i3": "unclear stance", "i4": "no reasons"}
D = "run-delta-0004"
"""A finished HAF run: i1 went past JUSTIFY (SoS and DiS, no follow-up decision, no
C(JUSTIFY)), the rest stopped after it."""


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The hand-made report store (runs A and B) and run C, all stopped after JUSTIFY."""
    path = tmp_path_factory.mktemp("say-why") / "haf.duckdb"
    with open_store(path) as store:
        build_store(store)
        store.create_run(
            RunRecord(
                run_id=C,
                status="finished",
                dataset_id="toy",
                n_planned=4,
                config_json='{"suites": ["haf"]}',
                model_file="gamma.gguf",
                similarity_model="all-MiniLM-L6-v2",
                similarity_kind="bi-encoder",
            )
        )
        for k, (instance_id, why) in enumerate(STOPS.items()):
            store.save_instance_result(
                InstanceResult(
                    C,
                    instance_id,
                    "unclear",
                    0,
                    stopped=why,
                    instance_metrics=[("decision_confidence_justify", 0.4 + k / 10, 1)],
                )
            )
        store.create_run(
            RunRecord(
                run_id=D,
                status="finished",
                dataset_id="toy",
                n_planned=4,
                config_json='{"suites": ["haf"]}',
                model_file="delta.gguf",
                similarity_model="all-MiniLM-L6-v2",
                similarity_kind="bi-encoder",
            )
        )
        for instance_id, why in STOPS.items():
            went_on = instance_id == "i1"
            store.save_instance_result(
                InstanceResult(
                    D,
                    instance_id,
                    "toxic" if went_on else "unclear",
                    2 if went_on else 0,
                    stopped=None if went_on else why,
                    instance_metrics=[("sos", 0.5, 2), ("dis", 0.25, 2)] if went_on else [],
                )
            )
    return path


def _stops(path: Path, run_ids: list[str]) -> tuple[int, int]:
    """(stopped, finished) instances of the runs, read here from instance_results."""
    with open_store(path, read_only=True) as store:
        _, rows = store.query(
            "SELECT count(*) FILTER (WHERE stopped IS NOT NULL), count(*) FROM instance_results "
            "WHERE list_contains($ids, run_id)",
            {"ids": run_ids},
        )
    return int(rows[0][0]), int(rows[0][1])


def _written(path: Path, cells: list[tuple[str, str, str]], out: Path, **kind: str) -> str:
    with open_store(path, read_only=True) as store:
        write_campaign_report(store, "why", cells, ["markdown", "html"], out, **kind)
    return (out / "report.md").read_text(encoding="utf-8")


def _justify_note(text: str, where: str) -> re.Match[str] | None:
    return re.search(
        rf"HAF: no instance went past JUSTIFY in {where} \(all (\d+) finished instances "
        r"stopped there: ([a-z ,]+)\), so Table 1, Table 2 and Table 4 have no rows\.",
        text,
    )


def test_a_campaign_with_no_instance_past_justify_says_why_tables_1_2_4_are_missing(
    db: Path, tmp_path: Path
) -> None:
    markdown = _written(db, [("gamma", "toy", C)], tmp_path / "c")
    html = (tmp_path / "c" / "report.html").read_text(encoding="utf-8")
    stopped, finished = _stops(db, [C])
    assert stopped == finished == len(STOPS)
    for text in (markdown, html):
        note = _justify_note(text, "any cell")
        assert note is not None, text[:3000]
        assert int(note[1]) == finished
        assert set(note[2].split(", ")) == set(STOPS.values())
        assert "Table 1 —" not in text and "Table 4 —" not in text
        assert "HAF: no cell ran this suite" not in text
    others = [m.title for name, m in methods().items() if name != "haf"]
    assert all(f"{title}: no cell ran this suite; no table." in markdown for title in others)

    # a cell with instances past JUSTIFY: Table 1 is there, and no such note
    markdown = _written(db, [("alpha", "toy", A), ("gamma", "toy", C)], tmp_path / "both")
    assert "Table 1 —" in markdown and "went past JUSTIFY" not in markdown


def test_a_cell_past_justify_without_follow_up_values_says_which_tables_are_empty(
    db: Path, tmp_path: Path
) -> None:
    markdown = _written(db, [("delta", "toy", D)], tmp_path / "d")
    stopped, finished = _stops(db, [D])
    assert (stopped, finished) == (3, 4)
    assert "Table 1 —" in markdown  # SoS and DiS of i1
    assert (
        "HAF: no finished instance in any cell has a value for them (1 of 4 went past "
        "JUSTIFY), so Table 2, Table 4 and the other per-instance metrics have no rows."
    ) in markdown
    assert "Table 2 —" not in markdown and "Table 4 —" not in markdown


def test_a_run_report_speaks_of_runs_not_cells(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "one"
    assert main(["--db", str(db), "report", "--run", C, "--format", "html", "--out", str(out)]) == 0
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "no cell ran" not in html and "any cell" not in html
    others = [m.title for name, m in methods().items() if name != "haf"]
    assert all(f"{title}: this run did not run this suite; no table." in html for title in others)
    assert _justify_note(html, "this run") is not None

    two = _written(db, [("alpha", "toy", A), ("gamma", "toy", C)], tmp_path / "two",
                   kind="Run report")  # fmt: skip
    assert "no cell ran" not in two
    assert all(f"{title}: none of these runs ran this suite; no table." in two for title in others)


GRID = """
models = ["embedded"]
datasets = ["sample"]
suites = ["classify"]
limit = 2
"""


@pytest.mark.parametrize("database", ["--db", "grid"])
def test_campaign_status_before_any_run_names_haf_campaign_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], database: str
) -> None:
    grid = tmp_path / "grid.toml"
    missing = tmp_path / "campaign.duckdb"
    if database == "grid":
        grid.write_text(f'database = "{missing.name}"\n' + GRID, encoding="utf-8")
        argv = ["campaign", "status", str(grid)]
    else:
        grid.write_text(GRID, encoding="utf-8")
        argv = ["campaign", "status", str(grid), "--db", str(missing)]
    for extra in ([], ["--out", str(tmp_path / "out")]):
        argv[1] = "report" if extra else "status"
        assert main(argv + extra) != 0
        line = one_line_error(capsys)
        assert f"no database at {missing}" in line
        assert f"`haf campaign run {grid}`" in line and "`haf run`" not in line
        assert not missing.exists()  # (nothing is made by asking)


def test_compare_ci_gives_no_wilcoxon_p_on_one_pair_and_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bench.duckdb"
    run1, run2 = build_bench_db(path, n_instances=1, n_runs=2, seed=7)
    argv = ["--db", str(path), "report", "--report", "compare-ci", "--run", run1, "--run", run2]
    assert main([*argv, "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    paired = [r for r in rows if r["run"] == run2 and r["Δ vs first"] is not None]
    assert paired, rows  # the pair has a Δ ...
    assert all(r["n pairs"] == 1 and r["Wilcoxon p"] is None for r in paired)  # ... and no p
    assert main([*argv, "--columns", "all"]) == 0  # (one record a row: every column)
    out = capsys.readouterr().out
    records = [r for r in out.split("-[ RECORD") if f"│ {run2}" in r and "Δ vs first │ 0" in r]
    assert records and all(re.search(r"Wilcoxon p\s+│ —\n", r) for r in records), out
    assert all(re.search(r"n pairs\s+│ 1\n", r) for r in records)
    assert f"— with fewer than {WILCOXON_MIN_PAIRS} pairs" in " ".join(out.split())
