"""The rebuilding behind tests/queries/test_report_cells.py: each declared cell of a report
(:class:`haf_tui.reports.Averaged`) from the stored per-instance rows, read with plain
SELECTs (no aggregate, no join) and aggregated here in Python, so it shares no SQL with the
report it checks."""

from __future__ import annotations

import math
import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Mapping
from typing import Any

from haf_tui import reports
from haf_tui.store import Store

TABLES = ("instance_metrics", "reason_metrics", "rationales", "generations", "instance_results")
"""The stored tables a declaration may read."""
_CELL = re.compile(r"\{(.+)\}")

Cell = Mapping[str, Any]
StoredRow = tuple[str, int, float | None]
"""(instance, seed, value) of one stored row."""


def row_value(value: str, cell: Cell) -> Any:
    """``value``, or the report row's value of column COLUMN for ``{COLUMN}``."""
    found = _CELL.fullmatch(value)
    return cell[found.group(1)] if found else value


GOLD = {"toxic": "toxic", "hatespeech": "toxic", "offensive": "toxic", "non-toxic": "non-toxic",
        "normal": "non-toxic"}  # fmt: skip
"""A stored instance label → its gold class (others: no gold)."""


def instance_keys(store: Store, run_id: str, low: float, high: float) -> dict[str, dict[str, Any]]:
    """Each instance of a run's dataset → its keys: its id, its gold class (:data:`GOLD`), and
    once finished its stance and the band of its JUSTIFY decision confidence (figure2's edges
    ``low``, ``high``; undefined without one)."""
    _, labels = store.query(
        "SELECT instance_id, label FROM instances WHERE dataset_id = "
        "(SELECT dataset_id FROM runs WHERE run_id = ?)",
        [run_id],
    )
    _, finished = store.query(
        "SELECT instance_id, stance FROM instance_results WHERE run_id = ?", [run_id]
    )
    _, confidences = store.query(
        "SELECT instance_id, decision_confidence FROM generations "
        "WHERE run_id = ? AND stage = 'justify' AND sub_index = -1",
        [run_id],
    )
    confidence, stances = dict(confidences), dict(finished)
    keys: dict[str, dict[str, Any]] = {}
    for instance, label in labels:
        c = confidence.get(instance)
        if instance not in stances:
            band = None
        elif c is None or math.isnan(c):
            band = "undefined"
        else:
            band = "low" if c < low else "medium" if c < high else "high"
        keys[str(instance)] = {
            "instance": instance if instance in stances else None,
            "gold": GOLD.get(str(label)),
            "stance": stances.get(instance),
            "band": band,
        }
    return keys


def stored_rows(store: Store, report: reports.Report, averaged: reports.Averaged, cell: Cell,
                run_id: str) -> list[StoredRow]:  # fmt: skip
    """The stored rows a cell of ``averaged`` aggregates, each value made what is aggregated."""
    assert averaged.table in TABLES, averaged.table
    key = str(cell[averaged.by]) if averaged.by else ""
    source = dict(averaged.sources).get(key, "")
    conditions, params = ["run_id = ?"], [run_id]
    if averaged.table.endswith("_metrics"):
        value = "value"
        conditions.append("metric = ?")
        params.append(averaged.stored.replace("{source}", source))
    else:
        assert averaged.stored.isidentifier(), averaged.stored
        value = averaged.stored
    rationale = averaged.table == "rationales"
    if rationale and averaged.by:
        conditions.append("source = ?")
        params.append(source)
    if rationale and averaged.with_gold:
        conditions.append("gold_size > 0")
    if rationale and averaged.seeds == "first":
        conditions.append("seed = 0")
    for column in averaged.defined_in:
        assert column.isidentifier(), column
        conditions.append(f"{column} IS NOT NULL")
    for column, wanted in averaged.where:
        assert column.isidentifier(), column
        given = None if wanted is None else row_value(wanted, cell)
        conditions.append(f"{column} IS NULL" if given is None else f"{column} = ?")
        params += [] if given is None else [given]
    seed = "seed" if rationale else "0"
    reason = "reason_index" if averaged.table == "reason_metrics" else "0"
    _, rows = store.query(
        f"SELECT instance_id, {seed}, {reason}, {value} FROM {averaged.table} "
        f"WHERE {' AND '.join(conditions)}",
        params,
    )
    if averaged.tested_by:
        _, tested = store.query(
            "SELECT instance_id, sub_index FROM generations "
            "WHERE run_id = ? AND stage = 'individual' AND test = ?",
            [run_id, averaged.tested_by],
        )
        rows = [row for row in rows if (row[0], row[2]) in set(tested)]
    if averaged.group or averaged.agrees_with:
        query = reports.get_query(report.query)
        edges = [query.param(name).default for name in ("low_edge", "high_edge")] if any(
            k == "band" for _, k in averaged.group
        ) else [0.0, 0.0]  # fmt: skip
        keys = instance_keys(store, run_id, *edges)
        rows = [
            row
            for row in rows
            if row[0] in keys
            and all(keys[row[0]][k] == cell[column] for column, k in averaged.group)
        ]
    if averaged.agrees_with:  # (ŷ toxic 1 or 0 against the instance's class, where it has one)
        classes = {str(i): k[averaged.agrees_with] for i, k in keys.items()}
        rows = [
            (i, s, r, None if v is None else float((v == 1) == (classes[i] == "toxic")))
            for i, s, r, v in rows
            if classes.get(i) in ("toxic", "non-toxic")
        ]
    if averaged.kind in (
        "count",
        "seeds",
    ):  # (rows, whatever they hold; with share_of: those equal)
        counted = [row for row in rows if not averaged.share_of or made(averaged, row[3], cell)]
        return [(str(i), int(s), None) for i, s, _, _ in counted]
    return [(str(i), int(s), made(averaged, raw, cell)) for i, s, _, raw in rows]


