"""Output formats for (columns, rows) results.

:func:`to_rich_table` for the terminal (floats to 3 decimals, NULL as "—"); :func:`to_csv` and
:func:`to_json` keep every value exactly (floats as their shortest round-trip repr);
:func:`to_markdown` is a pipe table rounded like the terminal; :func:`export` picks one of
:data:`FORMATS` by name.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import math
from collections.abc import Sequence
from decimal import Decimal
from typing import Any, Final

from rich.console import Console
from rich.table import Table
from rich.text import Text

from haf_tui.reports.queries import QueryError, Row

FORMATS: Final = ("table", "csv", "json", "markdown")
"""What :func:`export` writes."""

NULL_TEXT: Final = "—"
"""How the terminal and markdown show NULL (an undefined value)."""


def format_number(value: Any, digits: int = 3) -> str:
    """The one way a metric value is shown: to ``digits`` decimals, an int as it is, and
    "—" when undefined (None or NaN)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return NULL_TEXT
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return f"{value:.{digits}f}"


def format_value(value: Any, digits: int | None = 3) -> str:
    """A cell as text: NULL and NaN as "—", floats to ``digits`` decimals (all of them if
    None)."""
    if value is None:
        return NULL_TEXT
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return NULL_TEXT
        if math.isinf(value):
            return "∞" if value > 0 else "−∞"
        return repr(value) if digits is None else f"{value:.{digits}f}"
    if isinstance(value, Decimal):
        return str(value) if digits is None else f"{value:.{digits}f}"
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ", timespec="seconds")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return "[" + ", ".join(format_value(v, digits) for v in value) + "]"
    if isinstance(value, dict):
        inner = ", ".join(f"{k}: {format_value(v, digits)}" for k, v in value.items())
        return "{" + inner + "}"
    return str(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float | Decimal) and not isinstance(value, bool)


def to_rich_table(
    title: str,
    columns: Sequence[str],
    rows: Sequence[Row],
    *,
    digits: int = 3,
    caption: str | None = None,
) -> Table:
    """A rich table; numeric columns right-aligned; cell text is never read as markup."""
    table = Table(title=title, caption=caption, show_lines=False)
    for index, name in enumerate(columns):
        cells = [row[index] for row in rows if row[index] is not None]
        numeric = bool(cells) and all(_is_number(c) for c in cells)
        table.add_column(Text(name), justify="right" if numeric else "left")
    for row in rows:
        table.add_row(*(Text(format_value(v, digits)) for v in row))
    return table


def table_width(columns: Sequence[str], rows: Sequence[Row], digits: int = 3) -> int:
    """About how many terminal columns :func:`to_rich_table` needs without truncating."""
    widths = [len(name) for name in columns]
    for row in rows:
        for index, value in enumerate(row):
            widths[index] = max(widths[index], len(format_value(value, digits)))
    return sum(widths) + 3 * len(columns) + 1


def to_rich_table_transposed(
    title: str, columns: Sequence[str], rows: Sequence[Row], *, digits: int = 3
) -> Table:
    """One row per column and one column per result row: for wide results on narrow screens."""
    table = Table(title=title, show_lines=False)
    table.add_column(Text("field"), style="bold")
    for number in range(1, len(rows) + 1):
        table.add_column(Text(f"#{number}"), overflow="fold")
    for index, name in enumerate(columns):
        table.add_row(Text(name), *(Text(format_value(row[index], digits)) for row in rows))
    return table


def to_expanded(
    columns: Sequence[str], rows: Sequence[Row], *, digits: int = 3, width: int = 80
) -> str:
    """One block per row, one ``column │ value`` line per field (psql's expanded display):
    wide results on narrow terminals, with long values cut to the line."""
    name_width = max((len(name) for name in columns), default=0)
    value_width = max(width - name_width - 3, 10)
    lines: list[str] = []
    for number, row in enumerate(rows, start=1):
        lines.append(f"-[ RECORD {number} ]".ljust(min(width, 40), "-"))
        for name, value in zip(columns, row, strict=True):
            text = " ".join(format_value(value, digits).split())
            if len(text) > value_width:
                text = text[: value_width - 1] + "…"
            lines.append(f"{name.ljust(name_width)} │ {text}")
    return "\n".join(lines) + ("\n" if lines else "")


