"""Commands that read the store: ``report``, ``query``, ``runs``, ``export``, ``models`` (their
parsers: :mod:`haf_tui.cli.read_parsers`)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from haf_tui import reports
from haf_tui.cli.fit_table import Column, fit_table
from haf_tui.cli.query_stream import ctrl_c_interrupts, print_rows
from haf_tui.cli.report_layout import print_result
from haf_tui.config import RunConfig
from haf_tui.methods.registry import methods
from haf_tui.store import (
    QueryInterruptedError,
    StatementInterrupt,
    StoreError,
    TargetExistsError,
    check_target,
)
from haf_tui.store.db import Store
from haf_tui.store.readers import export_run_table, export_tables

RUN_ID_WIDTH = len("20250101-000000-abcd")
"""A run id's length (``haf_tui.pipeline.runs.new_run_id``): the run column's least width."""


def run_suites(store: Store, run_id: str) -> tuple[str, ...]:
    """The suites a run was asked to run (its config; HAF for a run stored before suites)."""
    return RunConfig.model_validate_json(store.get_run(run_id).config_json).suites


def _suite_reports(suites: Sequence[str], run_id: str, shown: Sequence[str] = ()) -> str:
    """``haf report`` commands for the numbers of the run's suites (each method's suggested
    reports), but the reports just ``shown`` ("" when there are none)."""
    parts = []
    for name, method in methods().items():
        named = [r for r in method.suggested_reports if r not in shown]
        if name not in suites or not named:
            continue
        first, *details = named
        details_text = f" (details: --report {', '.join(details)})" if details else ""
        parts.append(f"haf report --run {run_id} --report {first}{details_text}")
    return " or ".join(parts)


def suggest_instance(
    store: Store, run_id: str, console: Console, *, shown: Sequence[str] = ()
) -> None:
    """Name an instance whose stance/reason tree has reasons, to open in the workbench (a run
    without HAF: the reports that show its suites' numbers, but those just ``shown``)."""
    rows = reports.instance_rows(store, run_id)
    suites = run_suites(store, run_id)
    if rows and all(r.get("stance") is None for r in rows):  # a run without the HAF suite
        said = _suite_reports(suites, run_id, shown)
        console.print(
            f"the run holds no HAF suite: {f'{said}, or ' if said else ''}"
            f"`haf` (`make tui`), then enter on run {run_id} to see each instance"
        )
        return
    others = _suite_reports(suites, run_id, shown)
    if others:
        console.print(f"its other suites' numbers: {others}")
    start = reports.first_with_reasons(rows)
    if start is None:
        console.print(
            "no instance gave a clear stance with reasons, so every one stopped after JUSTIFY "
            "(haf query --name unclear_rates says why)"
        )
        return
    first = next(r for r in rows if str(r["instance_id"]) == start)
    console.print(
        f"{reports.went_on_said(rows)} Explore instance "
        f"[bold]{start}[/] ({first['stance']}, {first['n_reasons']} reasons) in the workbench: "
        f"`haf` (`make tui`), then enter on run {run_id}: the explorer opens on it."
    )
    console.print(f"{reports.rests_on(rows)} (haf report --run {run_id} gives each its n)")


def _parse_params(pairs: list[str]) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise ValueError(f"--param {pair!r}: use KEY=VALUE")
        params[key.strip()] = value
    return params


def query_command(args: argparse.Namespace, store: Store, console: Console) -> int:
    """Run SQL text or a named query, read-only."""
    if args.list:
        table = Table("name", "title", "params")
        for query in reports.load_queries().values():
            table.add_row(query.name, query.title, ", ".join(query.params))
        console.print(table)
        return 0
    if args.name:
        named = reports.get_query(args.name)
        sql, title = named.sql, named.title
        values = reports.resolve_params(store, named, _parse_params(args.param))
    elif args.sql:
        sql, title, values = args.sql, "query", {}
    else:
        raise ValueError("give SQL text or --name NAME (haf query --list shows the names)")
    interrupt = StatementInterrupt()
    try:
        with (
            ctrl_c_interrupts(interrupt),
            store.stream_user(sql, values or None, interrupt=interrupt) as (columns, batches),
        ):
            print_rows(
                console,
                columns,
                batches,
                args.format,
                lambda names, rows: print_result(console, title, names, rows, "table"),
            )
    except QueryInterruptedError:
        Console(stderr=True).print("query interrupted", highlight=False)
        return 130
    except StoreError as exc:
        if args.name:  # (as reports.run_query says it)
            raise reports.QueryError(f"query {args.name!r}: {exc}") from exc
        raise
    return 0


RUN_COLUMNS = (
    Column("run", 0, shrink_to=RUN_ID_WIDTH),
    Column("status", 1),
    Column("suites", 2, shrink_to=12),
    Column("created", 6),
    Column("model", 4, shrink_to=12),
    Column("dataset", 5, shrink_to=10),
    Column("done", 3, justify="right"),
    Column("gens", 7, justify="right"),
    Column("similarity", 8, shrink_to=10),
)
"""``haf runs``' columns in display order; a narrow terminal keeps the lowest ranks."""


def runs_command(store: Store, console: Console) -> int:
    """List stored runs, newest first: one line each, as many columns as fit."""
    from haf_tui.store.readers import stored_suites, suites_text

    rows = [
        (
            " ".join(
                part
                for part in (run["run_id"], run["label"], *(f"#{t}" for t in run["tags"] or ()))
                if part
            ),
            run["status"],
            suites_text(stored_suites(run["suites"])),
            f"{run['created_at']:%Y-%m-%d %H:%M}",
            Path(run["model_file"]).name.removesuffix(".gguf"),
            run["dataset_id"],
            f"{run['n_done']}/{run['n_planned']}",
            str(run["n_generations"]),
            run["similarity_model"],
        )
        for run in store.list_runs()
    ]
    table, left_out = fit_table("runs", RUN_COLUMNS, rows, console.width)
    console.print(table)
    if rows and left_out:
        console.print(
            f"(not shown at this width: {', '.join(left_out)}; haf query --format csv "
            '"SELECT * FROM runs" has every field)',
            style="dim",
        )
    return 0


def export_command(args: argparse.Namespace, store: Store, console: Console) -> int:
    """Write every table of one run into ``--out/RUN_ID/``."""
    run_id = store.get_run(args.run_id).run_id
    folder = Path(args.out) / run_id
    tables = (*export_tables(store), "runs")
    targets = {table: folder / f"{table}.{args.format}" for table in tables}
    if folder.exists() and not folder.is_dir():
        raise StoreError(f"{folder} is a file, not a folder: pass another --out")
    existing = []
    for target in targets.values():  # (all checked before any is written)
        try:
            check_target(target, [store.path, store.file], overwrite=args.overwrite)
        except TargetExistsError:
            existing.append(target.name)
    if existing:
        more = f" and {len(existing) - 1} more" if len(existing) > 1 else ""
        raise StoreError(
            f"{folder} already holds {existing[0]}{more}: pass --overwrite to replace them"
        )
    folder.mkdir(parents=True, exist_ok=True)
    for table, target in targets.items():
        export_run_table(store, table, run_id, target, args.format, overwrite=args.overwrite)
    console.print(f"wrote {len(tables)} {args.format} files to {folder}")
    return 0
