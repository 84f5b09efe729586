"""Runs that can be told apart (issue 34 §4): every listing of runs names each run's suites,
so a HAF run, a HAF+classify run and a judge run of one model are not the same line; ``c`` on
the runs list starts with the runs that share a suite with the one under the cursor."""

from __future__ import annotations

from pathlib import Path

import pytest

from haf_tui.config import RunConfig
from haf_tui.store import open_store
from haf_tui.store.annotations import set_run_label
from haf_tui.store.readers import run_overviews
from haf_tui.store.records import RunRecord
from tests.test_cli_listings import LONG_MODEL, RUN_IDS, _haf

SUITES = (("haf",), ("haf", "classify"), ("judge",))
"""The suites of the runs ``RUN_IDS`` (the same model and dataset)."""


@pytest.fixture
def suites_db(tmp_path: Path) -> Path:
    db = tmp_path / "haf.duckdb"
    with open_store(db) as store:
        for run_id, suites in zip(RUN_IDS, SUITES, strict=True):
            store.create_run(
                RunRecord(
                    run_id=run_id,
                    status="finished",
                    dataset_id="civil_comments-0123456789abcdef",
                    n_planned=8,
                    config_json=RunConfig(suites=list(suites)).model_dump_json(),
                    model_file=f"/models/{LONG_MODEL}",
                    similarity_model="sentence-transformers/all-MiniLM-L6-v2",
                    similarity_kind="bi-encoder",
                )
            )
        store.connection.execute(
            "UPDATE runs SET config = json_object() WHERE run_id = $r", {"r": RUN_IDS[0]}
        )  # (stored before suites: HAF's)
        set_run_label(store, RUN_IDS[1], "with labels")
    return db


def test_the_runs_reader_names_each_runs_suites(suites_db: Path) -> None:
    with open_store(suites_db, read_only=True) as store:
        found = {run.run_id: run.suites for run in run_overviews(store)}
    assert found == dict(zip(RUN_IDS, SUITES, strict=True))


@pytest.mark.parametrize("columns", ["80", "200"])
def test_haf_runs_shows_each_runs_suites(suites_db: Path, tmp_path: Path, columns: str) -> None:
    out = _haf(["--db", str(suites_db), "runs"], tmp_path, COLUMNS=columns)
    lines = out.splitlines()
    assert all(len(line) <= int(columns) for line in lines)
    assert any("┃ suites" in line for line in lines)
    for run_id, suites in zip(RUN_IDS, SUITES, strict=True):
        (line,) = [line for line in lines if run_id in line]
        cells = [cell.strip() for cell in line.split("│")]
        assert "+".join(suites) in cells, line
        assert "8/8" not in line and "0/8" in line  # the dataset's size beside what is done
