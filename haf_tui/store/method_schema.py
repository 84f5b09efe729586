"""Applying the methods' own migrations (:mod:`haf_tui.store.method_tables`) and storing a
suite's rows in its tables.

``method_migrations`` (core migration 9) records what ran, per method and version. Every
registered method's missing migrations run inside the store's migrating transaction, after the
core ones, so a failure leaves nothing half-applied. Each migration is checked twice: its
statements must be DDL (CREATE, ALTER, DROP) or DML whose target is plainly one of the
method's tables (DuckDB's parser tells the kinds apart), and the catalog before and after it
may differ only in the method's own tables, views, indexes and sequences (``<method>_…`` in
``main``: an object dropped and made again with its exact SQL differs, by its id); a foreign
key from them to a haf table is refused too (it would pin that table). And the data holds:
every other table keeps its rows, each table's count and a sum of its rows' hashes compared
before and after (one read of the file per migration, only when one is pending), so a
migration that empties or rewrites a haf table (``ALTER … USING``) is refused however its
schema looks afterwards.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import duckdb

from haf_tui.store.connection import StoreError
from haf_tui.store.method_tables import (
    MethodMigration,
    owns,
    registered_method_migrations,
    table_prefix,
)
from haf_tui.vocabulary import first_line, null_for_nan

_DDL = frozenset(
    {duckdb.StatementType.CREATE, duckdb.StatementType.ALTER, duckdb.StatementType.DROP}
)
_DML = frozenset(
    {duckdb.StatementType.INSERT, duckdb.StatementType.UPDATE, duckdb.StatementType.DELETE}
)
_DML_TARGET = re.compile(
    r"\s*(?:INSERT\s+(?:OR\s+(?:REPLACE|IGNORE)\s+)?INTO|UPDATE|DELETE\s+FROM)\s+"
    r"\"?([A-Za-z_][A-Za-z0-9_]*)\"?(?=[\s(;]|$)",
    re.IGNORECASE,
)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

_CATALOG_SQL = """
SELECT 'table', database_name, schema_name, table_name, NULL, sql, comment::VARCHAR, table_oid
FROM duckdb_tables()
UNION ALL SELECT 'view', database_name, schema_name, view_name, NULL, sql, comment::VARCHAR,
       view_oid
FROM duckdb_views() WHERE NOT internal
UNION ALL SELECT 'index', database_name, schema_name, index_name, table_name, sql, NULL, index_oid
FROM duckdb_indexes()
UNION ALL SELECT 'sequence', database_name, schema_name, sequence_name, NULL, sql, NULL,
       sequence_oid
FROM duckdb_sequences()
UNION ALL SELECT 'macro', database_name, schema_name, function_name, NULL,
       coalesce(macro_definition, ''), NULL, NULL
FROM duckdb_functions() WHERE NOT internal AND function_type IN ('macro', 'table_macro')
UNION ALL SELECT 'type', database_name, schema_name, type_name, NULL, logical_type, NULL, NULL
FROM duckdb_types() WHERE NOT internal
UNION ALL SELECT 'schema', database_name, schema_name, schema_name, NULL, NULL, NULL, NULL
FROM duckdb_schemas() WHERE NOT internal
"""
_OWN_KINDS = frozenset({"table", "view", "index", "sequence"})

CatalogEntry = tuple[Any, ...]


def has_method_migrations_table(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the file has ``method_migrations`` (core migration 9 ran)."""
    row = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'main' "
        "AND table_name = 'method_migrations'"
    ).fetchone()
    return bool(row and row[0])


def pending_method_migrations(
    con: duckdb.DuckDBPyConnection,
) -> list[tuple[str, MethodMigration]]:
    """The registered methods' migrations this file lacks, in order (none while it has no
    ``method_migrations``: the core migrations come first)."""
    if not registered_method_migrations() or not has_method_migrations_table(con):
        return []
    applied = {
        (str(method), int(version))
        for method, version in con.execute(
            "SELECT method, version FROM method_migrations"
        ).fetchall()
    }
    return missing_method_migrations(applied)


