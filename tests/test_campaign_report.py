"""The campaign report (haf_tui.campaign.report) on a real DuckDB of stored runs: its numbers
against an independent computation from the store's tables, the cells that lack a suite or
have not finished, every format (Markdown, CSV, LaTeX compiled when pdflatex is there, HTML
self-contained), the figures, and what it refuses."""

from __future__ import annotations

import csv
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from haf_tui.campaign.report import CampaignReportError, write_campaign_report
from haf_tui.reports import run_named
from haf_tui.reports.comparison import CONFIDENCE, N_RESAMPLES, SEED
from haf_tui.store import Store, open_store
from tests.support.campaign_store import MODEL_A, MODEL_C, campaign_db

ALL = ["markdown", "latex", "csv", "html"]


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[tuple[str, str, str]]]:
    """The store with the campaign's runs, and its cells."""
    path = tmp_path_factory.mktemp("campaign") / "runs.duckdb"
    return path, campaign_db(path)


@pytest.fixture(scope="module")
def written(
    campaign: tuple[Path, list[tuple[str, str, str]]], tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """The report in every format, written once."""
    path, cells = campaign
    out = tmp_path_factory.mktemp("report")
    with open_store(path, read_only=True) as store:
        write_campaign_report(store, "pilot #1 & 100% $", cells, ALL, out)
    return out


def _interval(values: list[float]) -> tuple[float, float]:
    found = stats.bootstrap(
        (np.asarray(values),),
        np.mean,
        confidence_level=CONFIDENCE,
        n_resamples=N_RESAMPLES,
        method="percentile",
        rng=np.random.default_rng(SEED),
    ).confidence_interval
    return float(found.low), float(found.high)


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _check(row: dict[str, str], values: list[float]) -> None:
    """A CSV row's mean, interval and n are those of ``values``, computed here."""
    assert int(row["n"]) == len(values)
    assert float(row["mean"]) == pytest.approx(sum(values) / len(values), abs=1e-12)
    if len(values) > 1 and len(set(values)) > 1:
        low, high = _interval(values)
        assert float(row["ci_low"]) == pytest.approx(low, abs=1e-9)
        assert float(row["ci_high"]) == pytest.approx(high, abs=1e-9)


def _instance_values(store: Store, run_id: str, metric: str) -> list[float]:
    sql = """
        SELECT m.value FROM instance_metrics m
        JOIN instance_results f USING (run_id, instance_id)
        WHERE m.run_id = ? AND m.metric = ? AND m.value IS NOT NULL AND NOT isnan(m.value)
    """
    return [float(v) for (v,) in store.query(sql, [run_id, metric])[1]]


def test_table1_is_the_instance_mean_with_its_bootstrap_interval(
    campaign: tuple[Path, list[tuple[str, str, str]]], written: Path
) -> None:
    path, cells = campaign
    rows = _csv(written / "tables" / "haf-table1.csv")
    labels = {"sos": "SoS", "dis": "DiS", "uii": "UII", "uei": "UEI", "rs": "RS", "rn": "RN"}
    with open_store(path, read_only=True) as store:
        for model, dataset, run_id in cells[:4]:
            for metric, label in labels.items():
                (row,) = [r for r in rows if r["run_id"] == run_id and r["metric"] == label]
                assert (row["model"], row["dataset"]) == (model, dataset)
                _check(row, _instance_values(store, run_id, metric))
    assert {r["run_id"] for r in rows} == {c[2] for c in cells[:4]}  # (no HAF in the fifth)
    assert {r["better"] for r in rows if r["metric"] in {"UII", "UEI"}} == {"lower"}


def test_table2_is_each_finished_instances_share_of_no(
    campaign: tuple[Path, list[tuple[str, str, str]]], written: Path
) -> None:
    path, cells = campaign
    rows = _csv(written / "tables" / "haf-table2.csv")
    sql = """
        SELECT g.decision FROM generations g JOIN instance_results f USING (run_id, instance_id)
        WHERE g.run_id = ? AND g.stage = ?
    """
    with open_store(path, read_only=True) as store:
        for _, _, run_id in cells[:4]:
            for stage in ("internal", "external"):
                decisions = [d for (d,) in store.query(sql, [run_id, stage])[1]]
                (row,) = [r for r in rows if r["run_id"] == run_id and r["group"] == stage]
                _check(row, [100.0 if d == "NO" else 0.0 for d in decisions])
    assert list(dict.fromkeys(r["group"] for r in rows)) == ["internal", "external"]


def test_table4_agrees_with_the_table4_querys_instance_mean(
    campaign: tuple[Path, list[tuple[str, str, str]]], written: Path
) -> None:
    path, cells = campaign
    rows = _csv(written / "tables" / "haf-table4.csv")
    parts = {"score": "score", "c_y": "C(Y)", "decision_weight": "S/N(Y)"}
    parts["informativeness"] = "I_S/I_N"
    with open_store(path, read_only=True) as store:
        columns, found = run_named(store, "table4", {"run_ids": [c[2] for c in cells[:3]]})
    checked = 0
    for record in (dict(zip(columns, r, strict=True)) for r in found):
        group = f"{record['metric']} ({record['test']})"
        for column, label in parts.items():
            (row,) = [
                r
                for r in rows
                if r["run_id"] == record["run_id"] and r["group"] == group and r["metric"] == label
            ]
            expected = record[f"{column}_instance_mean"]
            assert int(row["n"]) == record[f"{column}_instance_n"]
            if expected is not None:
                assert float(row["mean"]) == pytest.approx(expected, abs=1e-12)
                checked += 1
    assert checked >= 20


def test_unfinished_and_lacking_cells_are_said(
    campaign: tuple[Path, list[tuple[str, str, str]]], written: Path
) -> None:
    _, cells = campaign
    markdown = (written / "report.md").read_text(encoding="utf-8")
    table1 = markdown.split("## Table 1")[1].split("\n## ")[0]
    assert "†" in table1 and "the run has not finished" in table1
    assert f"Left out, the suite did not run there: {MODEL_C} × mini 50%." in table1
    interrupted = cells[3][2]
    rows = _csv(written / "tables" / "haf-table1.csv")
    assert {r["finished"] for r in rows if r["run_id"] == interrupted} == {"False"}
    # the rationales' table: the scripted run's metrics, the four HAF runs left out
    rationale_rows = _csv(written / "tables" / "rationales-metrics.csv")
    assert {r["model"] for r in rationale_rows} == {MODEL_C}
    assert "## Rationales: per-instance metrics" in markdown
    assert f"{MODEL_A} × sample" in markdown.split("## Rationales")[1]
    assert "judge: no cell ran this suite" in markdown
    # the rationales' own run-level report (its first suggested one), as the method shapes it
    summary = _csv(written / "tables" / "rationales-rationales.csv")
    assert summary and {(r["model"], r["dataset"]) for r in summary} == {(MODEL_C, "mini 50%")}
    assert "as the rationales method reports it" in markdown
    assert "Pooling: instance means" in table1 and "percentile bootstrap" in table1
    assert "SoS (0–1, higher is better):" in table1  # (definitions from the MetricSpecs)


def test_the_latex_document_is_booktabs_escaped_and_compiles(written: Path) -> None:
    tex = (written / "report.tex").read_text(encoding="utf-8")
    assert tex.isascii()
    assert r"\usepackage{booktabs}" in tex and r"\begin{document}" in tex
    assert tex.count(r"\begin{tabular}") == tex.count(r"\end{tabular}") >= 5
    assert tex.count(r"\toprule") == tex.count(r"\bottomrule") == tex.count(r"\begin{tabular}")
    assert r"pilot \#1 \& 100\% \$" in tex and r"Model A\&B\_1" in tex
    body = re.sub(r"\\[{}]", "", tex)
    assert body.count("{") == body.count("}")
    for pdf in re.findall(r"\\includegraphics\[[^]]*\]\{([^}]*)\}", tex):
        assert (written / pdf).is_file()
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed: the document's structure was checked, not compiled")
    done = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "report.tex"],
        cwd=written, capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:]
    assert (written / "report.pdf").read_bytes().startswith(b"%PDF")


