"""What the SQL screen's Pilot tests start from: a small synthetic store of their own (two runs
of four instances; the screen is opened on it by ``tests.test_tui_sql_workbench.open_sql``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.benchdata import build_bench_db


@pytest.fixture
def bench_db(tmp_path: Path) -> Path:
    """A store of its own for each test: two synthetic runs of four instances."""
    db = tmp_path / "haf.duckdb"
    build_bench_db(db, n_instances=4, n_runs=2, seed=3)
    return db
