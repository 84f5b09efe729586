"""Run ids whole at 80×24 and 200×50 (issue 43 §7: "20261…-dca7"): the runs list shows the
ids ``haf run`` makes whole, the dataset and start giving way first. Pilot; read from the
screen as drawn."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from haf_tui.tui import create_app
from tests.support import settle
from tests.support.snapshot_store import snapshot_store
from tests.test_tui_whole_80x24 import SIZE_IDS, SIZES
from tests.test_tui_width import screen_text

REAL_IDS = ("20261129-092618-dca7", "20261129-101502-3f0b")
"""Run ids as ``haf run`` makes them (date, time, 4 random hex digits)."""


@pytest.fixture(scope="module")
def real_ids(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The snapshot store with its runs' ids as haf run makes them."""
    path = tmp_path_factory.mktemp("real-ids") / "template.duckdb"
    old = snapshot_store(path)
    with duckdb.connect(str(path)) as con:
        tables = con.execute(
            "SELECT DISTINCT table_name FROM information_schema.columns "
            "WHERE column_name = 'run_id'"
        ).fetchall()
        for (table,) in tables:
            for before, after in zip(old, REAL_IDS, strict=True):
                con.execute(f"UPDATE {table} SET run_id = ? WHERE run_id = ?", [after, before])
    return path


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
async def test_the_runs_list_shows_run_ids_whole(
    real_ids: Path, tmp_path: Path, size: tuple[int, int]
) -> None:
    """Run ids were cut to "20261…-dca7" at 80 columns: whole, the dataset giving way first
    (``+`` shows it), SoS and RS kept."""
    db = tmp_path / "haf.duckdb"
    shutil.copyfile(real_ids, db)
    async with create_app(db).run_test(size=size) as pilot:
        await settle(pilot)
        lines = screen_text(pilot.app)
        for run_id in REAL_IDS:
            row = next(line for line in lines if run_id[-4:] in line)
            assert f" {run_id} " in row, row
        header = next(line for line in lines if line.lstrip().startswith("run ")).split()
        assert {"run", "status", "model", "done", "SoS", "RS"} <= set(header), header
        if size[0] >= 120:
            assert "dataset" in header
