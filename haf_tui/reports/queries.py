"""Named SQL queries: reading their headers, loading them, and running them with parameters.

A *named query* is one ``queries/NAME.sql`` file whose leading comment header says what it is::

    -- name: table1
    -- title: Table 1 — HAF metrics per model × dataset
    -- description: what it answers, which pooling rule, what n means
    --   (an indented comment line continues the key above it)
    -- params: run_ids (VARCHAR[]; default []; runs to show, empty list = all runs),
    --   low_edge (DOUBLE; default 0.6; lower edge of the medium band)

Each parameter is ``NAME (TYPE; default VALUE; description)``; the default part is optional
(a parameter without one is required) and ``params: none`` declares none. The SQL uses them as
DuckDB named parameters (``$run_ids``). :func:`run_named` fills defaults, converts text values
(as typed on a command line) to the declared type, and resolves run-id prefixes.
"""

from __future__ import annotations

import importlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pydantic import BaseModel, ConfigDict

from haf_tui.store.errors import StoreError

if TYPE_CHECKING:
    from haf_tui.store import Store

Row = tuple[Any, ...]
Result = tuple[list[str], list[Row]]

QUERIES_ENV: Final = "HAF_QUERIES_DIR"
"""Environment variable naming a folder of ``*.sql`` files to use instead of the built-in one."""

_REPOSITORY_QUERIES: Final = Path(__file__).resolve().parents[2] / "queries"
_PACKAGED_QUERIES: Final = Path(__file__).resolve().parents[1] / "queries"

QUERIES_DIR: Final[Path] = _PACKAGED_QUERIES if _PACKAGED_QUERIES.is_dir() else _REPOSITORY_QUERIES
"""The built-in named queries: the copy a wheel ships as ``haf_tui/queries`` when installed,
else the repository's ``queries/`` folder (a source checkout, where the copy does not exist)."""

PARAM_TYPES: Final = ("VARCHAR", "VARCHAR[]", "DOUBLE", "INTEGER", "BIGINT", "BOOLEAN")
"""Parameter types a query header may declare."""

_HEADER_KEYS: Final = ("name", "title", "description", "params")
_KEY_LINE = re.compile(r"^--\s*(" + "|".join(_HEADER_KEYS) + r")\s*:\s*(.*)$", re.IGNORECASE)
_PARAM_ITEM = re.compile(r"^([A-Za-z_]\w*)\s*(?:\((.*)\))?$", re.DOTALL)
_SQL_PARAM = re.compile(r"\$([A-Za-z_]\w*)")
_RUN_PARAMS: Final = ("run_id", "run_ids")


class QueryError(StoreError):
    """A named query or report cannot be found, parsed or run as asked (one clear line)."""


# ---------------------------------------------------------------- named queries


class QueryParam(BaseModel):
    """One declared parameter of a named query."""

    model_config = ConfigDict(frozen=True)

    name: str
    type: str
    default: Any = None
    required: bool = True
    description: str = ""


class NamedQuery(BaseModel):
    """A ``queries/NAME.sql`` file: its header and its SQL."""

    model_config = ConfigDict(frozen=True)

    name: str
    title: str
    description: str
    params: tuple[str, ...]
    """Declared parameter names, in header order."""
    param_specs: tuple[QueryParam, ...]
    """Declared parameters with their types, defaults and descriptions."""
    sql: str
    path: Path

    def param(self, name: str) -> QueryParam:
        """A declared parameter by name (QueryError if the query has none such)."""
        for declared in self.param_specs:
            if declared.name == name:
                return declared
        known = ", ".join(self.params) or "none"
        raise QueryError(f"query {self.name!r} has no parameter {name!r} (it takes: {known})")


def queries_dir() -> Path:
    """``$HAF_QUERIES_DIR`` if set, else :data:`QUERIES_DIR`."""
    override = os.environ.get(QUERIES_ENV)
    return Path(override).expanduser() if override else QUERIES_DIR


def _split_top_level(text: str, separator: str) -> list[str]:
    """Split on ``separator`` outside parentheses and brackets."""
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for char in text:
        if char in "([":
            depth += 1
        elif char in ")]":
            depth = max(depth - 1, 0)
        if char == separator and depth == 0:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    parts.append("".join(current).strip())
    return [p for p in parts if p]


