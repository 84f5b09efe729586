"""``haf campaign`` given hostile input (issue 33 §3): a symlink in ``--out`` (replaced, its
target never written), labels that look like rich markup or mathtext (text everywhere: the
command line's lines, the status table, the figures), grid files that are FIFOs, symlink
loops or start with a BOM, ``limit = true``, ``--out ""``, and the status of a 300 × 300 grid.
Each is one line or the right behaviour, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Static

from haf_tui.campaign import GridError, load_grid
from haf_tui.campaign.cells import plan_campaign
from haf_tui.campaign.report import CampaignReportError, write_campaign_report
from haf_tui.campaign.runner import CampaignHooks, run_campaign
from haf_tui.cli import main
from haf_tui.cli.campaign_command import grid_run_config
from haf_tui.defaults import embedded_model_path
from haf_tui.inference.base import InferenceError
from haf_tui.inference.gguf import read_gguf_info
from haf_tui.inference.llama import LlamaCppBackend
from haf_tui.pipeline.models import LoadedModels
from haf_tui.store import open_store
from tests.support.campaign_store import campaign_db
from tests.support.rationale_runs import ScriptedRationaleModel
from tests.test_scheduler import FlatSimilarity

REPO = Path(__file__).resolve().parents[1]


def _grid(folder: Path, text: str, name: str = "grid.toml") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[tuple[str, str, str]]]:
    """A store of stored runs (no model), and its cells."""
    path = tmp_path_factory.mktemp("campaign") / "runs.duckdb"
    return path, campaign_db(path, n_instances=6)


# --- the report's files: a symlink is replaced, never written through ---------------------


def test_force_replaces_a_symlink_in_out_never_its_target(
    campaign: tuple[Path, list[tuple[str, str, str]]], tmp_path: Path
) -> None:
    path, cells = campaign
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "precious.md"
    victim.write_text("mine", encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.md").symlink_to(victim)
    (out / "report.html").symlink_to(outside / "nothing-there.html")  # (dangling)
    with open_store(path, read_only=True) as store:
        with pytest.raises(CampaignReportError, match=r"report\.md exists: .*--force"):
            write_campaign_report(store, "c", cells[:2], ["markdown"], out)
        with pytest.raises(CampaignReportError, match=r"report\.html exists: .*--force"):
            write_campaign_report(store, "c", cells[:2], ["html"], out)
        write_campaign_report(store, "c", cells[:2], ["markdown", "html"], out, force=True)
    assert victim.read_text(encoding="utf-8") == "mine"
    assert not (outside / "nothing-there.html").exists()
    for name in ("report.md", "report.html"):
        assert not (out / name).is_symlink() and (out / name).stat().st_size > 100
    assert sorted(p.name for p in outside.iterdir()) == ["precious.md"]


def test_a_folder_in_out_that_links_outside_it_is_refused(
    campaign: tuple[Path, list[tuple[str, str, str]]], tmp_path: Path
) -> None:
    path, cells = campaign
    outside = tmp_path / "outside"
    outside.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (out / "tables").symlink_to(outside, target_is_directory=True)
    refused = pytest.raises(CampaignReportError, match=r"tables is a link to .*outside .*out")
    with open_store(path, read_only=True) as store, refused:
        write_campaign_report(store, "c", cells[:2], ["csv"], out, force=True)
    assert not list(outside.iterdir()) and not list(out.rglob("*.svg"))


def test_an_empty_out_is_one_line_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    grid = _grid(tmp_path, "models = ['embedded']\ndatasets = ['sample']\n")
    open_store(tmp_path / "c.duckdb").close()
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    args = ["campaign", "report", str(grid), "--db", str(tmp_path / "c.duckdb"), "--out", ""]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err == "error: --out is empty: give the folder to write the report into"
    assert not list(work.iterdir())


# --- labels are text ---------------------------------------------------------------------

MARKUP_GRID = """
name = "[/]"
models = [{path = "embedded", label = "[bold]m[/bold] [/]"}]
datasets = [{label = "[/] d \\\\", name = "sample"}, {label = "$\\\\alpha$ [x]", name = "sample"}]
suites = ["classify"]
limit = 2
"""


class _ScriptedFile(ScriptedRationaleModel):
    """The scripted model, standing for the embedded GGUF (its metadata, never its weights)."""

    def __init__(self) -> None:
        super().__init__()
        self.info = read_gguf_info(embedded_model_path())
        self.chat_format = "chatml"
        self.offload_supported = False
        self.n_gpu_layers = 0


def _scripted_models(*_: Any) -> LoadedModels:
    return LoadedModels(_ScriptedFile(), FlatSimilarity())


def test_labels_that_look_like_markup_are_printed_as_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``campaign run`` prints the grid's name and labels as typed; every cell's run
    finishes (none left ``created``); ``campaign status`` prints them too."""
    monkeypatch.setattr("haf_tui.campaign.runner.load_models", _scripted_models)
    monkeypatch.setenv("COLUMNS", "200")
    grid = _grid(tmp_path, MARKUP_GRID)
    db = str(tmp_path / "c.duckdb")
    assert main(["campaign", "run", str(grid), "--db", db]) == 0
    out = capsys.readouterr().out
    assert "campaign [/]: 1 model(s)" in out
    assert "[bold]m[/bold] [/] × [/] d \\: run" in out and "d \\\\" not in out
    assert "[bold]m[/bold] [/] × $\\alpha$ [x]: run" in out
    with open_store(db, read_only=True) as store:
        _, rows = store.query("SELECT status FROM runs")
    assert [status for (status,) in rows] == ["finished", "finished"]
    assert main(["campaign", "status", str(grid), "--db", db]) == 0
    out = capsys.readouterr().out
    assert "campaign [/]" in out and "$\\alpha$ [x]" in out and "[/] d \\" in out
    assert "2/2 cells finished" in out


