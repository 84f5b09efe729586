"""The named query ``rationale_attribution`` (the report ``rationale-attribution``) on the
scripted rationales run of :mod:`tests.support.rationale_runs`, its numbers recomputed from
the stored rows: the skewness is a mean over instances, RANDOM counts only the seeds every
instance has, and the rows come by dataset, model file, run, then the rationales' order."""

from __future__ import annotations

import shutil
import statistics
from pathlib import Path
from typing import Any

import duckdb
import pytest

from haf_tui import reports
from haf_tui.store import open_store
from tests.support.rationale_runs import RUN_ID, rationale_db

ORDER = ["prompted", "occlusion", "human", "random", "everything"]
"""The rationales a run without the gradient stage (conftest.py skips it) shows, in order."""


@pytest.fixture(scope="module")
def template_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("rationale-attribution") / "template.duckdb"
    assert rationale_db(path) == RUN_ID
    return path


@pytest.fixture
def db(tmp_path: Path, template_db: Path) -> Path:
    path = tmp_path / "haf.duckdb"
    shutil.copyfile(template_db, path)
    return path


def table(db: Path) -> list[dict[str, Any]]:
    with open_store(db) as store:
        columns, rows = reports.run_named(store, "rationale_attribution", {"run_ids": []})
    return [dict(zip(columns, row, strict=True)) for row in rows]


def test_skewness_is_the_mean_over_instances(db: Path) -> None:
    with duckdb.connect(str(db)) as con:
        values = [
            v
            for (v,) in con.execute(
                "SELECT value FROM instance_metrics WHERE metric = 'rationale_skew_occlusion'"
            ).fetchall()
        ]
    assert len(values) >= 2 and len(set(values)) > 1  # (a max or a sum would differ)
    (occlusion,) = [row for row in table(db) if row["rationale"] == "occlusion"]
    assert occlusion["skewness"] == pytest.approx(statistics.mean(values), abs=1e-12)
    assert occlusion["skewness_sd"] == pytest.approx(statistics.stdev(values), abs=1e-12)
    assert occlusion["skewness_n"] == len(values)


def test_random_counts_only_the_seeds_every_instance_has(db: Path) -> None:
    with duckdb.connect(str(db)) as con:  # one instance stopped after 2 of its 4 seeds
        (first,) = con.execute(
            "SELECT min(instance_id) FROM rationales WHERE source = 'random' AND gold_size > 0"
        ).fetchone() or (None,)
        con.execute(
            "DELETE FROM rationales WHERE source = 'random' AND instance_id = ? AND seed >= 2",
            [first],
        )
        per_seed = con.execute(
            "SELECT seed, 100 * avg(token_f1) FROM rationales WHERE source = 'random' "
            "AND gold_size > 0 AND token_f1 IS NOT NULL AND seed < 2 GROUP BY seed ORDER BY seed"
        ).fetchall()
    (random,) = [row for row in table(db) if row["rationale"] == "random"]
    assert random["n_seeds"] == 2
    f1 = [value for _, value in per_seed]
    assert random["alignment_f1_x100"] == pytest.approx(statistics.mean(f1), abs=1e-9)
    assert random["alignment_f1_x100_sd"] == pytest.approx(statistics.stdev(f1), abs=1e-9)


def test_rows_come_by_model_file_then_the_rationales_order(db: Path) -> None:
    with duckdb.connect(str(db)) as con:  # a copy of the run, made later, on a file sorted first
        con.execute(
            "INSERT INTO runs SELECT * REPLACE ('copy' AS run_id, 'a-first.gguf' AS model_file) "
            "FROM runs WHERE run_id = ?",
            [RUN_ID],
        )
        for name in ("rationales", "instance_metrics"):
            con.execute(
                f"INSERT INTO {name} SELECT * REPLACE ('copy' AS run_id) FROM {name} "
                "WHERE run_id = ?",
                [RUN_ID],
            )
    rows = [(row["run_id"], row["rationale"]) for row in table(db)]
    assert rows == [("copy", name) for name in ORDER] + [(RUN_ID, name) for name in ORDER]


def test_random_names_its_seeds_on_a_dataset_without_gold_rationales(db: Path) -> None:
    with duckdb.connect(str(db)) as con:  # (no instance has a gold: no alignment row at all)
        con.execute("UPDATE rationales SET gold_size = 0")
        seeds = con.execute(
            "SELECT count(DISTINCT seed) FROM rationales WHERE source = 'random'"
        ).fetchone()
    (random,) = [row for row in table(db) if row["rationale"] == "random"]
    assert random["alignment_f1_x100"] is None and random["flip_rate"] is not None
    assert seeds is not None and random["n_seeds"] == seeds[0] == 4
