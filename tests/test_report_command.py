"""``haf report`` over a database of several suites (issue 34 §3): each table takes the runs
that hold its suite (the others named once), one compact table that fits 80 columns with the
rest on request, a legend under each table, and a single run's HTML and LaTeX files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from haf_tui.cli import main
from haf_tui.cli.report_layout import (
    carries_small_n,
    column_ranks,
    compact_table,
    legend_lines,
)
from tests.support import one_line_error
from tests.support.campaign_store import campaign_db
from tests.support.judge_runs import judge_db
from tests.support.rationale_runs import RUN_ID as RATIONALE_RUN
from tests.test_tui_explorer_find import classify_db


@pytest.fixture(scope="module")
def mixed_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """Four synthetic HAF runs and, stored last (the newest), a rationales-only run."""
    path = tmp_path_factory.mktemp("mixed") / "haf.duckdb"
    cells = campaign_db(path, 8)
    return path, [run for _, _, run in cells if run != RATIONALE_RUN]


@pytest.fixture(scope="module")
def judged_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A HAF run ``source`` and a judge run ``judged`` over its explanations."""
    return judge_db(tmp_path_factory.mktemp("judged") / "haf.duckdb")


def _report(
    db: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    *args: str,
    width: int = 80,
) -> tuple[int, str]:
    monkeypatch.setenv("COLUMNS", str(width))
    status = main(["report", "--db", str(db), *args])
    return status, capsys.readouterr().out


TITLES = ("Table 1 —", "Table 2 —", "Table 4 —", "Rationales —", "Judge —")


def _section(out: str, title: str) -> str:
    """The lines from the table titled ``title`` to the next table's title."""
    lines = out.splitlines()
    start = next(k for k, line in enumerate(lines) if line.startswith(title))
    end = next((k for k in range(start + 1, len(lines)) if lines[k].startswith(TITLES)), len(lines))
    return "\n".join(lines[start:end])


