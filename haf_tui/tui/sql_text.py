"""What the SQL screen reads out of SQL text and DuckDB's messages: the ``$name`` parameters,
the word before the cursor and its completions, and where an error points."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_PARAM = re.compile(r"\$([A-Za-z_]\w*)")
_NOT_CODE = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|/\*.*?\*/", re.DOTALL)
_WORD_BEFORE = re.compile(r"[A-Za-z_][\w.]*$")
_ERROR_LINE = re.compile(r"^LINE (\d+): (.*)$")
_CARET = re.compile(r"^( *)\^")
_ELLIPSIS = "..."


def sql_params(sql: str) -> list[str]:
    """The ``$name`` parameters the SQL uses (outside comments and string literals), in order."""
    seen: dict[str, None] = {}
    for name in _PARAM.findall(_NOT_CODE.sub(" ", sql)):
        seen.setdefault(name)
    return list(seen)


def word_before(line: str, column: int) -> str:
    """The identifier (``runs`` or ``r.run_``) that ends at ``column`` of ``line``."""
    found = _WORD_BEFORE.search(line[:column])
    return found.group(0) if found else ""


def completions(prefix: str, names: Iterable[str]) -> list[str]:
    """Names that start with ``prefix`` (case-insensitive; ``alias.col`` completes ``col``),
    sorted, without repeats; the prefix itself alone is not a completion."""
    stem = prefix.rsplit(".", 1)[-1].lower()
    if not stem:
        return []
    found = {n for n in names if n.lower().startswith(stem) and n.lower() != stem}
    return sorted(found, key=lambda n: (n.lower(), n))


@dataclass(frozen=True)
class ErrorPosition:
    """Where in the editor's SQL an error points: 0-based row and column, and the line."""

    row: int
    column: int
    line: str


def error_position(sql: str, message: str) -> ErrorPosition | None:
    """The position DuckDB's ``LINE n: …`` / ``^`` lines of ``message`` point at in ``sql``.

    The screen runs SQL wrapped in a paging SELECT (one line more above it) or as written, so
    line n or n-1 of ``sql`` is the one whose text DuckDB quotes; a long line is quoted in part
    (between ``...``), found in the line to get the column."""
    lines = message.splitlines()
    for index, text in enumerate(lines[:-1]):
        quoted = _ERROR_LINE.match(text)
        caret = _CARET.match(lines[index + 1])
        if quoted is None or caret is None:
            continue
        number, snippet = int(quoted.group(1)), quoted.group(2)
        column_in_snippet = len(caret.group(1)) - len(f"LINE {number}: ")
        return _place(sql.splitlines(), number, snippet, column_in_snippet)
    return None


def _place(rows: list[str], number: int, snippet: str, column: int) -> ErrorPosition | None:
    start = 0
    if snippet.startswith(_ELLIPSIS):
        snippet, start = snippet[len(_ELLIPSIS) :], len(_ELLIPSIS)
    snippet = snippet.removesuffix(_ELLIPSIS)
    for row in (number - 2, number - 1):  # wrapped first (one line above), then as written
        if 0 <= row < len(rows) and snippet.strip() and snippet in rows[row]:
            offset = rows[row].find(snippet) if start else 0
            found = max(min(offset + column - start, len(rows[row])), 0)
            return ErrorPosition(row, found, rows[row])
    return None


_STATEMENT_PARTS = re.compile(
    r"'(?:[^']|'')*'?|\"(?:[^\"]|\"\")*\"?|--[^\n]*|/\*.*?(?:\*/|$)|;", re.DOTALL
)


def statement_spans(sql: str) -> list[tuple[int, int]]:
    """The (start, end) character offsets of each statement of ``sql``: split at the
    semicolons outside string literals, quoted names and comments (the semicolon ends its
    statement); statements with nothing but blanks are left out."""
    spans: list[tuple[int, int]] = []
    start = 0
    for found in _STATEMENT_PARTS.finditer(sql):
        if found.group(0) == ";":
            spans.append((start, found.end()))
            start = found.end()
    spans.append((start, len(sql)))
    return [(a, b) for a, b in spans if _NOT_CODE.sub(" ", sql[a:b]).strip(" \t\r\n;")]


def statement_at(sql: str, offset: int) -> str:
    """The statement of ``sql`` the character ``offset`` (a cursor) is in or just after; the
    whole text when it holds one statement or none."""
    spans = statement_spans(sql)
    if len(spans) <= 1:
        return sql
    for start, end in spans:
        if offset <= end:
            return sql[start:end]
    return sql[spans[-1][0] : spans[-1][1]]


def error_notes(message: str, keep_quote: bool = False) -> list[str]:
    """DuckDB's lines after the first of an error message (the candidate names, hints), less
    the ``LINE n:`` quote and its caret, which the screen shows as its own pointer (kept with
    ``keep_quote``, when the screen could not place it)."""
    lines = message.strip().splitlines()[1:]
    if keep_quote:
        return [line.rstrip() for line in lines if line.strip()]
    notes: list[str] = []
    skip_caret = False
    for line in lines:
        if _ERROR_LINE.match(line):
            skip_caret = True
            continue
        if skip_caret and _CARET.match(line):
            skip_caret = False
            continue
        if line.strip():
            notes.append(line.rstrip())
    return notes


class FormatError(ValueError):
    """The SQL could not be formatted (one line)."""


def format_sql(sql: str) -> str:
    """``sql`` laid out by sqlfmt (the formatter harlequin uses: whitespace and keyword case
    only, comments kept); FormatError when sqlfmt cannot read it."""
    from sqlfmt.api import format_string  # (imported when asked: the screen opens faster)
    from sqlfmt.exception import SqlfmtError
    from sqlfmt.mode import Mode

    try:
        return format_string(sql, Mode(dialect_name="polyglot")).rstrip("\n")
    except SqlfmtError as exc:
        first = str(exc).strip().splitlines()
        raise FormatError(f"cannot format: {first[0] if first else type(exc).__name__}") from exc
