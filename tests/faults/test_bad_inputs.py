"""Bad files and databases end in one clear line and change nothing: a truncated GGUF in the
model folders, a foreign DuckDB file, a read command on an older or empty file (never
written), a future schema, snapshots that leave nothing behind, a dead writer's run."""

from __future__ import annotations

import hashlib
import os
import socket
import tempfile
from pathlib import Path

import duckdb
import pytest

from haf_tui.cli import main
from haf_tui.defaults import embedded_model_path
from haf_tui.store import open_snapshot, open_store
from haf_tui.store.migrations import LATEST_VERSION
from haf_tui.store.snapshots import SNAPSHOT_PREFIX, remove_stale_snapshots
from tests.support import one_line_error as _error


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_haf_models_flags_a_truncated_gguf(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "models"
    folder.mkdir()
    with embedded_model_path().open("rb") as source:
        (folder / "cut.gguf").write_bytes(source.read(50 * 2**20))
    monkeypatch.setenv("HAF_MODELS_PATH", str(folder))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "250")
    assert main(["models"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "cut.gguf" in out and "truncated GGUF file" in out


def test_a_foreign_duckdb_file_is_refused_and_left_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "other.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE runs (id INTEGER); CREATE TABLE people (name VARCHAR)")
    before = _sha(db)
    for command in (["runs"], ["query", "SELECT 1"], ["report"], ["datasets", "list"]):
        assert main(["--db", str(db), *command]) == 2, command
        assert "is not a haf-tui database (it holds people, runs)" in _error(capsys)
    assert main(["--db", str(db), "run", "--demo", "--stages", "justify"]) == 2
    assert "not a haf-tui database" in _error(capsys)
    assert _sha(db) == before


def test_read_commands_never_write(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An empty DuckDB file and an older haf-tui file are read through an upgraded copy."""
    empty = tmp_path / "empty.duckdb"
    duckdb.connect(str(empty)).close()
    older = tmp_path / "older.duckdb"
    with open_store(older) as store:  # an older schema: migrations 7 to 11 undone
        store.connection.execute("ALTER TABLE runs DROP COLUMN parent_run_id")
        store.connection.execute("DROP TABLE rationales_gradient")  # (a method table, as above)
        store.connection.execute("DROP TABLE campaign_cells")
        store.connection.execute("DROP TABLE campaigns")
        store.connection.execute("DROP TABLE method_migrations")
        store.connection.execute("DROP TABLE instance_notes")
        store.connection.execute("ALTER TABLE runs DROP COLUMN tags")
        store.connection.execute("ALTER TABLE runs DROP COLUMN label")
        store.connection.execute("DELETE FROM schema_migrations WHERE version >= 7")
    for db in (empty, older):
        before = _sha(db)
        assert main(["--db", str(db), "runs"]) == 0
        assert main(["--db", str(db), "query", "SELECT count(*) FROM runs"]) == 0
        capsys.readouterr()
        assert _sha(db) == before, db
    with duckdb.connect(str(empty), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM information_schema.tables").fetchall() == [(0,)]
    with duckdb.connect(str(older), read_only=True) as con:
        versions = con.execute("SELECT max(version) FROM schema_migrations").fetchall()
    assert versions == [(6,)]


def test_a_future_schema_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "future.duckdb"
    with open_store(db) as store:
        store.connection.execute(
            "INSERT INTO schema_migrations (version, description) VALUES (?, 'future')",
            [LATEST_VERSION + 1],
        )
    assert main(["--db", str(db), "runs"]) == 2
    assert "newer than this haf-tui" in _error(capsys)


def test_snapshots_leave_nothing_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    tempfile.tempdir = None  # (re-read TMPDIR)
    try:
        db = tmp_path / "haf.duckdb"
        open_store(db).close()
        for _ in range(5):
            with open_snapshot(db) as store:
                assert store.list_runs() == []
        assert main(["--db", str(db), "--snapshot", "runs"]) == 0
        assert list((tmp_path / "tmp").iterdir()) == []
        # a snapshot folder of a process that died is removed by the next snapshot
        dead = tmp_path / "tmp" / f"{SNAPSHOT_PREFIX}999999999-x"
        dead.mkdir()
        (dead / "haf.duckdb").write_bytes(b"copy")
        mine = tmp_path / "tmp" / f"{SNAPSHOT_PREFIX}{os.getpid()}-y"
        mine.mkdir()
        assert remove_stale_snapshots() == 1
        assert not dead.exists() and mine.exists()
    finally:
        tempfile.tempdir = None


def test_a_dead_writers_run_shows_interrupted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "haf.duckdb"
    with open_store(db) as store:
        store.connection.execute(
            "INSERT INTO runs (run_id, status, dataset_id, n_planned, config, model_file, "
            "similarity_model, similarity_kind, writer_pid, writer_host) VALUES "
            "('r-dead', 'running', 'd', 1, '{}', 'm.gguf', 'g', 'bi-encoder', 999999999, ?)",
            [socket.gethostname()],
        )
    with open_store(db, read_only=True) as store:
        assert [r["status"] for r in store.list_runs()] == ["interrupted"]
    with open_snapshot(db) as store:  # another process may write: the PID decides
        assert store.orphaned_runs() == {"r-dead"}
    assert main(["--db", str(db), "runs"]) == 0
    assert "interrupted" in capsys.readouterr().out


def test_a_truncated_database_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "haf.duckdb"
    open_store(db).close()
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 3])
    for command in (["runs"], ["query", "SELECT 1"], ["run", "--demo"]):
        assert main(["--db", str(db), *command]) == 2, command
        said = _error(capsys)  # (where the cut falls decides which of DuckDB's errors comes)
        assert "cannot open database" in said or "is damaged (truncated or corrupt)" in said


def test_a_read_only_database_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An immutable file (chattr +i: even root cannot write it) is read, and a run is refused
    with one line."""
    import shutil
    import subprocess

    db = tmp_path / "haf.duckdb"
    open_store(db).close()
    chattr = shutil.which("chattr")
    if chattr is None or subprocess.run([chattr, "+i", str(db)], capture_output=True).returncode:
        pytest.skip("chattr +i is not available on this filesystem")
    try:
        assert main(["--db", str(db), "runs"]) == 0
        capsys.readouterr()
        assert main(["--db", str(db), "run", "--demo", "--stages", "justify"]) == 2
        assert "cannot open database" in _error(capsys)
    finally:
        subprocess.run([chattr, "-i", str(db)], check=True)