def made(averaged: reports.Averaged, raw: Any, cell: Cell) -> float | None:
    """A stored value as aggregated: None (undefined, NaN, left out), a 0/1 share, or itself."""
    if averaged.share_of:  # (a NULL is not the value: 0)
        wanted = str(row_value(averaged.share_of, cell))
        if averaged.any_case:
            return 1.0 if str(raw).upper() == wanted.upper() else 0.0
        return 1.0 if str(raw) == wanted else 0.0
    if raw is None:
        return None
    number = float(raw)
    if math.isnan(number) or number in averaged.left_out:
        return None
    if averaged.absolute:
        number = abs(number)
    if averaged.below is not None:
        return 1.0 if number < averaged.below else 0.0
    return number


def aggregate(averaged: reports.Averaged, rows: list[StoredRow]) -> tuple[float | None, int]:
    """A cell's value and its n from its stored rows, by the declared kind."""
    if averaged.kind == "seeds":
        seeds = len({seed for _, seed, _ in rows})
        return float(seeds), seeds
    if averaged.kind == "count":
        per_seed = Counter(seed for _, seed, _ in rows)
        counted = max(per_seed.values(), default=0) if averaged.seeds == "each" else len(rows)
        return float(counted), counted
    defined = [(instance, seed, value) for instance, seed, value in rows if value is not None]
    groups: dict[Any, list[float]] = defaultdict(list)
    for instance, seed, value in defined:
        groups[instance if averaged.per_instance else seed].append(value)
    means = [sum(values) / len(values) for values in groups.values()]
    if averaged.per_instance:
        n = len(means)
    elif averaged.seeds == "each":
        n = max((len(values) for values in groups.values()), default=0)
    else:
        means, n = [value for _, _, value in defined], len(defined)
    if averaged.kind == "max":
        result = max(means, default=None)
    elif averaged.kind == "sd":
        result = statistics.stdev(means) if len(means) > 1 else None
    else:
        assert averaged.kind == "mean", averaged.kind
        result = sum(means) / len(means) if means else None
    return (None if result is None else averaged.scale * result + averaged.offset), n


def rebuilt_cells(store: Store, name: str) -> tuple[int, list[str], set[tuple[int, str]]]:
    """Check every declared cell of report ``name``: (cells checked, what did not match,
    the (row, column) pairs checked, n columns included)."""
    report = reports.get_report(name)
    result = report.run(store, {"run_ids": []})
    columns = result.columns
    n_of = reports.count_columns(columns, report.counts)
    checked, wrong, covered = 0, [], set()
    for at_row, row in enumerate(result.rows):
        cell = dict(zip(columns, row, strict=True))
        for averaged in report.averages:
            if any(str(cell[column]) != value for column, value in averaged.rows):
                continue
            key = str(cell[averaged.by]) if averaged.by else ""
            at = columns.index(averaged.column)
            shown, n_at = row[at], n_of.get(at)
            run_id = str(cell[averaged.run_from])
            where = f"{name} · row {at_row} · {run_id} · {key or '-'} · {averaged.column}"
            checked += 1
            covered.add((at_row, averaged.column))
            if averaged.by and key not in dict(averaged.sources):
                if shown is not None:  # (a row this aggregate does not belong to)
                    wrong.append(f"{where}: {shown!r} where no such value is")
                continue
            want, n = aggregate(averaged, stored_rows(store, report, averaged, cell, run_id))
            if want is None and shown is not None:
                wrong.append(f"{where}: {shown!r}, none stored")
            elif want is not None and (shown is None or abs(float(shown) - want) > 1e-9):
                wrong.append(f"{where}: {shown!r}, the stored rows give {want!r}")
            if n_at is not None:
                covered.add((at_row, columns[n_at]))
                if (row[n_at] or 0) != n:
                    wrong.append(f"{where}: n {row[n_at]!r}, the stored rows give {n}")
    return checked, wrong, covered
