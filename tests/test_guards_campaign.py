"""Guards for ``haf campaign`` (issue 33 §2): slips the campaign's own tests let through.

The ETA of a pending cell takes its model's finished cells' pace over its running cells';
a grid's model and dataset files are found beside the grid file, whatever the current folder;
the LaTeX report escapes every LaTeX special of a model name (checked in the source text: no
pdflatex needed); a summary table's metrics are not shown again in the method's "other
per-instance metrics" table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from haf_tui.campaign import campaign_status, load_grid
from haf_tui.campaign.report import CampaignReport
from haf_tui.campaign.report.latex import escape, to_latex
from haf_tui.campaign.report.tables import campaign_cells, campaign_tables
from haf_tui.store import RunRecord, Store, open_store
from haf_tui.store.campaigns import ClaimedCell, claim_cell
from haf_tui.store.records import InstanceResult
from tests.support.campaign_store import campaign_db

GRID = """
models = ["embedded"]
datasets = ["sample", {label = "again", name = "sample"}, {label = "third", name = "sample"}]
suites = ["classify"]
limit = 4
seed = 3
"""


def _run(store: Store, run_id: str, status: str, seconds: float, done: int) -> None:
    """A stored run of ``done`` finished instances (of 4) that took ``seconds``."""
    store.create_run(
        RunRecord(
            run_id=run_id,
            status=status,
            dataset_id="builtin-sample",
            n_planned=4,
            config_json="{}",
            model_file="m.gguf",
            similarity_model="s",
            similarity_kind="bi-encoder",
        )
    )
    store.update_run(run_id, seconds=seconds)
    for index in range(done):
        store.save_instance_result(InstanceResult(run_id, f"i{index}", stance="toxic", n_reasons=0))


def test_a_pending_cell_takes_its_models_finished_pace_over_a_running_ones(
    tmp_path: Path,
) -> None:
    """A finished cell did 4 instances in 4 s (1 s each); the cell under way did 1 in 10 s
    (a slow first instance, a loaded machine): the pending cell's 4 instances take 4 s."""
    path = tmp_path / "grid.toml"
    path.write_text(GRID, encoding="utf-8")
    grid = load_grid(path)
    with open_store(tmp_path / "c.duckdb") as store:
        claim_cell(store, grid.name, ClaimedCell("embedded", "sample", "r1", "f", {}, 0))
        claim_cell(store, grid.name, ClaimedCell("embedded", "again", "r2", "f", {}, 1))
        _run(store, "r1", "finished", 4.0, 4)
        _run(store, "r2", "interrupted", 10.0, 1)  # (under way, or stopped)
        status = campaign_status(store, grid)
    finished, running, pending = status.cells
    statuses = (finished.status, running.status, pending.status)
    assert statuses == ("finished", "interrupted", "pending")
    assert running.eta_seconds == pytest.approx(30.0)  # (its own pace: 3 left at 10 s)
    assert pending.eta_seconds == pytest.approx(4.0)  # (the finished cell's: 4 at 1 s)
    assert status.eta_seconds == pytest.approx(34.0) and status.eta_complete