def missing_method_migrations(
    applied: Collection[tuple[str, int]] | None,
) -> list[tuple[str, MethodMigration]]:
    """The registered methods' migrations not among ``applied`` ((method, version) pairs), in
    order; none when ``applied`` is None (no ``method_migrations`` yet: the core ones first)."""
    if applied is None:
        return []
    return [
        (method, migration)
        for method, migrations in registered_method_migrations().items()
        for migration in migrations
        if (method, migration.version) not in applied
    ]


def apply_method_migrations(
    con: duckdb.DuckDBPyConnection, pending: Sequence[tuple[str, MethodMigration]]
) -> None:
    """Run ``pending`` (inside the caller's transaction) and record each in
    ``method_migrations``; a refused or failing one raises :class:`StoreError` in one line
    naming the method and version (the caller rolls everything back)."""
    rows = _row_fingerprints(con) if pending else {}
    for method, migration in pending:
        where = f"method {method!r}, migration {migration.version} ({migration.description})"
        statements = _checked_statements(method, migration, where)
        before = _catalog(con)
        for statement in statements:
            try:
                con.execute(statement)
            except duckdb.Error as exc:
                raise StoreError(f"{where} failed: {first_line(exc)}") from exc
        _check_catalog(con, method, before, where)
        rows = _check_rows(con, method, rows, where)
        con.execute(
            "INSERT INTO method_migrations (method, version, description) VALUES (?, ?, ?)",
            [method, migration.version, migration.description],
        )
        rows[("main", "method_migrations")] = _fingerprint(con, "main", "method_migrations")


def _checked_statements(method: str, migration: MethodMigration, where: str) -> list[str]:
    """The migration's statements, each DDL or DML on the method's own tables."""
    try:
        parsed = duckdb.extract_statements(migration.sql)
    except duckdb.Error as exc:
        raise StoreError(f"{where} failed: {first_line(exc)}") from exc
    prefix = table_prefix(method)
    statements = []
    for statement in parsed:
        if statement.type in _DML:
            target = _DML_TARGET.match(statement.query)
            if target is None or not owns(method, target.group(1)):
                raise StoreError(
                    f"{where} refused: it may only write rows into tables named {prefix}…"
                )
        elif statement.type not in _DDL:
            kind = statement.type.name
            raise StoreError(f"{where} refused: a {kind} statement (only DDL on {prefix}… tables)")
        statements.append(statement.query)
    return statements


def _catalog(con: duckdb.DuckDBPyConnection) -> set[CatalogEntry]:
    return set(con.execute(_CATALOG_SQL).fetchall())


def _check_catalog(
    con: duckdb.DuckDBPyConnection, method: str, before: set[CatalogEntry], where: str
) -> None:
    """Refuse a migration that changed anything but the method's own objects in ``main``, or
    made a foreign key from them to another table."""
    prefix = table_prefix(method)
    database = con.execute("SELECT current_database()").fetchone()
    for kind, catalog, schema, name, on_table, *_ in sorted(
        _catalog(con) ^ before, key=lambda entry: tuple(str(part) for part in entry)
    ):
        own = (
            kind in _OWN_KINDS
            and database is not None
            and catalog == database[0]
            and schema == "main"
            and owns(method, str(name))
            and (on_table is None or owns(method, str(on_table)))
        )
        if not own:
            shown = name if on_table is None else f"{name} on {on_table}"
            raise StoreError(
                f"{where} refused: it may only create or change tables named {prefix}…, "
                f"not the {kind} {shown}"
            )
    pinned = con.execute(
        "SELECT table_name, referenced_table FROM duckdb_constraints() "
        "WHERE constraint_type = 'FOREIGN KEY' AND starts_with(lower(table_name), lower(?)) "
        "AND NOT starts_with(lower(referenced_table), lower(?)) LIMIT 1",
        [prefix, prefix],
    ).fetchone()
    if pinned:
        raise StoreError(
            f"{where} refused: the foreign key from {pinned[0]} to {pinned[1]} would pin a "
            "haf table (keep run_id as a plain column)"
        )