def _json_value(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return value
    if isinstance(value, Decimal):
        if value == value.to_integral_value():
            return int(value)
        as_float = float(value)
        return as_float if Decimal(repr(as_float)) == value else str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return [_json_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _json_value(v) for k, v in value.items()}
    return str(value)


def _unique_names(columns: Sequence[str]) -> list[str]:
    seen: dict[str, int] = {}
    names = []
    for name in columns:
        seen[name] = seen.get(name, 0) + 1
        names.append(name if seen[name] == 1 else f"{name}_{seen[name]}")
    return names


def to_records(columns: Sequence[str], rows: Sequence[Row]) -> list[dict[str, Any]]:
    """Rows as JSON-ready objects (NULL and NaN → None, ±inf → "Infinity"/"-Infinity",
    bytes → hex, times → ISO 8601); a repeated column name gets a ``_2`` suffix."""
    names = _unique_names(columns)
    return [{n: _json_value(v) for n, v in zip(names, row, strict=True)} for row in rows]


def to_json(columns: Sequence[str], rows: Sequence[Row], *, indent: int | None = 2) -> str:
    """A JSON list of objects, one per row; floats keep every digit (see :func:`to_records`)."""
    return json.dumps(to_records(columns, rows), ensure_ascii=False, indent=indent, allow_nan=False)


def _csv_value(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, list | tuple | dict):
        return json.dumps(_json_value(value), ensure_ascii=False, allow_nan=False)
    converted = _json_value(value)
    return converted if isinstance(converted, str) else str(converted)


def to_csv(columns: Sequence[str], rows: Sequence[Row], *, header: bool = True) -> str:
    """CSV with a header row (``header=False``: rows only, a result's later batches); NULL is
    empty, floats are their exact repr, lists are JSON."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    if header:
        writer.writerow(columns)
    for row in rows:
        writer.writerow([_csv_value(v) for v in row])
    return buffer.getvalue()


def _markdown_cell(text: str) -> str:
    return (
        text.replace("\\", "\\\\").replace("|", "\\|").replace("\r\n", "\n").replace("\n", "<br>")
    )


def to_markdown(
    columns: Sequence[str], rows: Sequence[Row], *, digits: int | None = 3, header: bool = True
) -> str:
    """A pipe table; numeric columns right-aligned; floats to ``digits`` decimals
    (``header=False``: the rows only, a result's later batches)."""
    names = "| " + " | ".join(_markdown_cell(c) for c in columns) + " |"
    aligns = []
    for index in range(len(columns)):
        cells = [row[index] for row in rows if row[index] is not None]
        aligns.append("---:" if cells and all(_is_number(c) for c in cells) else "---")
    lines = [names, "| " + " | ".join(aligns) + " |"] if header else []
    for row in rows:
        lines.append("| " + " | ".join(_markdown_cell(format_value(v, digits)) for v in row) + " |")
    return "".join(line + "\n" for line in lines)


def export(
    fmt: str, columns: Sequence[str], rows: Sequence[Row], *, title: str = "", width: int = 160
) -> str:
    """``columns``/``rows`` as text in one of :data:`FORMATS` ("table": rich, no colour)."""
    if fmt == "csv":
        return to_csv(columns, rows)
    if fmt == "json":
        return to_json(columns, rows) + "\n"
    if fmt == "markdown":
        return (f"### {title}\n\n" if title else "") + to_markdown(columns, rows)
    if fmt == "table":
        console = Console(
            file=io.StringIO(),
            width=width,
            color_system=None,
            force_terminal=False,
            legacy_windows=False,
        )
        console.print(to_rich_table(title, columns, rows))
        output = console.file
        assert isinstance(output, io.StringIO)
        return output.getvalue()
    raise QueryError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")
