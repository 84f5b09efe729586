"""The seeded synthetic store the snapshot tests draw (benchmarks.benchdata): 12 instances ×
2 runs, seed 7, with a fixed start date so the runs list shows no clock."""

from __future__ import annotations

from pathlib import Path

from benchmarks.benchdata import build_bench_db
from haf_tui.store import open_store


def snapshot_store(path: Path) -> list[str]:
    """Build the store at ``path``; returns its run ids."""
    run_ids = build_bench_db(path, n_instances=12, n_runs=2, seed=7)
    with open_store(path) as store:  # (the runs list shows when a run started)
        store.connection.execute("UPDATE runs SET created_at = TIMESTAMP '2026-01-02 03:04:05'")
    return run_ids