def test_the_html_is_one_self_contained_file(written: Path) -> None:
    page = (written / "report.html").read_text(encoding="utf-8")
    assert "http://" not in page and "https://" not in page
    assert not re.search(r"\s(src|href)=\"(?!#)", page)  # (only links inside the page)
    assert "<script" not in page and "<link" not in page and "@import" not in page
    markdown = (written / "report.md").read_text(encoding="utf-8")
    titles = re.findall(r"^## (.+)$", markdown, flags=re.MULTILINE)
    for title in titles:
        assert title.replace("&", "&amp;") in page
    figures = sorted((written / "figures").glob("*.svg"))
    assert page.count("<svg") == len(figures) >= 3
    assert page.count("<table") == len([t for t in titles if not t.startswith(("Fig", "Dist"))])
    ids = re.findall(r'\bid="([^"]+)"', page)
    assert len(ids) == len(set(ids))  # (the figures' ids do not clash)


def test_the_figures_are_svg_and_pdf(written: Path) -> None:
    svgs = sorted((written / "figures").glob("*.svg"))
    names = {p.stem for p in svgs}
    assert {p.stem for p in (written / "figures").glob("*.pdf")} == names
    assert {"figure2-1", "figure2-2"} <= names
    assert any(name.startswith("dist-") and "rationales" in name for name in names)
    for svg in svgs:
        text = svg.read_text(encoding="utf-8")
        assert text.startswith("<svg") and "<image" not in text and "@font-face" not in text
        assert (svg.with_suffix(".pdf")).read_bytes().startswith(b"%PDF")
    rows = _csv(written / "tables" / "figure2.csv")
    assert {r["stance"] for r in rows} >= {"toxic", "non-toxic"}