def test_a_grids_files_are_found_beside_it_not_in_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The grid names ``m.gguf``, ``posts.jsonl`` and ``runs.duckdb``; files of those names
    in the current folder are decoys: the grid's own folder's are the ones taken."""
    grids, elsewhere = tmp_path / "grids", tmp_path / "elsewhere"
    grids.mkdir(), elsewhere.mkdir()
    for folder in (grids, elsewhere):
        (folder / "m.gguf").write_bytes(b"GGUF")
        (folder / "posts.jsonl").write_text('{"text": "a post", "label": "toxic"}\n')
    (grids / "grid.toml").write_text(
        'database = "runs.duckdb"\nmodels = ["m.gguf"]\ndatasets = ["posts.jsonl"]\n'
        'suites = ["classify"]\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(elsewhere)
    grid = load_grid(Path("..") / "grids" / "grid.toml")
    assert [m.path for m in grid.models] == [str(grids / "m.gguf")]
    assert [d.file for d in grid.datasets] == [str(grids / "posts.jsonl")]
    assert grid.database == grids / "runs.duckdb"
    (elsewhere / "m.gguf").unlink(), (elsewhere / "posts.jsonl").unlink()
    assert load_grid(Path("..") / "grids" / "grid.toml").models == grid.models  # (none here)


LATEX_SPECIALS = "\\{}^~<>|&%$#_"
"""Every character LaTeX reads as markup (``<``, ``>``, ``|`` print other glyphs in OT1)."""


def _unescaped(source: str) -> str:
    """``source`` without its escapes (``\\&``, ``\\textasciicircum{}``, …): any LaTeX special
    left is one that was not escaped."""
    return re.sub(r"\\[a-zA-Z]+\{\}|\\[&%$#_{}]", "", source)


@pytest.mark.parametrize("special", list(LATEX_SPECIALS))
def test_every_latex_special_is_escaped(special: str) -> None:
    escaped = escape(f"a{special}b")
    assert escaped.startswith("a") and escaped.endswith("b") and escaped != f"a{special}b"
    assert not set(_unescaped(escaped)) & set(LATEX_SPECIALS), escaped


MODEL = "Qwen^2~x\\y{z}<a>|b"
"""A model label made of LaTeX specials."""
MODEL_TEX = (
    r"Qwen\textasciicircum{}2\textasciitilde{}x\textbackslash{}y\{z\}\textless{}a"
    r"\textgreater{}\textbar{}b"
)


@pytest.fixture(scope="module")
def report_store(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, list[tuple[str, str, str]]]:
    """The campaign report tests' store (four HAF runs, a rationales run), its cells."""
    path = tmp_path_factory.mktemp("guards-campaign") / "runs.duckdb"
    return path, campaign_db(path, n_instances=6)


def _report(path: Path, cells: list[tuple[str, str, str]]) -> CampaignReport:
    """The report's tables (no figures: nothing here draws them)."""
    with open_store(path, read_only=True) as store:
        found = campaign_cells(store, cells)
        tables, run_tables, notes = campaign_tables(store, found)
    return CampaignReport("guards", found, tables, [], notes, run_tables, {})


def test_a_model_name_of_latex_specials_is_escaped_in_the_report(
    report_store: tuple[Path, list[tuple[str, str, str]]],
) -> None:
    path, cells = report_store
    renamed = [(MODEL if i == 0 else model, dataset, run) for i, (model, dataset, run) in
               enumerate(cells)]  # fmt: skip
    tex = to_latex(_report(path, renamed))
    assert MODEL_TEX in tex
    assert not [line for line in tex.splitlines() if "Qwen" in line and MODEL_TEX not in line]
    assert "Qwen^" not in tex and "2~x" not in tex and "<a>" not in tex


def test_a_summary_tables_metrics_are_not_repeated_in_the_other_metrics_table(
    report_store: tuple[Path, list[tuple[str, str, str]]],
) -> None:
    """HAF's Table 1 shows its per-instance metrics (SoS, DiS, …); the table of HAF's "other
    per-instance metrics" shows only those no summary table showed."""
    path, cells = report_store
    tables = _report(path, cells).tables
    haf = [table for table in tables if table.slug.startswith("haf-")]
    others = [table for table in haf if table.slug == "haf-metrics"]
    summaries = [table for table in haf if table.slug != "haf-metrics"]
    assert summaries and others, [t.slug for t in tables]
    (other,) = others
    assert "other per-instance metrics" in other.title.lower()
    in_summaries = {line.metric for table in summaries for line in table.lines}
    in_other = {line.metric for line in other.lines}
    assert in_other and not in_other & in_summaries, sorted(in_other & in_summaries)