def _row_fingerprints(con: duckdb.DuckDBPyConnection) -> dict[tuple[str, str], tuple[int, int]]:
    """Every table of this database (schema, name): its row count and the sum of its rows'
    hashes (the order of rows does not change it; a changed, lost or added row does)."""
    tables = con.execute(
        "SELECT schema_name, table_name FROM duckdb_tables() "
        "WHERE database_name = current_database() ORDER BY ALL"
    ).fetchall()
    return {(str(s), str(n)): _fingerprint(con, str(s), str(n)) for s, n in tables}


def _fingerprint(con: duckdb.DuckDBPyConnection, schema: str, name: str) -> tuple[int, int]:
    """A table's row count and the sum of its rows' hashes (names from the catalog, quoted)."""
    quoted = ".".join('"' + part.replace('"', '""') + '"' for part in (schema, name))
    row = con.execute(
        f"SELECT count(*), coalesce(sum(hash(t)::HUGEINT), 0) FROM {quoted} AS t"
    ).fetchone()
    return (int(row[0]), int(row[1])) if row else (0, 0)


def _check_rows(
    con: duckdb.DuckDBPyConnection,
    method: str,
    before: dict[tuple[str, str], tuple[int, int]],
    where: str,
) -> dict[tuple[str, str], tuple[int, int]]:
    """Refuse a migration after which a table not the method's own lost, gained or changed
    rows; returns the fingerprints now (the next migration's before)."""
    after = _row_fingerprints(con)
    for (schema, name), (count, digest) in sorted(before.items()):
        if owns(method, name) and schema == "main":
            continue
        now = after.get((schema, name))
        if now != (count, digest):
            shown = "no table after" if now is None else f"after: {now[0]}"
            raise StoreError(
                f"{where} refused: it may only change rows of tables named "
                f"{table_prefix(method)}…, not of the table {name} (rows before: {count}, "
                f"{shown})"
            )
    return after


def insert_method_rows(
    con: duckdb.DuckDBPyConnection,
    run_id: str,
    instance_id: str,
    rows: Mapping[str, Sequence[Mapping[str, Any]]],
) -> None:
    """Store a suite's rows in its method's tables (table name → rows of column → value),
    ``run_id`` and ``instance_id`` filled in; a NaN float becomes NULL. A table that is no
    registered method's raises :class:`StoreError`."""
    for table, table_rows in rows.items():
        if not table_rows:
            continue
        _check_row_table(table)
        columns = ["run_id", "instance_id"]
        for row in table_rows:
            columns += [c for c in row if c not in columns]
        bad = [c for c in columns if not _NAME.match(c)]
        if bad:
            raise StoreError(f"rows for {table}: not a column name: {bad[0]!r}")
        names = ", ".join(f'"{c}"' for c in columns)
        marks = ", ".join("?" * len(columns))
        values = [
            [run_id, instance_id, *(_stored(row.get(c)) for c in columns[2:])] for row in table_rows
        ]
        try:
            con.executemany(f'INSERT INTO "{table}" ({names}) VALUES ({marks})', values)
        except duckdb.Error as exc:
            raise StoreError(f"rows for {table} could not be stored: {first_line(exc)}") from exc


def _check_row_table(table: str) -> None:
    owners = [m for m in registered_method_migrations() if owns(m, table)]
    if not _NAME.match(table) or not owners:
        raise StoreError(
            f"rows for {table!r}: not a table of a method that declares migrations "
            "(a suite stores rows only in its method's own tables)"
        )


def _stored(value: Any) -> Any:
    """A value as stored: NaN floats (in lists too) become NULL."""
    if isinstance(value, float):
        return null_for_nan(value)
    if isinstance(value, list):
        return [null_for_nan(v) if isinstance(v, float) else v for v in value]
    return value