def test_a_label_with_dollars_is_drawn_as_text(
    campaign: tuple[Path, list[tuple[str, str, str]]], tmp_path: Path
) -> None:
    """matplotlib's mathtext never reads a label (``$\\alpha$``, an unmatched ``$``)."""
    path, cells = campaign
    (_, _, first), (_, _, second) = cells[:2]
    labelled = [("$\\alpha$ model", "a $b", first), ("{x}_1 $", "$$", second)]
    with open_store(path, read_only=True) as store:
        write_campaign_report(store, "c $", labelled, ["markdown", "latex"], tmp_path)
    svgs = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "figures").glob("*.svg"))
    assert "$\\alpha$ model" in svgs and "{x}_1 $" in svgs


# --- grid files --------------------------------------------------------------------------

PLAIN = "models = ['embedded']\ndatasets = ['sample']\n"


def test_a_grid_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    path = tmp_path / "grid.toml"
    path.write_bytes(b"\xef\xbb\xbf" + PLAIN.encode() + b"limit = 3\n")
    grid = load_grid(path)
    assert grid.limit == 3 and [d.label for d in grid.datasets] == ["sample"]


@pytest.mark.parametrize("key", ["limit", "seed"])
def test_a_boolean_limit_or_seed_is_refused(tmp_path: Path, key: str) -> None:
    with pytest.raises(GridError, match=f"{key}: Input should be a valid integer"):
        load_grid(_grid(tmp_path, PLAIN + f"{key} = true\n"))
    with pytest.raises(GridError, match=f"{key}: Input should be a valid integer"):
        load_grid(_grid(tmp_path, PLAIN + f"{key} = 2.0\n"))