def _parse_literal(text: str) -> Any:
    """A default value: JSON (``[]``, ``0.6``, ``"x"``, ``null``), else the bare text."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        if len(text) >= 2 and text[0] == text[-1] == "'":
            return text[1:-1]
        return text


def _parse_params(text: str, where: str) -> tuple[QueryParam, ...]:
    if not text.strip() or text.strip().lower() in ("none", "-"):
        return ()
    params: list[QueryParam] = []
    for item in _split_top_level(text, ","):
        match = _PARAM_ITEM.match(item)
        if not match:
            raise QueryError(f"{where}: cannot read parameter {item!r} (expected NAME (TYPE; ...))")
        name, inside = match.group(1), (match.group(2) or "VARCHAR")
        parts = [p.strip() for p in _split_top_level(inside, ";")]
        param_type = (parts[0] if parts else "VARCHAR").upper()
        if param_type not in PARAM_TYPES:
            raise QueryError(
                f"{where}: parameter {name} has unknown type {param_type!r} "
                f"(known: {', '.join(PARAM_TYPES)})"
            )
        default: Any = None
        required = True
        notes: list[str] = []
        for part in parts[1:]:
            if part.lower().startswith("default"):
                default = _parse_literal(part[len("default") :].strip(" :="))
                required = False
            else:
                notes.append(part)
        if any(p.name == name for p in params):
            raise QueryError(f"{where}: parameter {name} is declared twice")
        params.append(
            QueryParam(
                name=name,
                type=param_type,
                default=default,
                required=required,
                description="; ".join(notes),
            )
        )
    return tuple(params)


def parse_query(text: str, path: Path) -> NamedQuery:
    """Read a query file's header; QueryError when it is missing or malformed."""
    values: dict[str, list[str]] = {}
    key: str | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            if values:
                break
            continue
        if not line.startswith("--"):
            break
        match = _KEY_LINE.match(line)
        if match:
            key = match.group(1).lower()
            values.setdefault(key, []).append(match.group(2).strip())
        elif key is not None and line[2:].strip():
            values[key].append(line[2:].strip())
    where = str(path)
    if "name" not in values:
        raise QueryError(f"{where}: no '-- name:' header line")
    name = " ".join(values["name"]).strip()
    if name != path.stem:
        raise QueryError(f"{where}: header name {name!r} differs from the file name {path.stem!r}")
    params = _parse_params(" ".join(values.get("params", [])), where)
    used = set(_SQL_PARAM.findall(_strip_comments(text)))
    declared = {p.name for p in params}
    if used != declared:
        problems = []
        if used - declared:
            problems.append(f"used but not declared: {', '.join(sorted(used - declared))}")
        if declared - used:
            problems.append(f"declared but not used: {', '.join(sorted(declared - used))}")
        raise QueryError(f"{where}: parameters {'; '.join(problems)}")
    return NamedQuery(
        name=name,
        title=" ".join(values.get("title", [])).strip() or name,
        description=" ".join(values.get("description", [])).strip(),
        params=tuple(p.name for p in params),
        param_specs=params,
        sql=text,
        path=path,
    )


def _strip_comments(sql: str) -> str:
    """The SQL without ``--`` / ``/* */`` comments and string literals (to find ``$name``)."""
    out: list[str] = []
    i, n = 0, len(sql)
    while i < n:
        if sql.startswith("--", i):
            end = sql.find("\n", i)
            i = n if end < 0 else end
        elif sql.startswith("/*", i):
            end = sql.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif sql[i] in "'\"":
            quote, i = sql[i], i + 1
            while i < n:
                if sql[i] == quote:
                    if sql.startswith(quote * 2, i):
                        i += 2
                        continue
                    break
                i += 1
            i += 1
            out.append(" ")
        else:
            out.append(sql[i])
            i += 1
    return "".join(out)


METHOD_QUERY_DIRS: list[Path] = []
"""Folders of named queries the methods add (:func:`add_queries_dir`), read after the main
folder (a name there wins)."""


def add_queries_dir(folder: Path) -> None:
    """Read ``folder``'s ``*.sql`` as named queries too (a method's own queries)."""
    if folder not in METHOD_QUERY_DIRS:
        METHOD_QUERY_DIRS.append(folder)


def load_queries(directory: Path | None = None) -> dict[str, NamedQuery]:
    """Every ``*.sql`` of ``directory`` (default :func:`queries_dir`, then the methods'
    folders), by name, sorted."""
    folder = directory if directory is not None else queries_dir()
    if not folder.is_dir():
        raise QueryError(f"no queries folder at {folder} (set {QUERIES_ENV} to one)")
    extra = [] if directory is not None else [d for d in METHOD_QUERY_DIRS if d.is_dir()]
    queries: dict[str, NamedQuery] = {}
    for source in (*extra[::-1], folder):
        for path in sorted(source.glob("*.sql")):
            query = parse_query(path.read_text(encoding="utf-8"), path)
            queries[query.name] = query
    return dict(sorted(queries.items()))


def get_query(name: str, directory: Path | None = None) -> NamedQuery:
    """A named query; QueryError listing the known names when there is none such."""
    queries = load_queries(directory)
    if name not in queries and directory is None:
        importlib.import_module("haf_tui.methods.registry").methods()  # their query folders
        queries = load_queries(directory)
    try:
        return queries[name]
    except KeyError:
        known = ", ".join(queries) or "none"
        raise QueryError(f"no query named {name!r} (known: {known})") from None


