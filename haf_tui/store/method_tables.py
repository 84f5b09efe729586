"""A method's own tables: the migrations a method declares (``Method.migrations``) and the
registry of them the store applies (:mod:`haf_tui.store.method_schema`).

The store sits below the methods, so it never asks them: the method registry hands each
method's migrations over as it loads the method (:func:`register_method_migrations`, as it
registers settings with :func:`haf_tui.config.register_settings`), and every open for writing
applies the registered migrations a file lacks, after the core ones. A method's migrations are
numbered from 1 in its own sequence; they may only create, change or drop tables (views,
indexes, sequences) named ``<method>_…``, never haf's own.

Nothing here imports DuckDB: a method's declarations import this module.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from haf_tui.vocabulary import HafError


@dataclass(frozen=True)
class MethodMigration:
    """One step of a method's own schema: ``version`` (1, 2, … in the method's sequence), a
    short ``description`` and its ``sql`` (one or more DDL statements on ``<method>_…``
    tables). Never edit a released one: add the next."""

    version: int
    description: str
    sql: str


class MethodTableError(HafError, ValueError):
    """A method's migrations are not a sequence 1, 2, … with descriptions and SQL."""


METHOD_MIGRATIONS: dict[str, tuple[MethodMigration, ...]] = {}
"""Each loaded method's migrations by method name, handed over by the method registry."""


def table_prefix(method: str) -> str:
    """What the names of ``method``'s tables start with: ``<method>_``."""
    return f"{method}_"


def check_method_migrations(method: str, migrations: Sequence[MethodMigration]) -> None:
    """Refuse (one line) migrations that are not numbered 1, 2, … or lack a description or
    SQL."""
    for expected, migration in enumerate(migrations, start=1):
        if migration.version != expected:
            raise MethodTableError(
                f"method {method!r}: its migrations must be numbered 1, 2, … in order "
                f"(found {migration.version} where {expected} belongs)"
            )
        if not migration.description.strip() or not migration.sql.strip():
            raise MethodTableError(
                f"method {method!r}: migration {migration.version} needs a description and SQL"
            )


def register_method_migrations(method: str, migrations: Sequence[MethodMigration]) -> None:
    """Apply ``method``'s migrations from now on, whenever a file lacks them (checked first)."""
    check_method_migrations(method, migrations)
    if migrations:
        METHOD_MIGRATIONS[method] = tuple(migrations)
    else:
        METHOD_MIGRATIONS.pop(method, None)


def forget_method_migrations() -> None:
    """Drop every registered method's migrations (the methods are about to be found again)."""
    METHOD_MIGRATIONS.clear()


def registered_method_migrations() -> dict[str, tuple[MethodMigration, ...]]:
    """The registered methods' migrations by method name."""
    return METHOD_MIGRATIONS