def test_symlink_loops_are_one_line(tmp_path: Path) -> None:
    (tmp_path / "loop.gguf").symlink_to(tmp_path / "loop.gguf")
    (tmp_path / "loop.csv").symlink_to(tmp_path / "loop.csv")
    (tmp_path / "grid.toml").symlink_to(tmp_path / "grid.toml")
    with pytest.raises(GridError, match=r"cannot read .*grid\.toml: Too many levels"):
        load_grid(tmp_path / "grid.toml")
    text = "models = ['loop.gguf']\ndatasets = ['sample']\n"
    with pytest.raises(GridError, match=r"model file loop\.gguf: cannot follow .*symlink loop"):
        load_grid(_grid(tmp_path, text, "a.toml"))
    text = "models = ['embedded']\ndatasets = ['loop.csv']\n"
    with pytest.raises(GridError, match=r"dataset file loop\.csv: cannot follow .*symlink"):
        load_grid(_grid(tmp_path, text, "b.toml"))


def test_files_that_are_not_regular_files_are_one_line(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.csv")
    (tmp_path / "folder.gguf").mkdir()
    text = "models = ['folder.gguf']\ndatasets = ['sample']\n"
    with pytest.raises(GridError, match=r"model file folder\.gguf: it is a folder, not a file"):
        load_grid(_grid(tmp_path, text, "a.toml"))
    text = "models = ['embedded']\ndatasets = ['pipe.csv']\n"
    with pytest.raises(GridError, match=r"dataset file pipe\.csv: it is a named pipe"):
        load_grid(_grid(tmp_path, text, "b.toml"))
    with pytest.raises(GridError, match=r"cannot read .*: it is a folder"):
        load_grid(tmp_path)


def test_status_of_a_fifo_grid_is_one_line_not_a_hang(tmp_path: Path) -> None:
    """Run in a process of its own: a FIFO with no writer would block ``open`` for ever."""
    fifo = tmp_path / "grid.toml"
    os.mkfifo(fifo)
    env = {**os.environ, "PYTHONPATH": str(REPO), "HAF_HOME": str(tmp_path / "home")}
    command = [sys.executable, "-m", "haf_tui.cli", "campaign", "status", str(fifo)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (
        f"error: cannot read {fifo}: it is a named pipe (FIFO), not a file"
    )


def test_a_failing_progress_hook_leaves_no_run_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever a face's hook raises once a cell's run is made, the run is never left
    ``created`` for good (it resumes)."""
    monkeypatch.setattr("haf_tui.campaign.runner.load_models", _scripted_models)
    grid = load_grid(_grid(tmp_path, PLAIN + "suites = ['classify']\nlimit = 1\n"))

    @contextmanager
    def broken(cell: object, started: object) -> Iterator[Any]:
        raise RuntimeError("a face's bug")
        yield

    with open_store(tmp_path / "c.duckdb") as store:
        plan = plan_campaign(store, grid, grid_run_config(grid))
        with pytest.raises(RuntimeError, match="a face's bug"):
            run_campaign(store, plan, hooks=CampaignHooks(progress=broken))
        _, rows = store.query("SELECT status FROM runs")
    assert [status for (status,) in rows] == ["interrupted"]


# --- the model's context size ------------------------------------------------------------


def test_a_context_larger_than_the_model_was_trained_with_is_refused_before_loading(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def never(*_: object, **__: object) -> None:
        raise AssertionError("llama.cpp was asked to allocate the context")

    monkeypatch.setattr("haf_tui.inference.llama_model.open_llama", never)
    trained = read_gguf_info(embedded_model_path()).context_length
    assert trained == 8192
    for n_ctx in (trained + 1, 2_147_483_648):
        with pytest.raises(InferenceError) as caught:
            LlamaCppBackend(embedded_model_path(), n_ctx=n_ctx, n_gpu_layers=0)
        assert str(caught.value) == (
            f"--n-ctx {n_ctx:,} is too large: {embedded_model_path().name} was trained with "
            "8,192 tokens; give at most 8,192"
        )
    with pytest.raises(AssertionError, match="allocate"):  # (the trained size itself: loaded)
        LlamaCppBackend(embedded_model_path(), n_ctx=trained, n_gpu_layers=0)


def test_a_huge_n_ctx_is_one_line_under_a_memory_limit(tmp_path: Path) -> None:
    """``--n-ctx 2147483648`` in a grid's settings and on ``haf run``, in a process limited
    to 3 GB of address space: one line each, nothing allocated for it."""
    grid = _grid(tmp_path, PLAIN + "[settings]\nn-ctx = 2147483648\n")
    env = {**os.environ, "PYTHONPATH": str(REPO), "HAF_HOME": str(tmp_path / "home")}
    limit = "import resource; resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))"
    db = str(tmp_path / "c.duckdb")
    for args in (
        ["campaign", "run", str(grid), "--db", db],
        ["run", "--n-ctx", "2147483648", "--limit", "1", "--db", db],
    ):
        code = f"{limit}; import sys; from haf_tui.cli import main; sys.exit(main({args!r}))"
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
        )
        assert done.returncode == 2, done.stderr[-2000:]
        (line,) = done.stderr.strip().splitlines()
        named = "--n-ctx" if args[0] == "run" else "n_ctx"  # (the option given, the grid's key)
        assert line.startswith(f"error: {named}") and "16777216" in line, line


# --- a large grid ------------------------------------------------------------------------


def test_the_status_of_a_grid_past_a_thousand_cells_is_plain_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A grid of more than 1,000 cells is listed as aligned lines, not a rich table (which
    took 2.7 ms a row: 138 s for 300 x 300; plain lines about 2 s, measured by hand, not
    timed here)."""
    models = ", ".join(f'{{path = "embedded", label = "m{i}"}}' for i in range(40))
    datasets = ", ".join(f'{{label = "d{i}", name = "sample"}}' for i in range(30))
    grid = _grid(tmp_path, f"models = [{models}]\ndatasets = [{datasets}]\n")
    db = str(tmp_path / "c.duckdb")
    open_store(db).close()
    assert main(["campaign", "status", str(grid), "--db", db]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1_203 and lines[-1].startswith("0/1200 cells finished")
    assert lines[2].split() == ["m0", "d0", "pending", "0/?", "?", "0", "0"]
    assert not any(c in "".join(lines) for c in "│┃━─")  # no table drawn


async def test_the_workbench_shows_markup_like_labels_as_text(tmp_path: Path) -> None:
    """The campaigns screen (``k``): the name and labels in its line, grid and cell line."""
    from haf_tui.store import RunRecord
    from haf_tui.store.campaigns import ClaimedCell, claim_cell, save_campaign
    from haf_tui.tui import create_app
    from tests.support import settle

    grid = load_grid(_grid(tmp_path, MARKUP_GRID))
    db = tmp_path / "c.duckdb"
    model, first = grid.models[0].label, grid.datasets[0].label
    with open_store(db) as store:
        save_campaign(store, grid.name, str(grid.path))
        claim_cell(store, grid.name, ClaimedCell(model, first, "run-a", "f", {}, 0))
        store.create_run(
            RunRecord(
                run_id="run-a", status="finished", dataset_id="builtin-sample", n_planned=2,
                config_json="{}", model_file="m.gguf", similarity_model="s",
                similarity_kind="bi-encoder",
            )
        )  # fmt: skip
    app = create_app(db)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await pilot.press("k")
        await settle(pilot)
        screen = app.screen
        line = str(screen.query_one("#campaign-line", Static).render())
        assert line.startswith("campaign [/]: 1/2 cells finished"), line
        table = screen.query_one("#campaign-grid", DataTable)
        labels = [str(c.label) for c in table.columns.values()]
        assert labels == ["model", "[/] d \\", "$\\alpha$ [x]"]
        assert str(table.get_row_at(0)[0]) == "[bold]m[/bold] [/]"
        cell = str(screen.query_one("#campaign-cell", Static).render())
        assert "[bold]m[/bold] [/] × [/] d \\" in cell
