"""Progress when ``haf run``'s and ``haf rescore``'s output is no terminal (issue 43 §3): a plain
line every N instances or every minute, whichever first, and the last state at the end. The
printer on a hand-held clock; ``haf run`` as its own process, its output a pipe, with the
scripted model (``tests/support/scripted_cli.py``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from haf_tui.cli.plain_progress import EVERY_INSTANCES, EVERY_SECONDS, PlainProgress, RunLines
from haf_tui.pipeline.events import ProgressEvent

ROOT = Path(__file__).resolve().parents[1]


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_line_every_n_instances_and_the_last_state_at_the_end() -> None:
    lines: list[str] = []
    clock = Clock()
    printer = PlainProgress(lines.append, every=3, seconds=60, clock=clock)
    for done in range(8):
        clock.now += 1
        printer.note(done, 8)
    assert [line.split(" · ")[0] for line in lines] == [
        "progress: 3/8 instances",
        "progress: 6/8 instances",
    ]
    printer.close()
    assert lines[-1] == "progress: 7/8 instances · elapsed 8 s"
    printer.close()  # (nothing new: no second copy)
    assert len(lines) == 3


def test_a_line_after_a_minute_without_n_instances() -> None:
    lines: list[str] = []
    clock = Clock()
    printer = PlainProgress(lines.append, every=10, seconds=60, clock=clock)
    printer.note(0, 40)
    clock.now += 59
    printer.note(1, 40)
    assert lines == []
    clock.now += 1  # a minute since the start
    printer.note(1, 40)
    assert len(lines) == 1 and lines[0].startswith("progress: 1/40 instances")
    clock.now += 30
    printer.note(2, 40)
    assert len(lines) == 1  # (half a minute since that line)


def test_the_documented_numbers_are_the_defaults() -> None:
    printer = PlainProgress(print)
    assert (printer.every, printer.seconds) == (EVERY_INSTANCES, EVERY_SECONDS)
    help_text = subprocess.run(
        [sys.executable, "-m", "haf_tui.cli", "run", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"},
        check=True,
    ).stdout
    assert f"every {EVERY_INSTANCES} instances or every {EVERY_SECONDS:.0f} s" in help_text


def test_a_run_s_line_has_its_stages_rates_and_a_counting_down_eta() -> None:
    lines: list[str] = []
    clock = Clock()
    printer = PlainProgress(lines.append, every=1, seconds=60, clock=clock)
    run_lines = RunLines(printer, {"justify": "JUSTIFY"}, ["justify"])
    base = dict(run_id="r", instances_total=10, generations_planned={"justify": 10})
    run_lines(ProgressEvent("run-started", **base))  # type: ignore[arg-type]
    clock.now += 30
    run_lines(
        ProgressEvent(
            "instance", instances_done=1, generations_done={"justify": 1},
            rates={"tokens": 12.5}, eta_seconds=270.0, **base,  # type: ignore[arg-type]
        )
    )  # fmt: skip
    clock.now += 150
    run_lines(
        ProgressEvent(
            "generation", instances_done=1, generations_done={"justify": 2},
            rates={"tokens": 12.0}, **base,  # type: ignore[arg-type]
        )
    )  # fmt: skip
    assert lines == [
        "progress: 1/10 instances · JUSTIFY 1/10 · 12.5 tok/s · ETA about 4 min · elapsed 30 s",
        "progress: 1/10 instances · JUSTIFY 2/10 · 12.0 tok/s · ETA about 2 min · "
        "elapsed 3 min 00 s",
    ]  # (the second: 270 s less the 150 s since)


def test_haf_run_into_a_pipe_prints_progress_lines_as_it_goes(tmp_path: Path) -> None:
    db = tmp_path / "haf.duckdb"
    done = subprocess.run(
        [sys.executable, "-m", "tests.support.scripted_cli", "--db", str(db), "run",
         "--dataset", "sample", "--suites", "classify", "--limit", "9"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "HAF_TEST_PROGRESS_EVERY": "4",
             "HAF_HOME": str(tmp_path / "home")},
        timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    progress = [line for line in done.stdout.splitlines() if line.startswith("progress: ")]
    heads = [line.split(" · ")[0] for line in progress]
    assert heads == [
        "progress: 4/9 instances",
        "progress: 8/9 instances",
        "progress: 9/9 instances",
    ], done.stdout
    assert all("classify" in line and "elapsed" in line for line in progress)
    assert "finished: 9/9 instances" in done.stdout


def test_campaign_run_into_a_pipe_prints_each_cells_progress_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``haf campaign run`` with its output no terminal (captured here): each cell's plain
    lines, started with the cell's label, as ``haf run``'s are (its bars drew nothing)."""
    from haf_tui.cli import main
    from tests.test_campaign_hostile import _scripted_models

    monkeypatch.setattr("haf_tui.campaign.runner.load_models", _scripted_models)
    monkeypatch.setattr("haf_tui.cli.plain_progress.EVERY_INSTANCES", 2)
    grid = tmp_path / "grid.toml"
    grid.write_text(
        'name = "g"\nmodels = [{path = "embedded", label = "m"}]\n'
        'datasets = [{label = "one", name = "sample"}, {label = "two", name = "sample"}]\n'
        'suites = ["classify"]\nlimit = 5\n',
        encoding="utf-8",
    )
    assert main(["campaign", "run", str(grid), "--db", str(tmp_path / "c.duckdb")]) == 0
    out = capsys.readouterr().out
    heads = [line.split(" · ")[0] for line in out.splitlines() if "progress: " in line]
    for cell in ("m × one", "m × two"):
        assert [h for h in heads if h.startswith(cell)] == [
            f"{cell}: progress: 2/5 instances",
            f"{cell}: progress: 4/5 instances",
            f"{cell}: progress: 5/5 instances",
        ], out
