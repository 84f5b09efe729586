"""Named SQL queries: reading their headers and loading them (running them with their
parameters: :mod:`haf_tui.reports.query_running`).

A *named query* is one ``queries/NAME.sql`` file whose leading comment header says what it is::

    -- name: table1
    -- title: Table 1 — HAF metrics per model × dataset
    -- description: what it answers, which pooling rule, what n means
    --   (an indented comment line continues the key above it)
    -- params: run_ids (VARCHAR[]; default []; runs to show, empty list = all runs),
    --   low_edge (DOUBLE; default 0.6; lower edge of the medium band)

Each parameter is ``NAME (TYPE; default VALUE; description)``; the default part is optional
(a parameter without one is required) and ``params: none`` declares none. The SQL uses them as
DuckDB named parameters (``$run_ids``). :func:`~haf_tui.reports.query_running.run_named`
fills defaults, converts text values (as typed on a command line) to the declared type, and
resolves run-id prefixes.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

from pydantic import BaseModel, ConfigDict

from haf_tui.store.errors import StoreError

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


_COMMENT_OR_LITERAL: Final = re.compile(
    r"--[^\n]*"  # a line comment (its newline stays)
    r"|/\*.*?(?:\*/|\Z)"  # a block comment (unclosed: to the end)
    r"|'(?:[^']+|'')*(?:'|\Z)"  # a string ('' inside it is a quote; unclosed: to the end)
    r'|"(?:[^"]+|"")*(?:"|\Z)',  # a quoted name, likewise
    re.DOTALL,
)


def _strip_comments(sql: str) -> str:
    """The SQL without ``--`` / ``/* */`` comments and string literals (to find ``$name``):
    a comment goes, a literal becomes one space. (One expression over the text: the scan a
    character at a time it replaces took 25 ms for the library's 31 files, which a screen's
    first read paid while the screen was drawn.)"""
    return _COMMENT_OR_LITERAL.sub(lambda m: "" if m.group()[0] in "-/" else " ", sql)


METHOD_QUERY_DIRS: list[Path] = []
"""Folders of named queries the installed methods add (:func:`use_method_query_dirs`), read
after the main folder (a name there wins)."""


def use_method_query_dirs(folders: Iterable[Path]) -> None:
    """Read these folders' ``*.sql`` as named queries too (the methods' own queries, handed
    over by the method registry a program installs), and no other method's."""
    METHOD_QUERY_DIRS[:] = list(dict.fromkeys(folders))


def _folders(directory: Path | None) -> list[Path]:
    """The folders named queries are read from, the one whose query of a name wins first:
    ``directory`` (default :func:`queries_dir`), then the methods' folders in their order."""
    folder = directory if directory is not None else queries_dir()
    if not folder.is_dir():
        raise QueryError(f"no queries folder at {folder} (set {QUERIES_ENV} to one)")
    extra = [] if directory is not None else [d for d in METHOD_QUERY_DIRS if d.is_dir()]
    return [folder, *extra]


def load_queries(directory: Path | None = None) -> dict[str, NamedQuery]:
    """Every ``*.sql`` of ``directory`` (default :func:`queries_dir`, then the methods'
    folders), by name, sorted."""
    queries: dict[str, NamedQuery] = {}
    for source in _folders(directory)[::-1]:  # (the one that wins read last)
        for path in sorted(source.glob("*.sql")):
            query = _parsed(path)
            queries[query.name] = query
    return dict(sorted(queries.items()))


_PARSED: dict[tuple[Path, str], NamedQuery] = {}
"""Query files parsed, by (path, text): a file is parsed again only when its text changed
(every report reads the library: parsing it each time was about half of the metrics screen's
opening at 5,000 instances)."""

SETTLED_SECONDS: Final = 2.0
"""A file changed longer ago than this when it was read is not read again while its times,
size and inode stay the same (one changed more recently is read each time: a write in the same
tick of the file system's clock could leave them as they were)."""

_READ: dict[Path, tuple[tuple[int, int, int, int], str, bool]] = {}
"""Query files read: (their mtime, ctime, size and inode then, their text, whether they had
settled, :data:`SETTLED_SECONDS`). A screen's first report read the library's 31 files while
the screen was being drawn, 40-70 ms waiting for the interpreter lock on every read; a look at
each file's times costs a quarter of that."""


clock = time.time
"""What "now" is read from (a test moves it on)."""


def _text(path: Path) -> str:
    """The file's text: read, or as read before when it had settled then and has not changed
    (any write changes its ctime, which no tool sets back)."""
    stat = path.stat()
    seen = (stat.st_mtime_ns, stat.st_ctime_ns, stat.st_size, stat.st_ino)
    found = _READ.get(path)
    if found is not None and found[0] == seen and found[2]:
        return found[1]
    text = path.read_text(encoding="utf-8")
    settled = clock() - max(stat.st_mtime_ns, stat.st_ctime_ns) / 1e9 >= SETTLED_SECONDS
    if len(_READ) >= 1024:  # (a folder of many files, or many folders: start over)
        _READ.clear()
    _READ[path] = (seen, text, settled)
    return text


def _parsed(path: Path) -> NamedQuery:
    """The query file at ``path``, parsed once per text it has had."""
    key = (path, _text(path))
    found = _PARSED.get(key)
    if found is None:
        found = parse_query(key[1], path)
        if len(_PARSED) >= 1024:  # (files edited many times in one process: start over)
            _PARSED.clear()
        _PARSED[key] = found  # (a file that fails to parse is not kept: it raises again)
    return found


_FILE_NAME: Final = re.compile(r"[^/\\\x00]+")
"""A query name that can only be a file's name in the folder (no separator)."""


def get_query(name: str, directory: Path | None = None) -> NamedQuery:
    """A named query (its file alone read: a query's name is its file's); QueryError listing
    the known names when there is none such."""
    folders = _folders(directory)
    if _FILE_NAME.fullmatch(name):
        for source in folders:
            path = source / f"{name}.sql"
            if path.is_file():
                return _parsed(path)
    queries = load_queries(directory)
    try:
        return queries[name]
    except KeyError:
        known = ", ".join(queries) or "none"
        raise QueryError(f"no query named {name!r} (known: {known})") from None
