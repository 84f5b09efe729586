"""Two cells side by side through the real path (issue 37 §2): a grid of two models, each
served by a stand-in OpenAI-compatible server of its own (real HTTP server processes on
127.0.0.1 that take a moment over each request and note when it came and went), run by
``haf campaign run`` in a subprocess. Both servers serve at the same moment; while both
cells run, ``campaign status`` and the workbench's grid show both running; the campaign
killed (SIGKILL) then, and run again: one run per cell, every cell finished, each instance
once, nothing stored twice, what was stored before the kill kept as it was."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from haf_tui.cli import main
from haf_tui.store import open_snapshot, open_store
from haf_tui.tui.campaign_data import campaign_line, read_campaigns
from tests.support.timed_stand_in import request_times, timed_stand_in

pytestmark = [pytest.mark.real_similarity]

REPO = Path(__file__).resolve().parents[1]


def _grid(path: Path, first: str, second: str, limit: int) -> Path:
    path.write_text(
        f"""
name = "side"
models = [
  {{ label = "a", path = "embedded", servers = ["{first}#2"] }},
  {{ label = "b", path = "embedded", servers = ["{second}#2"] }},
]
datasets = ["sample"]
suites = ["haf"]
limit = {limit}
seed = 5
[settings]
max-new-tokens = 16
stages = ["justify"]
""",
        encoding="utf-8",
    )
    return path


def _haf(*args: str) -> list[str]:
    return [sys.executable, "-m", "haf_tui.cli", *args]


def _env(home: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "HAF_HOME": str(home),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "COLUMNS": "200",
    }


def _overlap(first: list[tuple[float, float]], second: list[tuple[float, float]]) -> bool:
    return any(a < d and c < b for a, b in first for c, d in second)


def test_two_cells_run_at_once_each_on_its_own_server(tmp_path: Path) -> None:
    # each server's first request waits for the other's first (``meet``): they overlap when
    # both cells run at once, however late the second lane starts on a loaded machine
    meet = tmp_path / "meet"
    meet.mkdir()
    with timed_stand_in(0.5, meet) as first, timed_stand_in(0.5, meet) as second:
        grid = _grid(tmp_path / "grid.toml", first, second, limit=6)
        db = tmp_path / "c.duckdb"
        done = subprocess.run(
            _haf("campaign", "run", str(grid), "--db", str(db)),
            env=_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert "2 cells, up to 2 at once" in done.stdout
        times = request_times(first), request_times(second)
    assert len(times[0]) == 6 and len(times[1]) == 6
    assert _overlap(*times)  # (both servers serving at the same moment)
    assert done.stdout.count("finished: 6/6 instances") == 2
    with open_store(db, read_only=True) as store:
        _, runs = store.query("SELECT status FROM runs")
    assert sorted(status for (status,) in runs) == ["finished", "finished"]


def _stored(db: Path) -> dict[tuple[str, str, str, int], tuple[str, object]]:
    with open_snapshot(db) as store:
        _, rows = store.query(
            "SELECT run_id, instance_id, stage, sub_index, output_text, created_at FROM generations"
        )
    return {(r, i, s, int(k)): (text, at) for r, i, s, k, text, at in rows}


def test_a_campaign_killed_while_two_cells_run_resumes_to_one_run_per_cell(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    # each server answers two requests, then holds the others while the gate file exists:
    # both cells store some and neither can finish before the kill, whatever the machine
    gate = tmp_path / "gate"
    gate.touch()
    first_held = timed_stand_in(0.4, gate=gate, hold_after=2)
    with first_held as first, timed_stand_in(0.4, gate=gate, hold_after=2) as second:
        grid = _grid(tmp_path / "grid.toml", first, second, limit=16)
        db = tmp_path / "c.duckdb"
        command = _haf("campaign", "run", str(grid), "--db", str(db))
        process = subprocess.Popen(
            command, env=_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        before: dict[tuple[str, str, str, int], tuple[str, object]] = {}
        try:
            deadline = time.monotonic() + 600  # (the models load first: generous)
            while time.monotonic() < deadline and process.poll() is None:
                time.sleep(0.3)
                if not db.is_file():
                    continue
                try:
                    before = _stored(db)
                except Exception:  # (caught mid-write: the next poll reads it)
                    continue
                if len({key[0] for key in before}) == 2:  # (both cells have stored some)
                    break
            assert process.poll() is None, "the campaign ended before both cells stored"
            capsys.readouterr()
            listed = main(["campaign", "status", str(grid), "--db", str(db), "--snapshot"])
            status = capsys.readouterr().out
            with open_snapshot(db) as store:
                grids = read_campaigns(store)
            process.send_signal(signal.SIGKILL)
        finally:
            process.kill()
            process.wait()
        assert len({key[0] for key in before}) == 2
        # while both ran: the status and the workbench's grid showed both running
        assert listed == 0
        rows = [line for line in status.splitlines() if "│ sample" in line]
        assert len(rows) == 2 and all("running" in row for row in rows), status
        assert "0/2 cells finished, 2 running" in status
        (shown,) = grids
        assert [cell.status for cell in shown.status.cells] == ["running", "running"]
        assert "0/2 cells finished · 2 running" in campaign_line(shown)

        gate.unlink()  # (the servers answer again)
        again = subprocess.run(
            command, env=_env(tmp_path), capture_output=True, text=True, timeout=300
        )
        assert again.returncode == 0, again.stdout + again.stderr
        assert again.stdout.count("(resuming)") == 2

    with open_store(db, read_only=True) as store:
        _, runs = store.query("SELECT run_id, status, n_planned FROM runs ORDER BY run_id")
        _, cells = store.query("SELECT claimed_run_id FROM campaign_cells ORDER BY position")
        _, results = store.query(
            "SELECT run_id, count(*), count(DISTINCT instance_id) FROM instance_results "
            "GROUP BY run_id"
        )
        _, generations = store.query(
            "SELECT run_id, count(*), count(DISTINCT (instance_id, stage, sub_index)) "
            "FROM generations GROUP BY run_id"
        )
    assert sorted(r for (r,) in cells) == [r for r, _, _ in runs]  # one run per cell
    assert all(status == "finished" and planned == 16 for _, status, planned in runs)
    assert sorted(results) == [(r, 16, 16) for r, _, _ in runs]  # each instance once
    assert sorted(generations) == [(r, 16, 16) for r, _, _ in runs]  # (justify: one each)
    after = _stored(db)
    assert {key: after[key] for key in before} == before  # kept as they were, not redone
