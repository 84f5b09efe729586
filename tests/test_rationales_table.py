"""The rationales method's table is its own migration (issue 35 §2): a file made when the core
created it (migration 6) keeps it and its rows, a new file gets the same table from the
method, and the store's core names no method's table."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from haf_tui.methods.rationales.suite.records import MIGRATIONS as OWN
from haf_tui.methods.registry import methods
from haf_tui.store import method_tables as store_method_tables
from haf_tui.store import open_store
from haf_tui.store.method_tables import MethodTableError, check_method_name, owns
from haf_tui.store.migrations import MIGRATIONS

RELEASED_6 = OWN[0].sql.replace("IF NOT EXISTS ", "")
"""Core migration 6 as it was released: the table the method's migration 1 makes."""


def columns(con: duckdb.DuckDBPyConnection) -> list[tuple[object, ...]]:
    return con.execute("DESCRIBE rationales").fetchall()


def released_columns() -> list[tuple[object, ...]]:
    with duckdb.connect() as con:
        con.execute(RELEASED_6)
        return columns(con)


def file_of_the_core_migrations(path: Path) -> None:
    """A file as haf-tui made it before: the core migrations 1–10, 6 creating ``rationales``,
    one rationale stored."""
    with duckdb.connect(str(path)) as con:
        con.execute(
            "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, "
            "description VARCHAR, applied_at TIMESTAMP DEFAULT current_timestamp)"
        )
        for number, description, sql in MIGRATIONS:
            con.execute(RELEASED_6 if number == 6 else sql)
            con.execute("INSERT INTO schema_migrations VALUES (?, ?, now())", [number, description])
        con.execute(
            "INSERT INTO rationales (run_id, instance_id, source, seed, mask, scores, size) "
            "VALUES ('r', 'i', 'occlusion', 0, [1, 0, 1], [0.5, NULL, 1.5], 2)"
        )


def test_a_file_made_before_keeps_its_table_and_rows(tmp_path: Path) -> None:
    methods()
    path = tmp_path / "before.duckdb"
    file_of_the_core_migrations(path)
    with open_store(path) as store:
        _, rows = store.query("SELECT run_id, instance_id, source, mask, scores FROM rationales")
        _, applied = store.query(
            "SELECT version FROM method_migrations WHERE method = ?", ["rationales"]
        )
    assert rows == [("r", "i", "occlusion", [1, 0, 1], [0.5, None, 1.5])]
    assert applied[0] == (1,)  # (recorded: it made nothing, the table was there)
    with duckdb.connect(str(path), read_only=True) as con:
        assert columns(con) == released_columns()


def test_a_new_file_gets_the_same_table_from_the_method(tmp_path: Path) -> None:
    methods()
    with open_store(tmp_path / "new.duckdb"):
        pass
    with duckdb.connect(str(tmp_path / "new.duckdb"), read_only=True) as con:
        assert columns(con) == released_columns()
        (version,) = con.execute("SELECT max(version) FROM schema_migrations").fetchone() or (0,)
    assert version == MIGRATIONS[-1][0]
    assert "rationales" not in store_method_tables.core_tables()


def test_a_method_owns_the_table_named_as_it_is_and_none_is_named_as_a_core_table() -> None:
    assert owns("rationales", "rationales") and owns("rationales", "RATIONALES_x")
    assert not owns("rationales", "rationale") and not owns("toy", "toys")
    for taken in ("runs", "datasets", "tokens", "campaigns"):
        with pytest.raises(MethodTableError, match="haf's own table"):
            check_method_name(taken)
    check_method_name("rationales")


def test_a_file_before_the_prompt_ids_gets_the_column_and_keeps_its_rows(tmp_path: Path) -> None:
    """The method's migration 3 (``rationales_gradient.prompt_ids``) on a file made at its
    migration 2: the column is added, a row stored before keeps its values (no ids: NULL),
    and a new row's ids are read back as stored."""
    methods()
    path = tmp_path / "before.duckdb"
    with open_store(path):
        pass
    with duckdb.connect(str(path)) as con:  # (as the release before migration 3 left it)
        con.execute("ALTER TABLE rationales_gradient DROP COLUMN prompt_ids")
        con.execute("DELETE FROM method_migrations WHERE method = 'rationales' AND version = 3")
        con.execute(
            "INSERT INTO rationales_gradient (run_id, instance_id, spelling, torch_logprob) "
            "VALUES ('r', 'old', 'toxic', -0.5)"
        )
    with open_store(path) as store:
        _, applied = store.query(
            "SELECT max(version) FROM method_migrations WHERE method = 'rationales'"
        )
        assert applied == [(3,)]
        with store.transaction() as con:
            con.execute(
                "INSERT INTO rationales_gradient (run_id, instance_id, prompt_ids) "
                "VALUES ('r', 'new', [1, 128000, 70])"
            )
        _, rows = store.query(
            "SELECT instance_id, spelling, torch_logprob, prompt_ids FROM rationales_gradient "
            "ORDER BY instance_id"
        )
    assert rows == [("new", None, None, [1, 128000, 70]), ("old", "toxic", -0.5, None)]
