"""The SQL console is a sandbox: every attempt to write a file or a database, attach, install
or load extensions, change settings or read another file is refused with one line, and every
file is unchanged (by checksum). ``haf query``, ``--snapshot``, ``--allow-read``, the query
library and the app's connection while it writes a run."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from haf_tui.cli import main
from haf_tui.store import StoreError, open_store
from haf_tui.tui.store_reader import StoreReader
from tests.support import one_line_error


def _haf_db(path: Path) -> Path:
    with open_store(path) as store:
        store.connection.execute(
            "INSERT INTO datasets (dataset_id, name, source, n_instances) VALUES ('d', 'd', 's', 0)"
        )
    return path


def _checksums(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.name.endswith(".holder.json")  # (a writer's note: who holds it)
    }


@pytest.fixture
def dbs(tmp_path: Path) -> tuple[Path, Path, Path]:
    """Database A (queried), database B (another one), and a folder of data files."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "x.csv").write_text("a,b\n1,2\n")
    return _haf_db(tmp_path / "a.duckdb"), _haf_db(tmp_path / "b.duckdb"), data


def attempts(a: Path, b: Path, data: Path) -> list[tuple[str, str]]:
    """(what is tried, SQL): each must be refused."""
    return [
        ("overwrite the database with COPY", f"COPY (SELECT 'x') TO '{a}' (FORMAT csv)"),
        ("write a file with COPY", f"COPY runs TO '{data}/out.csv'"),
        ("attach another database to write it", f"ATTACH '{b}' AS v (READ_WRITE)"),
        ("attach, then delete in it", f"ATTACH '{b}' AS v (READ_WRITE); DELETE FROM v.datasets"),
        ("attach read-only", f"ATTACH '{b}' AS v"),
        ("attach the same file", f"ATTACH '{a}' AS again"),
        ("install an extension (network)", "INSTALL httpfs"),
        ("load an extension", "LOAD httpfs"),
        ("read a system file", "SELECT * FROM read_csv('/etc/passwd')"),
        ("read a data file without --allow-read", f"SELECT * FROM read_csv('{data}/x.csv')"),
        ("list files", "SELECT * FROM glob('/etc/*')"),
        ("read a file as text", "SELECT * FROM read_text('/etc/hostname')"),
        ("turn external access back on", "SET enable_external_access = true"),
        ("change a setting", "SET threads = 1"),
        ("unlock the configuration", "RESET lock_configuration"),
        ("profile into a file", f"PRAGMA profiling_output = '{data}/p.txt'"),
        ("delete rows", "DELETE FROM datasets"),
        ("update rows", "UPDATE datasets SET name = 'x'"),
        (
            "insert rows",
            "INSERT INTO datasets (dataset_id, name, source, n_instances) "
            "VALUES ('e', 'e', 's', 0)",
        ),
        ("drop a table", "DROP TABLE runs"),
        ("create a table", "CREATE TABLE t AS SELECT 1"),
        ("create a temporary table", "CREATE TEMP TABLE t AS SELECT 1"),
        ("a write after a read", "SELECT 1; DELETE FROM datasets"),
        ("export the database", f"EXPORT DATABASE '{data}/exported'"),
        ("checkpoint", "CHECKPOINT"),
        ("call a function", "CALL checkpoint()"),
        ("a pragma", "PRAGMA force_checkpoint"),
        ("vacuum", "VACUUM"),
        ("store a secret", "CREATE SECRET (TYPE s3, KEY_ID 'k', SECRET 's')"),
        ("detach the database", "DETACH a"),
    ]


def _every_attempt_refused(
    haf: list[str], dbs: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """``haf [haf…] query SQL`` for every attempt: exit 2, one line, no file changed."""
    a, b, data = dbs
    before = _checksums(a.parent)
    for what, sql in attempts(a, b, data):
        assert main([*haf, "query", sql]) == 2, what
        one_line_error(capsys)
    assert _checksums(a.parent) == before


def test_haf_query_refuses_every_attempt_and_changes_no_file(
    dbs: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    a, _, _ = dbs
    _every_attempt_refused(["--db", str(a)], dbs, capsys)
    assert main(["--db", str(a), "query", "SELECT name FROM datasets", "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines() == ["name", "d"]
    for reading in ("DESCRIBE runs", "SHOW TABLES", "FROM pragma_table_info('runs')",
                    "EXPLAIN SELECT 1", "SUMMARIZE datasets", "SELECT 1; SELECT 2"):  # fmt: skip
        assert main(["--db", str(a), "query", reading, "--format", "json"]) == 0, reading
        capsys.readouterr()


def test_the_snapshot_cannot_reach_the_original(
    dbs: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    a, _, _ = dbs
    _every_attempt_refused(["--db", str(a), "--snapshot"], dbs, capsys)


def test_allow_read_opens_one_folder_for_reading_only(
    dbs: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    a, _, data = dbs
    allow = ["--allow-read", str(data)]
    sql = f"SELECT a + b AS s FROM read_csv('{data}/x.csv')"
    assert main(["--db", str(a), "query", sql, *allow, "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines() == ["s", "3"]
    before = _checksums(a.parent)
    assert main(["--db", str(a), "query", f"COPY runs TO '{data}/w.csv'", *allow]) == 2
    assert "COPY statements are not allowed" in one_line_error(capsys)
    assert main(["--db", str(a), "query", "SELECT * FROM read_csv('/etc/passwd')", *allow]) == 2
    one_line_error(capsys)
    assert _checksums(a.parent) == before


def test_timezone_values_print(
    dbs: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    a, _, _ = dbs
    assert main(["--db", str(a), "query", "SELECT now() AS t", "--format", "json"]) == 0
    assert '"t":' in capsys.readouterr().out


def test_the_apps_connection_refuses_writes_while_it_writes_a_run(
    dbs: tuple[Path, Path, Path],
) -> None:
    """The SQL screen's reads go through a cursor of the app's writer once it runs a run:
    statements are checked there too, and the connection is locked down all the same."""
    a, b, data = dbs
    reader = StoreReader(a)
    reader.writable()  # what starting a run in the app does
    before = _checksums(a.parent)
    try:
        for what, sql in attempts(a, b, data):
            with pytest.raises(StoreError):
                reader.query_user(sql)
                pytest.fail(what)
        assert reader.query_user("SELECT count(*) FROM datasets") == (["count_star()"], [(1,)])
    finally:
        reader.close()
    assert _checksums(a.parent) == before
