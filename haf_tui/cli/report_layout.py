"""How a report's (columns, rows) reach the terminal: one compact table that fits the width
(the columns that matter most: run, its keys, the values; model, dataset and the counts
left out first and named), every column on request, one record per row only as a last
resort; and the legend under it, from the methods' MetricSpecs and the report's terms."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any, Final

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from haf_tui import reports
from haf_tui.reports import POOLED_LABEL, Row, format_value

TRANSPOSED_ROWS: Final = 6
"""A result wider than the terminal with at most this many rows is shown transposed (one
column per row); with more, as one record per row."""
SHORT_VALUES: Final = {POOLED_LABEL: "pooled"}
"""Long cell texts a compact table shortens (its legend says what they mean)."""
RUN_KEYS: Final = ("model", "dataset")
"""Columns naming a run besides ``run``: kept after the values when the width is short."""
LEFT_OUT_NAMED: Final = 6
"""At most this many left-out columns are named; the others are counted."""
LEGEND_WIDTH: Final = 60
"""A metric's meaning in the legend is cut to about this many characters."""


def print_result(
    console: Console, title: str, columns: list[str], rows: list[tuple[Any, ...]], fmt: str
) -> None:
    """Every column of a result: as a table when it fits the terminal, transposed when it
    does not and has few rows, else one record per row; or csv, json, markdown."""
    if fmt == "table":
        too_wide = bool(rows) and reports.table_width(columns, rows) > console.width
        if too_wide and len(rows) <= TRANSPOSED_ROWS:
            console.print(reports.to_rich_table_transposed(title, columns, rows))
        elif too_wide:
            console.print(f"{title}: {len(rows)} rows, one record each (wider than the terminal)")
            console.out(reports.to_expanded(columns, rows, width=console.width), end="")
            console.print("(--format csv, json or markdown for other layouts)", style="dim")
        else:
            console.print(reports.to_rich_table(title, columns, rows))
    elif fmt == "csv":
        console.out(reports.to_csv(columns, rows), end="")
    elif fmt == "json":
        console.out(reports.to_json(columns, rows))
    else:
        console.out(reports.to_markdown(columns, rows))


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float | Decimal) and not isinstance(value, bool)


def column_ranks(columns: Sequence[str], rows: Sequence[Row]) -> list[int]:
    """Each column's rank, lowest kept longest: ``run``, then the text columns before the
    first number (a row's keys: pooling, stage, selection…), then the values in their order,
    then model and dataset, then the counts (whole numbers, ``… n``) and later texts (a
    text after the first fractional value is a detail, not a key)."""
    ranks: list[int] = []
    seen_number = False
    for index, name in enumerate(columns):
        cells = [row[index] for row in rows if row[index] is not None]
        numeric = all(_is_number(c) for c in cells)
        count = numeric and bool(cells) and all(isinstance(c, int) for c in cells)
        if name == "run":
            rank = 0
        elif name in RUN_KEYS:
            rank = 1000 + RUN_KEYS.index(name)
        elif not numeric and not seen_number:
            rank = 1
        elif numeric and not count and name != "n" and not name.endswith(" n"):
            rank = 2 + index
        else:
            rank = 2000 + index
        seen_number = seen_number or (numeric and not count and bool(cells))
        ranks.append(rank)
    return ranks


def small_n(row: Row, value_at: int, kept: Sequence[int], counts: Mapping[int, int]) -> int | None:
    """The n of the row's value at ``value_at`` when it is below :data:`reports.SMALL_N` and its
    n column is not among ``kept`` (then the cell carries it); else None."""
    n_at = counts.get(value_at)
    if n_at is None or n_at in kept or not _is_number(row[value_at]):
        return None
    n = row[n_at]
    return int(n) if isinstance(n, int) and 0 < n < reports.SMALL_N else None


def cell_text(row: Row, at: int, kept: Sequence[int], counts: Mapping[int, int]) -> str:
    """A cell of a compact table: its value, shortened, with ``n=k`` after a mean over fewer
    than :data:`reports.SMALL_N` values whose n column is left out."""
    text = format_value(row[at])
    n = small_n(row, at, kept, counts)
    return f"{SHORT_VALUES.get(text, text)}{'' if n is None else f' {SMALL_N_MARK}{n}'}"


SMALL_N_MARK: Final = "n="
"""Put before the n a compact cell carries (``0.512 n=1``)."""
SMALL_N_LEGEND: Final = (
    f"{SMALL_N_MARK}k after a value: a mean over only k (< {reports.SMALL_N}) values, "
    "its n column not shown at this width"
)