# ---------------------------------------------------------------- parameters


def _coerce_scalar(value: Any, param_type: str, where: str) -> Any:
    if value is None:
        return None
    if param_type == "BOOLEAN":
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("true", "yes", "1", "on"):
            return True
        if text in ("false", "no", "0", "off"):
            return False
        raise QueryError(f"{where}: expected a boolean, got {value!r}")
    if param_type in ("INTEGER", "BIGINT"):
        if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
            raise QueryError(f"{where}: expected an integer, got {value!r}")
        try:
            return int(value)
        except (TypeError, ValueError):
            raise QueryError(f"{where}: expected an integer, got {value!r}") from None
    if param_type == "DOUBLE":
        if isinstance(value, bool):
            raise QueryError(f"{where}: expected a number, got {value!r}")
        try:
            return float(value)
        except (TypeError, ValueError):
            raise QueryError(f"{where}: expected a number, got {value!r}") from None
    return str(value)


def coerce_param(param: QueryParam, value: Any, query: str = "") -> Any:
    """``value`` as ``param``'s declared type; text (``"0.7"``, ``"a,b"``) is converted."""
    where = f"parameter {param.name}" + (f" of {query}" if query else "")
    if param.type.endswith("[]"):
        if value is None:
            return []
        if isinstance(value, str):
            items: list[Any] = [v.strip() for v in value.split(",") if v.strip()]
        elif isinstance(value, list | tuple | set | frozenset):
            items = list(value)
        else:
            raise QueryError(f"{where}: expected a list, got {value!r}")
        return [_coerce_scalar(v, param.type[:-2], where) for v in items]
    return _coerce_scalar(value, param.type, where)


def resolve_run_id(store: Store, run_id: str) -> str:
    """A run id from an exact id or a unique prefix (QueryError otherwise)."""
    _, rows = store.query(
        "SELECT run_id FROM runs WHERE starts_with(run_id, ?) ORDER BY run_id", [run_id]
    )
    ids = [str(r[0]) for r in rows]
    if run_id in ids:
        return run_id
    if not ids:
        raise QueryError(f"no run {run_id!r} in {store.path}")
    if len(ids) > 1:
        shown = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
        raise QueryError(f"run id prefix {run_id!r} is ambiguous ({shown})")
    return ids[0]


def resolve_params(
    store: Store, query: NamedQuery, params: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The values ``query`` runs with: given ones converted, defaults filled, run ids resolved.

    QueryError for an undeclared parameter, a missing required one or a value of the wrong type.
    """
    given = dict(params or {})
    unknown = sorted(set(given) - set(query.params))
    if unknown:
        known = ", ".join(query.params) or "none"
        raise QueryError(
            f"query {query.name!r} takes no parameter {', '.join(unknown)} (it takes: {known})"
        )
    missing = [p.name for p in query.param_specs if p.required and given.get(p.name) is None]
    if missing:
        raise QueryError(f"query {query.name!r} needs parameter {', '.join(missing)}")
    values: dict[str, Any] = {}
    for param in query.param_specs:
        raw = given[param.name] if given.get(param.name) is not None else param.default
        value = coerce_param(param, raw, query.name)
        if param.name in _RUN_PARAMS and value is not None:
            value = (
                [resolve_run_id(store, v) for v in value]
                if isinstance(value, list)
                else resolve_run_id(store, value)
            )
        values[param.name] = value
    return values


def run_query(store: Store, query: NamedQuery, params: Mapping[str, Any] | None = None) -> Result:
    """Run a parsed named query with :func:`resolve_params`' values."""
    values = resolve_params(store, query, params)
    try:
        return store.query_user(query.sql, values)  # a file a user may have written
    except StoreError as exc:
        raise QueryError(f"query {query.name!r}: {exc}") from exc


def run_named(store: Store, name: str, params: Mapping[str, Any] | None = None) -> Result:
    """Run the named query ``name``; returns (column names, rows)."""
    return run_query(store, get_query(name), params)


def went_on(row: Mapping[str, Any]) -> bool:
    """Whether an instance (a row of the ``instances`` query) went on after JUSTIFY with
    reasons."""
    return bool(row.get("n_reasons")) and not row.get("stopped")


def first_with_reasons(rows: Sequence[Mapping[str, Any]]) -> str | None:
    """The first instance that :func:`went_on`: where the explorer opens, and what ``haf run``
    suggests to look at."""
    return next((str(r["instance_id"]) for r in rows if went_on(r)), None)


def instance_rows(store: Store, run_id: str) -> list[dict[str, Any]]:
    """The ``instances`` query of one run, as dicts."""
    columns, rows = run_named(store, "instances", {"run_id": run_id})
    return [dict(zip(columns, row, strict=True)) for row in rows]
