"""A method's own tables: the migrations a method declares (``Method.migrations``) and the
registry of them the store applies (:mod:`haf_tui.store.method_schema`).

The store sits below the methods, so it never asks them: the method registry a program
installs hands its methods' migrations over, all at once (:func:`use_method_migrations`, as it
hands the settings models to :func:`haf_tui.config.use_settings_models`), and every open for
writing applies those a file lacks, after the core ones. A method's migrations are
numbered from 1 in its own sequence; they may only create, change or drop tables (views,
indexes, sequences) named ``<method>_…``, never haf's own.

That namespace is provably the method's own: a method whose ``<method>_`` could begin a core
table's name (``instance`` would own ``instance_results``), today's (:func:`core_tables`) or a
later one (each is named ``<word>_…`` for a word of :data:`RESERVED_WORDS`, or is one of
:data:`EXACT_CORE_NAMES`; a test keeps the migrations to that rule), or whose namespace
overlaps another loaded method's (``toy`` and ``toy_x``), is refused when it loads. DuckDB's
names ignore case, and so does every comparison here.

Nothing here imports DuckDB: a method's declarations import this module.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from haf_tui.store.migrations import MIGRATIONS
from haf_tui.vocabulary import HafError

RESERVED_WORDS: Final = frozenset(
    {
        # the leading words of today's core tables
        "campaign",
        "instance",
        "method",
        "parse",
        "reason",
        "schema",
        "skipped",
        # kept for later core tables (and DuckDB's own catalogs)
        "annotation",
        "core",
        "dataset",
        "duckdb",
        "generation",
        "information",
        "label",
        "metric",
        "model",
        "note",
        "pg",
        "run",
        "side",
        "sqlite",
        "store",
        "system",
        "temp",
        "token",
    }
)
"""Core tables are named ``<word>_…`` for one of these words (or one of
:data:`EXACT_CORE_NAMES`): no method may be called ``<word>`` or ``<word>_…``."""

EXACT_CORE_NAMES: Final = frozenset(
    {"campaigns", "datasets", "generations", "instances", "reasons", "runs", "tokens"}
)
"""Core tables named by one word, no ``_`` after it: no method may be called so (a method owns
the table named as it is, as the built-in ``rationales`` method owns ``rationales``)."""

_CREATED = re.compile(
    r"\bCREATE\s+(?:OR\s+REPLACE\s+)?(?:UNIQUE\s+)?(?:TABLE|VIEW|INDEX|SEQUENCE|MACRO|TYPE)\s+"
    r"(?:IF\s+NOT\s+EXISTS\s+)?\"?([A-Za-z_][A-Za-z0-9_]*)",
    re.IGNORECASE,
)


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
"""The installed methods' migrations by method name, handed over by the method registry."""


def table_prefix(method: str) -> str:
    """What the names of ``method``'s tables start with: ``<method>_``."""
    return f"{method}_"


def owns(method: str, name: str) -> bool:
    """Whether a table (view, index, sequence) called ``name`` is in ``method``'s namespace
    (``<method>`` or ``<method>_…``, case ignored as DuckDB ignores it)."""
    folded = name.casefold()
    return folded == method.casefold() or folded.startswith(table_prefix(method).casefold())


def core_tables() -> frozenset[str]:
    """Every table, view, index, sequence, macro and type the core migrations create (and
    ``schema_migrations``), lower-cased."""
    created = {m.group(1).casefold() for _, _, sql in MIGRATIONS for m in _CREATED.finditer(sql)}
    return frozenset({*created, "schema_migrations"})


def check_method_name(method: str, others: Iterable[str] = ()) -> None:
    """Refuse (one line) a method whose tables could be a core table (today's or a later
    one's) or another method's: ``others`` are the names of the methods loaded beside it."""
    folded = method.casefold()
    if not folded or not re.fullmatch(r"[a-z][a-z0-9_]*", folded):
        raise MethodTableError(
            f"method {method!r}: a method's name is a letter, then letters, digits or _"
        )
    core = sorted(name for name in core_tables() if owns(method, name))
    word = folded.split("_", 1)[0]
    if core or word in RESERVED_WORDS or folded in EXACT_CORE_NAMES:
        exact = f"haf's own table {folded}" if folded in EXACT_CORE_NAMES else ""
        taken = f"haf's own table {core[0]}" if core else exact or f"haf's {word}_… tables"
        raise MethodTableError(
            f"method {method!r}: its tables ({table_prefix(method)}…) could be {taken} "
            "(rename the method)"
        )
    for other in others:
        if other == method:
            continue
        if other.casefold() == folded or owns(other, method) or owns(method, other):
            raise MethodTableError(
                f"method {method!r}: its tables ({table_prefix(method)}…) could be those of "
                f"the method {other!r} (rename one of them)"
            )


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


def check_method_tables(
    method: str, migrations: Sequence[MethodMigration], others: Iterable[str] = ()
) -> None:
    """Refuse (one line) a method whose name, beside the methods called ``others``, or whose
    migrations could not be its own (:func:`check_method_name`,
    :func:`check_method_migrations`)."""
    check_method_name(method, others)
    check_method_migrations(method, migrations)


def use_method_migrations(migrations: Mapping[str, Sequence[MethodMigration]]) -> None:
    """Apply these methods' migrations from now on, whenever a file lacks them (and no other
    method's: those handed over before are forgotten). Each was checked by
    :func:`check_method_tables` as its method was added to the registry."""
    METHOD_MIGRATIONS.clear()
    METHOD_MIGRATIONS.update({name: tuple(steps) for name, steps in migrations.items() if steps})


def registered_method_migrations() -> dict[str, tuple[MethodMigration, ...]]:
    """The registered methods' migrations by method name."""
    return METHOD_MIGRATIONS