def test_existing_files_are_kept_unless_forced(
    campaign: tuple[Path, list[tuple[str, str, str]]], tmp_path: Path
) -> None:
    path, cells = campaign
    with open_store(path, read_only=True) as store:
        write_campaign_report(store, "c", cells[:2], ["csv"], tmp_path)
        assert not (tmp_path / "report.md").exists() and not (tmp_path / "report.html").exists()
        kept = (tmp_path / "tables" / "cells.csv").read_bytes()
        with pytest.raises(CampaignReportError, match=r"cells\.csv exists: .*--force"):
            write_campaign_report(store, "c", cells[:3], ["csv", "markdown"], tmp_path)
        assert (tmp_path / "tables" / "cells.csv").read_bytes() == kept
        assert not (tmp_path / "report.md").exists()  # (nothing written when one is refused)
        write_campaign_report(store, "c", cells[:3], ["csv"], tmp_path, force=True)
        assert (tmp_path / "tables" / "cells.csv").read_bytes() != kept
        assert not list(tmp_path.rglob("*.tmp"))


def test_bad_requests_are_one_line(
    campaign: tuple[Path, list[tuple[str, str, str]]], tmp_path: Path
) -> None:
    path, cells = campaign
    with open_store(path, read_only=True) as store:
        with pytest.raises(CampaignReportError, match="unknown report format 'word'"):
            write_campaign_report(store, "c", cells, ["word"], tmp_path)
        with pytest.raises(CampaignReportError, match=r"run nope .* is not in"):
            write_campaign_report(store, "c", [("m", "d", "nope")], ["csv"], tmp_path)
        with pytest.raises(CampaignReportError, match="has two runs"):
            write_campaign_report(store, "c", [cells[0], cells[0]], ["csv"], tmp_path)
        assert not list(tmp_path.iterdir())
        a_file = tmp_path / "notes.txt"  # (--out names a file: its folders cannot be made)
        a_file.write_text("mine", encoding="utf-8")
        with pytest.raises(CampaignReportError, match=r"cannot write .*notes\.txt"):
            write_campaign_report(store, "c", cells[:2], ["markdown"], a_file)
        assert a_file.read_text(encoding="utf-8") == "mine"


def test_the_report_is_reproducible(
    campaign: tuple[Path, list[tuple[str, str, str]]], tmp_path: Path, written: Path
) -> None:
    path, cells = campaign
    with open_store(path, read_only=True) as store:
        write_campaign_report(store, "pilot #1 & 100% $", cells, ALL, tmp_path)
    for name in ("report.md", "report.html", "report.tex", "tables/haf-table1.csv"):
        assert (tmp_path / name).read_bytes() == (written / name).read_bytes(), name


def test_matplotlib_is_imported_only_when_a_report_is_drawn() -> None:
    code = "import sys, haf_tui.campaign.report; print('matplotlib' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "False"
    assert not math.isnan(0.0)
