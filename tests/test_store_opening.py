"""Opening the store reads how far its schema is once (issue 44 §2: each reopening of the
workbench's short-lived connection ran ten statements of checks, 33 ms of a key's time at
paper scale; now one for a file this haf-tui wrote), and the older and foreign files it
refuses or upgrades are told apart as before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest

from haf_tui.methods.loader import ensure_methods
from haf_tui.store import StoreError, open_store
from haf_tui.store import db as store_db
from haf_tui.store.method_tables import registered_method_migrations
from haf_tui.store.migrations import LATEST_VERSION, MIGRATIONS


class _Counted:
    """A connection that counts the statements run on it (after it was locked down)."""

    def __init__(self, connection: duckdb.DuckDBPyConnection, counts: list[str]) -> None:
        self._connection = connection
        self._counts = counts

    def execute(self, sql: str, *args: Any) -> Any:
        self._counts.append(sql)
        return self._connection.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._connection, name)


@pytest.fixture
def statements(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The statements each store opened from now on runs itself."""
    ran: list[str] = []
    connect = store_db.connect
    monkeypatch.setattr(store_db, "connect", lambda *a, **k: _Counted(connect(*a, **k), ran))
    return ran


def _older_file(path: Path, monkeypatch: pytest.MonkeyPatch, version: int) -> None:
    """A file as a haf-tui whose newest migration was ``version`` left it."""
    with monkeypatch.context() as older:
        older.setattr(store_db, "MIGRATIONS", MIGRATIONS[:version])
        older.setattr(store_db, "LATEST_VERSION", version)
        with open_store(path) as store:
            assert store.schema_version() == version


def test_a_file_this_haf_tui_wrote_opens_with_one_query(
    tmp_path: Path, statements: list[str]
) -> None:
    ensure_methods()
    assert registered_method_migrations()  # (the methods' migrations are looked at too)
    path = tmp_path / "haf.duckdb"
    open_store(path).close()
    statements.clear()
    with open_store(path, read_only=True) as store:
        assert len(statements) == 1 and not store.copied
        state = store.schema_state()
        assert state.version == LATEST_VERSION and not store.needs_migration(state)
        applied = {
            (m, mig.version) for m, ms in registered_method_migrations().items() for mig in ms
        }
        assert state.method_migrations == applied


def test_a_file_before_method_migrations_is_upgraded_in_a_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "old.duckdb"
    before_methods = next(
        n for n, description, _ in MIGRATIONS if "method_migrations" in description
    )
    _older_file(path, monkeypatch, before_methods - 1)
    with open_store(path, read_only=True) as store:
        assert store.copied and store.schema_version() == LATEST_VERSION
    with open_store(path) as store:  # (for writing: migrated in place)
        assert not store.needs_migration()
    with open_store(path, read_only=True) as store:
        assert not store.copied


def test_a_method_migration_the_file_lacks_is_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ensure_methods()
    path = tmp_path / "haf.duckdb"
    open_store(path).close()
    method, migrations = next(iter(registered_method_migrations().items()))
    with duckdb.connect(str(path)) as con:
        con.execute(
            "DELETE FROM method_migrations WHERE method = ? AND version = ?",
            [method, migrations[-1].version],
        )
    with open_store(path, read_only=True) as store:
        assert store.copied  # (read through an upgraded copy: reads never write)
    with duckdb.connect(str(path), read_only=True) as con:
        assert con.execute(
            "SELECT count(*) FROM method_migrations WHERE method = ? AND version = ?",
            [method, migrations[-1].version],
        ).fetchone() == (0,)


@pytest.mark.parametrize(
    "sql",
    [
        "CREATE TABLE people (name VARCHAR)",
        "CREATE VIEW schema_migrations AS SELECT 1 AS step",  # (a name of haf's, not its table)
        "CREATE TABLE schema_migrations (step INTEGER)",
        # (haf's two tables, neither holding a migration: read in the one query, none applied)
        "CREATE TABLE schema_migrations (version INTEGER, description VARCHAR); "
        "CREATE TABLE method_migrations (method VARCHAR, version INTEGER)",
    ],
)
def test_a_file_haf_tui_never_wrote_is_refused_in_one_line(tmp_path: Path, sql: str) -> None:
    path = tmp_path / "foreign.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute(sql)
    for read_only in (True, False):
        with pytest.raises(StoreError, match=r"is not a haf-tui database \(it holds "):
            open_store(path, read_only=read_only)


def test_an_empty_file_is_a_new_store(tmp_path: Path) -> None:
    path = tmp_path / "empty.duckdb"
    duckdb.connect(str(path)).close()
    with open_store(path) as store:
        assert store.schema_version() == LATEST_VERSION
