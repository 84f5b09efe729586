"""The SQL console's statement check by itself (``check_reading_sql``), for every statement
kind DuckDB's parser produces (issue 24 §6): only SELECT and EXPLAIN SELECT pass; every other
kind is refused there with one line naming it as written (its first words: ``INSTALL``, not
the parser's LOAD), not left to the read-only transaction and the
locked-down connection behind it (``test_sql_console`` tries those layers together: there a
PRAGMA let through by the check is still refused later, except those that only change the
session, such as ``PRAGMA disable_object_cache``)."""

from __future__ import annotations

import duckdb
import pytest

from haf_tui.store.connection import READING_STATEMENTS, StoreError, check_reading_sql

Kind = duckdb.StatementType

REFUSED: list[tuple[str, str]] = [
    ("INSERT", "INSERT INTO runs VALUES (1)"),
    ("INSERT", "INSERT INTO runs VALUES (1) RETURNING *"),
    ("UPDATE", "UPDATE runs SET status = 'x'"),
    ("DELETE", "DELETE FROM runs"),
    ("DELETE", "TRUNCATE runs"),
    ("MERGE_INTO", "MERGE INTO runs USING r ON runs.run_id = r.run_id WHEN MATCHED THEN DELETE"),
    ("CREATE", "CREATE TABLE t (a INT)"),
    ("CREATE", "CREATE TEMP TABLE t AS SELECT 1"),
    ("CREATE", "CREATE VIEW v AS SELECT 1"),
    ("CREATE", "CREATE MACRO m(a) AS a + 1"),
    ("CREATE", "CREATE SEQUENCE s"),
    ("CREATE", "CREATE SECRET (TYPE s3, KEY_ID 'k', SECRET 's')"),
    ("ALTER", "ALTER TABLE runs ADD COLUMN b INT"),
    ("ALTER", "COMMENT ON TABLE runs IS 'x'"),
    ("DROP", "DROP TABLE runs"),
    ("DROP", "DEALLOCATE p"),
    ("PREPARE", "PREPARE p AS SELECT 1"),
    ("EXECUTE", "EXECUTE p"),
    ("TRANSACTION", "COMMIT"),
    ("TRANSACTION", "ROLLBACK"),
    ("TRANSACTION", "BEGIN TRANSACTION"),
    ("TRANSACTION", "ABORT"),
    ("COPY", "COPY runs TO 'out.csv'"),
    ("COPY", "COPY runs FROM 'in.csv'"),
    ("EXPORT", "EXPORT DATABASE 'exported'"),
    ("PRAGMA", "PRAGMA disable_object_cache"),
    ("PRAGMA", "PRAGMA force_checkpoint"),
    ("PRAGMA", "PRAGMA table_info('runs')"),
    ("PRAGMA", "IMPORT DATABASE 'exported'"),
    ("PRAGMA", "COPY FROM DATABASE a TO b"),
    ("VACUUM", "VACUUM"),
    ("VACUUM", "ANALYZE"),
    ("CALL", "CALL checkpoint()"),
    ("CALL", "CHECKPOINT"),
    ("CALL", "FORCE CHECKPOINT"),
    ("CALL", "CALL pragma_version()"),
    ("SET", "SET threads = 1"),
    ("SET", "PRAGMA profiling_output = 'p.txt'"),
    ("SET", "SET GLOBAL enable_external_access = true"),
    ("SET", "RESET lock_configuration"),
    ("SET", "SET VARIABLE v = 1"),
    ("SET", "USE memory"),
    ("LOAD", "LOAD httpfs"),
    ("LOAD", "INSTALL httpfs"),
    ("LOAD", "FORCE INSTALL httpfs"),
    ("ATTACH", "ATTACH 'b.duckdb' AS b"),
    ("DETACH", "DETACH b"),
    ("MULTI", "PIVOT runs ON status"),
]
"""(the kind DuckDB's parser gives, SQL of that kind): each must be refused by the check."""

READING: list[str] = [
    "SELECT 1",
    "FROM runs",
    "TABLE runs",
    "VALUES (1)",
    "WITH x AS (SELECT 1) SELECT * FROM x",
    "DESCRIBE runs",
    "SHOW TABLES",
    "SUMMARIZE runs",
    "UNPIVOT runs ON status INTO NAME n VALUE v",
    "SELECT * FROM pragma_table_info('runs')",
    "EXPLAIN SELECT 1",
    "EXPLAIN ANALYZE SELECT 1",
    "SELECT 1; SELECT 2",
]

NOT_PRODUCED = {
    "INVALID",  # (no SQL parses to it)
    "ANALYZE",  # ANALYZE parses as VACUUM
    "VARIABLE_SET",  # SET VARIABLE parses as SET
    "CREATE_FUNC",  # CREATE MACRO / FUNCTION parse as CREATE
    "EXTENSION",  # INSTALL parses as LOAD
    "COPY_DATABASE",  # COPY FROM DATABASE parses as PRAGMA
    "RELATION",  # (relational API objects, not SQL)
    "LOGICAL_PLAN",  # (internal)
}
"""Statement kinds no SQL text gives (checked: a new kind of a new DuckDB shows up here)."""


def _kinds(sql: str) -> list[str]:
    return [statement.type.name for statement in duckdb.extract_statements(sql)]


def test_the_table_covers_every_kind_the_parser_produces() -> None:
    produced = {kind for kind, _ in REFUSED} | {k for sql in READING for k in _kinds(sql)}
    assert produced | NOT_PRODUCED == set(Kind.__members__)
    assert not produced & NOT_PRODUCED
    assert {kind.name for kind in READING_STATEMENTS} == {"SELECT", "EXPLAIN"}


@pytest.mark.parametrize(("kind", "sql"), REFUSED, ids=[sql for _, sql in REFUSED])
def test_the_check_itself_refuses_every_kind_that_is_not_a_read(kind: str, sql: str) -> None:
    assert _kinds(sql) == [kind]  # (the table says what the parser gives)
    for statements in (sql, f"SELECT 1; {sql}", f"{sql}; SELECT 1"):
        with pytest.raises(StoreError, match=r"^refused: .+ statements are not allowed") as refused:
            check_reading_sql(statements)
        named = str(refused.value).removeprefix("refused: ").split(" statements")[0]
        assert " ".join(sql.upper().split()).startswith(named), (named, sql)  # as written
    with pytest.raises(StoreError, match=r"^(refused: |query failed: Parser Error)"):
        check_reading_sql(f"EXPLAIN ANALYZE {sql}")


def test_a_kind_duckdb_does_not_name_is_refused_in_one_line() -> None:
    (statement,) = duckdb.extract_statements("UPDATE EXTENSIONS")
    with pytest.raises(ValueError, match="not a valid StatementType"):
        _ = statement.type  # (what DuckDB's Python API does)
    with pytest.raises(StoreError, match=r"^refused: statements of a kind DuckDB does not name"):
        check_reading_sql("UPDATE EXTENSIONS")


@pytest.mark.parametrize("sql", READING)
def test_reads_pass_the_check(sql: str) -> None:
    check_reading_sql(sql)