def test_haf_tables_leave_out_a_rationales_run_and_name_it_once(
    mixed_db: tuple[Path, list[str]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    db, haf_runs = mixed_db
    status, out = _report(db, capsys, monkeypatch)
    assert status == 0
    for title in ("Table 1 —", "Table 2 —", "Table 4 —"):
        table = _section(out, title)
        assert RATIONALE_RUN not in table.split("1 run has no HAF")[0], table
        assert all(run in table for run in haf_runs), table
    assert out.count(f"1 run has no HAF stages: {RATIONALE_RUN}") == 1
    rationales = _section(out, "Rationales —")
    assert RATIONALE_RUN in rationales and not any(run in rationales.split("4 runs")[0]
                                                   for run in haf_runs)  # fmt: skip
    assert "4 runs have no rationales stages: " in out
    status, csv = _report(db, capsys, monkeypatch, "--report", "table1", "--format", "csv")
    assert status == 0 and RATIONALE_RUN not in csv and len(csv.splitlines()) == 1 + 2 * 4


def test_a_judge_run_is_no_row_of_dashes_in_haf_tables(
    judged_db: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    status, out = _report(judged_db, capsys, monkeypatch)
    assert status == 0
    haf_part = out[: out.index("1 run has no HAF stages: judged")]
    assert "judged " not in haf_part.replace("judge run", "")
    assert out.count("no HAF stages") == 1 and "Judge —" in out  # (its own table, by default)


def test_json_of_several_reports_is_one_document_keyed_by_report(
    mixed_db: tuple[Path, list[str]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each suite's reports, each over the runs holding its suite, in one JSON document (a
    JSON reader takes one); one report asked for: its rows, a list, as before."""
    db, haf_runs = mixed_db
    status, out = _report(db, capsys, monkeypatch, "--format", "json")
    document = json.loads(out)
    assert status == 0 and list(document)[:3] == ["table1", "table2", "table4"]
    assert {row["run"] for row in document["table1"]} == set(haf_runs)
    assert {row["run"] for row in document["rationales"]} == {RATIONALE_RUN}
    _, one = _report(db, capsys, monkeypatch, "--report", "table1", "--format", "json")
    assert json.loads(one) == document["table1"]


def test_a_column_is_defined_by_its_own_methods_words(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """classify's "gold" (instances with a gold label) is no rationales' "gold" (1 when the
    annotators marked words), though both reports have a column of that name."""
    db = tmp_path / "classify.duckdb"
    classify_db(db)
    args = ("--report", "classification", "--columns", "all")
    status, out = _report(db, capsys, monkeypatch, *args, width=200)
    assert status == 0 and "Label scores" in out
    flat = " ".join(out.split())
    assert "gold: the instances with a gold label" in flat and "annotators marked" not in flat


def test_closing_lines_speak_of_the_haf_runs_not_the_newest_run(
    mixed_db: tuple[Path, list[str]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    db, _ = mixed_db
    _, out = _report(db, capsys, monkeypatch)
    assert "the run holds no HAF suite" not in out  # (the newest run is the rationales run)
    assert "Explore instance" in out and "of 32 instances stopped after JUSTIFY" in out


def test_at_80_columns_each_table_is_one_compact_table_and_the_rest_is_named(
    mixed_db: tuple[Path, list[str]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    db, _ = mixed_db
    _, out = _report(db, capsys, monkeypatch)
    assert "RECORD" not in out and max(len(line) for line in out.splitlines()) <= 80
    assert len(out.splitlines()) < 110  # (491 lines before, each run a record)
    table1 = _section(out, "Table 1 —")
    header = next(line for line in table1.splitlines() if line.startswith("run "))
    assert header.split() == ["run", "pooling", "SoS", "DiS", "UII", "UEI", "RS"]
    assert "not shown at this width: model, dataset, instances, RN, 6 n columns" in table1
    # a mean over fewer than 5 values carries its n though its n column is left out
    _, csv = _report(db, capsys, monkeypatch, "--report", "table1", "--format", "csv")
    small = [
        f"{float(row['UEI']):.3f} n={row['UEI n']}"
        for row in csv_records(csv)
        if row["UEI"] and 0 < int(row["UEI n"]) < 5
    ]
    assert small and all(cell in table1 for cell in small), small
    assert "n=k after a value: a mean over only k (< 5) values" in " ".join(table1.split())
    _, wide = _report(db, capsys, monkeypatch, "--report", "table1", width=250)
    assert "not shown" not in wide and "SoS n" in wide and "Llama-3.2-3B" in wide
    _, every = _report(db, capsys, monkeypatch, "--report", "table1", "--columns", "all")
    assert "RECORD" in every and "SoS n" in every  # (asked for: every column, as records)


def test_a_legend_under_each_table_from_the_metric_specs(
    mixed_db: tuple[Path, list[str]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    db, _ = mixed_db
    _, out = _report(db, capsys, monkeypatch, width=200)
    table1, table4 = _section(out, "Table 1 —"), _section(out, "Table 4 —")
    assert "SoS ↑ strength of support" in table1 and "UII ↓" in table1 and "UEI ↓" in table1
    assert "pooled: the reference's rule" in table1 and "instance mean: mean of" in table1
    for term in ("C(Y): ", "S/N(Y): ", "I_S/I_N: "):
        assert term in table4
    # the terms average different reasons (UNCLEAR: no C(Y), an S/N(Y)): said, not implied
    assert "each term averages its own n" in " ".join(table4.split())
    assert "score need not be the product of the terms' means" in " ".join(table4.split())
    rationales = _section(out, "Rationales —")
    assert "SUFF ↓" in rationales and "COMP ↑" in rationales
    _, narrow = _report(db, capsys, monkeypatch, "--report", "rationales")
    legend = _section(narrow, "Rationales —").split("more")[-1]
    assert "IOU ↑" in legend and "SUFF" not in legend  # (not shown: no legend)


def test_a_single_run_writes_the_campaign_reports_html_and_latex(
    mixed_db: tuple[Path, list[str]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    db, haf_runs = mixed_db
    run, out_dir = haf_runs[0], tmp_path / "out"
    status, out = _report(db, capsys, monkeypatch, "--run", run, "--format", "html",
                          "--out", str(out_dir))  # fmt: skip
    html = (out_dir / "report.html").read_text()
    assert status == 0 and str(out_dir / "report.html") in out
    assert (
        f"Run report — {run}" in html and "Table 1" in html and "<svg" in html
    )  # (figures inline: offline)
    assert 'src="figures/' not in html and "<link " not in html
    status, _ = _report(db, capsys, monkeypatch, "--run", run, "--format", "latex",
                        "--out", str(tmp_path / "tex"))  # fmt: skip
    assert status == 0 and "\\begin{table" in (tmp_path / "tex" / "report.tex").read_text()
    (out_dir / "report.html").write_text("kept")
    status = main(["report", "--db", str(db), "--run", run, "--format", "html",
                   "--out", str(out_dir)])  # fmt: skip
    assert status == 2 and "exists: not replaced without --force" in one_line_error(capsys)
    assert (out_dir / "report.html").read_text() == "kept"
    assert main(["report", "--db", str(db), "--run", run, "--format", "html",
                 "--out", str(out_dir), "--force"]) == 0  # fmt: skip
    assert (out_dir / "report.html").read_text() != "kept"


def test_html_without_out_or_with_report_is_one_line(
    mixed_db: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    db, haf_runs = mixed_db
    assert main(["report", "--db", str(db), "--run", haf_runs[0], "--format", "html"]) == 2
    assert "give --out FOLDER" in one_line_error(capsys)
    args = ["report", "--db", str(db), "--format", "latex", "--out", "x", "--report", "table1"]
    assert main(args) == 2 and "leave out --report" in one_line_error(capsys)


def test_column_ranks_keep_run_keys_values_then_names_then_counts() -> None:
    columns = ["model", "dataset", "run", "instances", "pooling", "SoS", "SoS n", "detail"]
    rows = [("m", "d", "r", 8, "pooled", 0.5, 3, "x 1"), ("m", "d", "r", 8, "inst", None, 0, "")]
    ranks = column_ranks(columns, rows)
    order = [columns[k] for k in sorted(range(len(columns)), key=lambda k: ranks[k])]
    assert order == ["run", "pooling", "SoS", "model", "dataset", "instances", "SoS n", "detail"]


def test_compact_table_gives_up_when_not_even_one_value_fits() -> None:
    from rich.console import Console

    columns, rows = ["run", "pooling", "SoS"], [("a-long-run-id", "pooled", 0.5)]
    assert compact_table("t", columns, rows, Console(width=30)) is not None
    assert compact_table("t", columns, rows, Console(width=20)) is None


def csv_records(text: str) -> list[dict[str, str]]:
    import csv
    import io

    return list(csv.DictReader(io.StringIO(text)))


def test_a_small_n_rides_with_its_value_when_its_column_is_left_out() -> None:
    from rich.console import Console

    columns = ["run", "pooling", "SoS", "DiS", "% NO", "SoS n", "DiS n", "of"]
    rows = [
        ("run-a", "pooled", 0.5, 0.25, 50.0, 1, 4, 2),
        ("run-b", "pooled", 0.75, 0.125, 12.5, 5, 0, 8),
    ]

    def printed(width: int, counts: tuple[tuple[str, str], ...] = ()) -> tuple[str, list[str]]:
        console = Console(width=width, record=True, color_system=None)
        fitted = compact_table("t", columns, rows, console, counts)
        assert fitted is not None
        console.print(fitted[0])
        return console.export_text(), fitted[1]

    narrow, left_out = printed(44)
    assert "SoS n" in left_out and "DiS n" in left_out
    assert "0.500 n=1" in narrow and "0.250 n=4" in narrow  # 1 and 4 < 5
    assert "0.750 n" not in narrow and "0.125 n" not in narrow  # 5, and 0 (no mean: —)
    assert "50.000 n" not in narrow  # no n column declared for % NO
    assert carries_small_n(columns, rows, left_out)
    declared, left_out = printed(52, (("% NO", "of"),))
    assert "of" in left_out and "SoS n" not in left_out
    assert "50.000 n=2" in declared and "12.500 n" not in declared
    wide, shown_all = printed(120)
    assert not shown_all and "n=" not in wide  # the n columns are shown: nothing to carry
    assert not carries_small_n(columns, rows, shown_all)


def test_the_legend_names_only_the_columns_and_terms_shown() -> None:
    specs = {"SoS": ("↑", "strength of support: mean"), "UII": ("↓", "new reasons; more")}
    lines = legend_lines(["run", "SoS"], [("r", 0.5)], specs, [("pooled", "p"), ("C(Y)", "c")])
    assert lines == ["↑ higher is better, ↓ lower. SoS ↑ strength of support"]
    lines = legend_lines(["x C(Y)"], [("pooled",)], specs, [("pooled", "p"), ("C(Y)", "c")])
    assert lines == ["pooled: p", "C(Y): c"]