def _compact(
    columns: Sequence[str], rows: Sequence[Row], kept: list[int], counts: Mapping[int, int]
) -> Table:
    table = Table(
        box=box.SIMPLE_HEAD,
        show_edge=False,
        padding=(0, 1, 0, 0),
    )
    for k in kept:
        numeric = all(_is_number(row[k]) for row in rows if row[k] is not None)
        table.add_column(Text(columns[k]), justify="right" if numeric else "left", no_wrap=True)
    for row in rows:
        table.add_row(*(Text(cell_text(row, k, kept, counts)) for k in kept))
    return table


def compact_table(
    title: str,
    columns: Sequence[str],
    rows: Sequence[Row],
    console: Console,
    counts: Sequence[tuple[str, str]] = (),
) -> tuple[Table, list[str]] | None:
    """The most important columns that fit ``console``'s width as one compact table, and the
    names of those left out; None when not even ``run``, the keys and one value fit. The
    title is not in the table: print it on its own line (it may be wider). A value whose n
    column is left out carries its n when below :data:`reports.SMALL_N` (``counts``: the
    report's declared value → n columns, :func:`reports.count_columns`)."""
    ranks = column_ranks(columns, rows)
    kept = sorted(range(len(columns)), key=lambda k: ranks[k])
    least = sum(1 for r in ranks if r < 2) + 1  # (run, the keys and one value)
    unbounded = console.options.update_width(10_000)
    n_of = reports.count_columns(columns, counts)
    while len(kept) >= min(least, len(columns)):
        table = _compact(columns, rows, sorted(kept), n_of)
        if Measurement.get(console, unbounded, table).maximum <= console.width:
            return table, [columns[k] for k in range(len(columns)) if k not in kept]
        kept.pop()
    return None


def carries_small_n(
    columns: Sequence[str],
    rows: Sequence[Row],
    left_out: Sequence[str],
    counts: Sequence[tuple[str, str]] = (),
) -> bool:
    """Whether a compact table that leaves out ``left_out`` has a cell carrying its n."""
    n_of = reports.count_columns(columns, counts)
    kept = [k for k, name in enumerate(columns) if name not in left_out]
    return any(small_n(row, k, kept, n_of) is not None for row in rows for k in kept)


def left_out_line(left_out: Sequence[str]) -> str:
    """``(not shown at this width: …; --columns all …)``, the counts summed up as one."""
    counts = [name for name in left_out if name.endswith(" n")]
    named = [name for name in left_out if not name.endswith(" n")]
    if len(named) > LEFT_OUT_NAMED:
        named[LEFT_OUT_NAMED:] = [f"{len(named) - LEFT_OUT_NAMED} more"]
    if counts:
        named.append(f"{len(counts)} n column{'s' if len(counts) > 1 else ''}")
    return (
        f"(not shown at this width: {', '.join(named)}; --columns all shows every column, "
        "--format csv every digit)"
    )


def _short(definition: str) -> str:
    """A metric's meaning up to its first ``:``, ``;`` or parenthesis, cut to
    :data:`LEGEND_WIDTH`."""
    for mark in (":", ";", " ("):
        definition = definition.split(mark)[0]
    definition = definition.strip()
    return definition if len(definition) <= LEGEND_WIDTH else definition[: LEGEND_WIDTH - 1] + "…"


def legend_lines(
    columns: Sequence[str],
    rows: Sequence[Row],
    specs: Mapping[str, tuple[str, str]],
    terms: Sequence[tuple[str, str]],
) -> list[str]:
    """The legend of a table showing ``columns`` and ``rows``: each metric column's direction
    and meaning (``specs``: label → (arrow, definition), from the MetricSpecs), then each of
    the report's ``terms`` that a column or a cell shows."""
    lines: list[str] = []
    metrics = [name for name in dict.fromkeys(columns) if name in specs]
    if metrics:
        parts = [f"{name} {specs[name][0]} {_short(specs[name][1])}" for name in metrics]
        arrows = {specs[name][0] for name in metrics} - {""}
        head = "↑ higher is better, ↓ lower. " if arrows else ""
        lines.append(head + " · ".join(" ".join(part.split()) for part in parts))
    cells = {format_value(value) for row in rows for value in row if isinstance(value, str)}
    for term, meaning in terms:
        shown = term in cells or any(c == term or c.endswith(f" {term}") for c in columns)
        if shown:
            lines.append(f"{SHORT_VALUES.get(term, term)}: {meaning}")
    return lines
