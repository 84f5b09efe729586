"""``haf campaign`` through the real path: a 1 × 2 grid of the embedded model, run by the
command line in a subprocess, killed (SIGKILL) once its first generations are stored, run
again: exactly one run per cell, all finished, every generation stored before the kill kept
as it was and none stored twice; then status, a refused change of settings, a skip."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from haf_tui.store import open_snapshot, open_store

pytestmark = [pytest.mark.real_model, pytest.mark.real_similarity]

REPO = Path(__file__).resolve().parents[1]
GRID = """
models = ["embedded"]
datasets = ["sample", {label = "again", name = "sample"}]
suites = ["haf"]
limit = 3
seed = 5
[settings]
max-new-tokens = 24
parallel = 2
n-ctx = 1024
n-gpu-layers = 0
"""


def _haf(*args: str, home: Path) -> list[str]:
    return [sys.executable, "-m", "haf_tui.cli", *args]


def _env(home: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "HAF_HOME": str(home),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
    }


def _stored(db: Path) -> dict[tuple[str, str, str, int], tuple[str, object]]:
    """Every generation committed so far (read from a snapshot copy, beside the writer)."""
    with open_snapshot(db) as store:
        _, rows = store.query(
            "SELECT run_id, instance_id, stage, sub_index, output_text, created_at FROM generations"
        )
    return {(r, i, s, int(k)): (text, at) for r, i, s, k, text, at in rows}


def test_a_killed_campaign_ends_with_one_run_per_cell_and_nothing_twice(tmp_path: Path) -> None:
    grid = tmp_path / "grid.toml"
    grid.write_text(GRID, encoding="utf-8")
    db = tmp_path / "c.duckdb"
    command = _haf("campaign", "run", str(grid), "--db", str(db), home=tmp_path)
    process = subprocess.Popen(
        command, env=_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    before: dict[tuple[str, str, str, int], tuple[str, object]] = {}
    try:
        deadline = time.monotonic() + 600  # (the models load first: generous on a loaded machine)
        while time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.3)
            if db.is_file():
                try:
                    before = _stored(db)
                except Exception:  # (caught mid-write: the next poll reads it)
                    continue
                if before:
                    break
        assert process.poll() is None, "the campaign ended before a generation was stored"
        process.send_signal(signal.SIGKILL)
    finally:
        process.kill()
        process.wait()
    assert before

    again = subprocess.run(command, env=_env(tmp_path), capture_output=True, text=True)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "resuming" in again.stdout

    with open_store(db, read_only=True) as store:
        _, runs = store.query("SELECT run_id, status, n_planned FROM runs ORDER BY run_id")
        _, cells = store.query(
            "SELECT model_label, dataset_label, claimed_run_id FROM campaign_cells "
            "ORDER BY position"
        )
        # (a key twice cannot be stored: the generations' primary key. What guards against
        # a generation made again is below: those stored before the kill are kept as they were)
        _, done = store.query("SELECT run_id, count(*) FROM instance_results GROUP BY run_id")
    assert [(m, d) for m, d, _ in cells] == [("embedded", "sample"), ("embedded", "again")]
    assert sorted(r for _, _, r in cells) == [r for r, _, _ in runs]  # one run per cell
    assert all(status == "finished" and planned == 3 for _, status, planned in runs)
    assert dict(done) == {r: 3 for r, _, _ in runs}
    after = _stored(db)
    assert {key: after[key] for key in before} == before  # kept as they were, not redone

    status = subprocess.run(
        _haf("campaign", "status", str(grid), "--db", str(db), home=tmp_path),
        env=_env(tmp_path),
        capture_output=True,
        text=True,
    )
    assert status.returncode == 0 and "2/2 cells finished; nothing left" in status.stdout

    skipped = subprocess.run(command, env=_env(tmp_path), capture_output=True, text=True)
    assert skipped.returncode == 0 and skipped.stdout.count("finished before, skipped") == 2
    assert "loading" not in skipped.stdout  # (no model loaded for finished cells)

    grid.write_text(GRID.replace("max-new-tokens = 24", "max-new-tokens = 25"), encoding="utf-8")
    refused = subprocess.run(command, env=_env(tmp_path), capture_output=True, text=True)
    assert refused.returncode == 2
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 2 and all("decoding.max_new_tokens 24 → 25" in line for line in lines)
    with open_store(db, read_only=True) as store:
        assert len(store.list_runs()) == 2
