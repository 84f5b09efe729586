"""The DuckDB store: migrations, refusal of newer schemas and locked files, snapshots."""

from __future__ import annotations

import math
import subprocess
import sys
import time
from pathlib import Path

import pytest

from haf_tui.inference.base import GeneratedToken
from haf_tui.store import (
    GenerationRecord,
    InstanceRecord,
    InstanceResult,
    ReasonRecord,
    RunRecord,
    StoreError,
    open_snapshot,
    open_store,
)
from haf_tui.store.migrations import LATEST_VERSION


def _run(run_id: str = "r1") -> RunRecord:
    return RunRecord(
        run_id=run_id,
        status="created",
        dataset_id="d",
        n_planned=1,
        config_json="{}",
        model_file="m.gguf",
        similarity_model="g",
        similarity_kind="bi-encoder",
    )


def _generation(run_id: str = "r1", stage: str = "justify", sub: int = -1) -> GenerationRecord:
    tokens = [
        GeneratedToken(5, b"Toxic", "Toxic", 0, 0, -0.5, (5, 6), (-0.5, -1.5)),
        GeneratedToken(7, b".\xe2", ".", 5, 5, -0.1, (), ()),
    ]
    reasons = [ReasonRecord(0, "Toxic.", 0, 6, 0, 2, (0.5, 0.1), (0.3, 0.7), math.nan)]
    return GenerationRecord(
        run_id=run_id,
        instance_id="i1",
        stage=stage,
        sub_index=sub,
        test=None,
        seed=1,
        prompt_text="p",
        prompt_tokens=3,
        output_text="Toxic.",
        finish_reason="stop",
        decision="toxic",
        decision_source=None,
        decision_sentence="Toxic.",
        decision_start=0,
        decision_end=6,
        decision_confidence=math.nan,
        seconds=0.1,
        tokens=tokens,
        reasons=reasons,
        diagnostics=[("truncated", "x")],
    )


def test_migrations_create_the_schema_once(tmp_path: Path) -> None:
    path = tmp_path / "h.duckdb"
    with open_store(path) as store:
        assert store.schema_version() == LATEST_VERSION
    with open_store(path) as store:  # a second open applies nothing new
        count = store.query("SELECT count(*) FROM schema_migrations")[1][0][0]
        assert count == LATEST_VERSION


def test_generation_round_trip_keeps_bytes_and_stores_nan_as_null(tmp_path: Path) -> None:
    with open_store(tmp_path / "h.duckdb") as store:
        store.save_dataset(
            "d", "d", "test", [InstanceRecord(instance_id="i1", position=0, text="t")]
        )
        store.create_run(_run())
        store.save_generation(_generation())
        _, rows = store.query("SELECT piece, text, top_ids FROM tokens ORDER BY position")
        assert rows == [(b"Toxic", "Toxic", [5, 6]), (b".\xe2", ".", [])]
        _, rows = store.query("SELECT decision_confidence FROM generations")
        assert rows == [(None,)]
        _, rows = store.query("SELECT confidence, nll FROM reasons")
        assert rows == [(None, [0.5, 0.1])]
        assert store.generation_keys("r1") == {("i1", "justify", -1)}
        assert store.instance_generations("r1", "i1")[0]["reason_texts"] == ["Toxic."]
        store.save_instance_result(
            InstanceResult(
                "r1",
                "i1",
                "toxic",
                1,
                None,
                [("justify", -1, 0, "sos", math.nan)],
                [("sos", 0.5, 1)],
            )
        )
        assert store.finished_instances("r1") == {"i1"}
        assert store.list_runs()[0]["n_done"] == 1


def test_a_failed_generation_write_leaves_nothing(tmp_path: Path) -> None:
    with open_store(tmp_path / "h.duckdb") as store:
        store.create_run(_run())
        store.save_generation(_generation())
        with pytest.raises(Exception, match=r"(?i)constraint|duplicate"):
            store.save_generation(_generation())  # same key: the whole transaction rolls back
        assert store.query("SELECT count(*) FROM tokens")[1][0][0] == 2


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "h.duckdb"
    with open_store(path) as store:
        store.connection.execute("INSERT INTO schema_migrations (version) VALUES (999)")
    with pytest.raises(StoreError, match=r"schema v999, newer than this haf-tui"):
        open_store(path)


def test_read_only_open_of_a_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no database at"):
        open_store(tmp_path / "absent.duckdb", read_only=True)


def test_locked_database_is_one_line_and_a_snapshot_still_reads(tmp_path: Path) -> None:
    path = tmp_path / "h.duckdb"
    with open_store(path) as store:
        store.create_run(_run())
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); "
            "c.execute(\"UPDATE runs SET status = 'running'\"); print('ready', flush=True); "
            "sys.stdin.readline()",  # (holds until let go, however slow the test)
            str(path),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        with pytest.raises(StoreError, match=f"is locked by PID {holder.pid} "):
            open_store(path, wait_seconds=0.2)
        with open_snapshot(path) as snapshot:
            assert snapshot.query("SELECT run_id, status FROM runs")[1] == [("r1", "running")]
    finally:
        holder.kill()
        holder.wait()
    time.sleep(0.1)
    with open_store(path) as store:
        assert store.get_run("r1").status == "running"


def test_an_older_file_is_migrated_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from haf_tui.store import db as store_db
    from haf_tui.store.migrations import MIGRATIONS

    path = tmp_path / "old.duckdb"
    monkeypatch.setattr(store_db, "MIGRATIONS", MIGRATIONS[:1])
    monkeypatch.setattr(store_db, "LATEST_VERSION", 1)
    with open_store(path) as store:
        store.connection.execute(
            "INSERT INTO tokens VALUES ('r', 'i', 'justify', -1, 0, 5, 'x'::BLOB, 'x', 0, 0, "
            "-0.5, [5], [-0.5])"
        )
    monkeypatch.undo()
    with open_store(path) as store:
        assert store.schema_version() == LATEST_VERSION >= 2
        assert store.query("SELECT text, top_texts FROM tokens")[1] == [("x", None)]


def test_a_read_only_open_upgrades_an_older_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from haf_tui.store import db as store_db
    from haf_tui.store.migrations import MIGRATIONS

    path = tmp_path / "old.duckdb"
    monkeypatch.setattr(store_db, "MIGRATIONS", MIGRATIONS[:1])
    monkeypatch.setattr(store_db, "LATEST_VERSION", 1)
    open_store(path).close()
    monkeypatch.undo()
    with open_store(path, read_only=True) as store:
        assert store.read_only and store.schema_version() == LATEST_VERSION
        assert store.query("SELECT count(*) FROM tokens WHERE top_texts IS NULL")[1] == [(0,)]
