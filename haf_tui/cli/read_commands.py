"""Commands that read the store: ``report``, ``query``, ``runs``, ``export``, ``models``."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from haf_tui import reports
from haf_tui.cli.fit_table import Column, fit_table
from haf_tui.cli.query_stream import ctrl_c_interrupts, print_rows
from haf_tui.config import RunConfig
from haf_tui.defaults import model_search_dirs
from haf_tui.inference.model_catalog import discover_models
from haf_tui.methods.registry import methods, summary_reports_of
from haf_tui.store import (
    QueryInterruptedError,
    StatementInterrupt,
    StoreError,
    TargetExistsError,
    check_target,
)
from haf_tui.store.db import Store
from haf_tui.store.readers import RUN_TABLES, export_run_table, run_stops
from haf_tui.vocabulary import error_line

FORMATS = ("table", "csv", "json", "markdown")
FORMAT_HELP = "table: for the terminal; csv, json or markdown: for other tools"
TRANSPOSED_ROWS = 6
"""A result wider than the terminal with at most this many rows is shown transposed (one
column per row); with more, as one record per row."""
RUN_ID_WIDTH = len("20250101-000000-abcd")
"""A run id's length (``haf_tui.pipeline.runs.new_run_id``): the run column's least width."""


def add_read_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The read-only sub-commands."""
    report = commands.add_parser("report", help="the paper's Tables 1, 2 and 4 for stored runs")
    report.add_argument(
        "--run", action="append", default=[], help="run id (repeatable; default: all runs)"
    )
    report.add_argument(
        "--report",
        action="append",
        choices=sorted(reports.REPORTS),
        metavar="NAME",
        help=f"which report (repeatable): {', '.join(sorted(reports.REPORTS))} (default: "
        "table1, table2, table4)",
    )
    report.add_argument("--format", choices=FORMATS, default="table", help=FORMAT_HELP)

    query = commands.add_parser("query", help="run SQL (read-only) or a named query")
    query.add_argument("sql", nargs="?", help="SQL text")
    query.add_argument("--name", help="a query from queries/ (see --list)")
    query.add_argument("--list", action="store_true", help="list the named queries")
    query.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a named query's parameter (repeatable)",
    )
    query.add_argument("--format", choices=FORMATS, default="table", help=FORMAT_HELP)
    query.add_argument(
        "--allow-read",
        action="append",
        default=[],
        metavar="DIR",
        help="a folder whose files the SQL may read (read_csv, ...); repeatable; default: none",
    )

    commands.add_parser("runs", help="list stored runs")

    export = commands.add_parser("export", help="write a run's tables to Parquet or CSV")
    export.add_argument("run_id", help="the run (an id or its prefix; haf runs lists them)")
    export.add_argument(
        "--format", choices=["parquet", "csv"], default="parquet", help="the files' format"
    )
    export.add_argument("--out", default="exports", help="the folder; RUN_ID/ is made in it")
    export.add_argument(
        "--overwrite", action="store_true", help="replace files an earlier export left there"
    )

    commands.add_parser("models", help="list GGUF files in the model folders")


def _print(
    console: Console, title: str, columns: list[str], rows: list[tuple[Any, ...]], fmt: str
) -> None:
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


def report_command(args: argparse.Namespace, store: Store, console: Console) -> int:
    """Print the chosen reports for the chosen runs."""
    run_ids = [store.get_run(r).run_id for r in args.run]
    asked = args.report or _summary_names(store, run_ids)
    names = dict.fromkeys(n for a in asked for n in (a, *reports.get_report(a).companions))
    failed = 0
    for name in names:
        report = reports.get_report(name)
        try:
            result = report.run(store, {"run_ids": run_ids})
            notes = _run_notes(report, result, store) if args.format == "table" else []
            _print(console, result.title, result.columns, result.rows, args.format)
        except Exception as error:  # a report (a plug-in's) that fails: one line, the rest print
            failed += 1
            Console(stderr=True, soft_wrap=True).print(
                f"[red]error:[/] report {name!r} failed: {escape(error_line(error))}",
                highlight=False,
            )
            continue
        for warning in notes:
            console.print(warning, style="yellow", highlight=False)
    if args.format == "table":
        _print_stops(store, run_ids, console)
        newest = run_ids[-1] if run_ids else next(iter(store.list_runs()), {}).get("run_id")
        if newest:
            suggest_instance(store, newest, console, shown=tuple(names))
    return 2 if failed else 0


def _run_notes(report: reports.Report, result: reports.ReportResult, store: Store) -> list[str]:
    """The report's warning lines about the runs of its rows."""
    if report.run_note is None or "run" not in result.columns:
        return []
    notes = (report.run_note(store, row[result.columns.index("run")]) for row in result.rows)
    return [note for note in notes if note]


def _summary_names(store: Store, run_ids: Sequence[str]) -> list[str]:
    """What ``haf report`` shows by default: the summary reports of the chosen runs' suites
    (every run's when none is chosen), else every summary report."""
    chosen = run_ids or [str(run["run_id"]) for run in store.list_runs()]
    suites = {suite for run_id in chosen for suite in run_suites(store, run_id)}
    return summary_reports_of(tuple(suites)) or [r.name for r in reports.summary_reports()]


def _print_stops(store: Store, run_ids: list[str], console: Console) -> None:
    """Say how many instances stopped after JUSTIFY, and why (undefined metrics follow)."""
    stops = run_stops(store, run_ids)
    if stops.stopped:
        console.print(
            f"{stops.stopped} of {stops.total} instances stopped after JUSTIFY ({stops.reasons}); "
            "their metrics are undefined (haf query --name unclear_rates)."
        )


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
    went_on = sum(1 for r in rows if reports.went_on(r))
    if start is None:
        console.print(
            "no instance gave a clear stance with reasons, so every one stopped after JUSTIFY "
            "(haf query --name unclear_rates says why)"
        )
        return
    first = next(r for r in rows if str(r["instance_id"]) == start)
    console.print(
        f"{went_on} of {len(rows)} instances went on after JUSTIFY. Explore instance "
        f"[bold]{start}[/] ({first['stance']}, {first['n_reasons']} reasons) in the workbench: "
        f"`haf` (`make tui`), then enter on run {run_id}: the explorer opens on it."
    )


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
                lambda names, rows: _print(console, title, names, rows, "table"),
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
    targets = {table: folder / f"{table}.{args.format}" for table in (*RUN_TABLES, "runs")}
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
    console.print(f"wrote {len(RUN_TABLES) + 1} {args.format} files to {folder}")
    return 0


FILE_FOLD_WIDTH = 36
"""A model's file name longer than this may be folded onto more lines to keep the others."""
MODEL_COLUMNS = (
    Column("file", 0, shrink_to=FILE_FOLD_WIDTH, fold=True),
    Column("size", 1, justify="right"),
    Column("arch", 3),
    Column("quant", 2),
    Column("context", 5, justify="right"),
    Column("template", 4),
)
"""``haf models``' columns in display order; a narrow terminal keeps the lowest ranks."""


def _shown_path(path: Path) -> str:
    """A model file as ``--model`` takes it: relative to the working folder when inside it,
    else from ``~`` when inside the home folder, else absolute."""
    for base, prefix in ((Path.cwd(), ""), (Path.home(), "~/")):
        try:
            return prefix + str(path.resolve().relative_to(base.resolve()))
        except ValueError:
            continue
    return str(path)


def models_command(console: Console) -> int:
    """The GGUF models a run can use, as the new-run wizard lists them: the embedded default
    first, then the files in the model folders (metadata only)."""
    rows: list[tuple[str, ...]] = []
    unreadable: list[str] = []
    for entry in discover_models():
        name = entry.label if entry.embedded else _shown_path(entry.path)
        if entry.info is None:
            rows.append((name, "error", "", "", "", ""))
            unreadable.append(f"{name}: {entry.error}")
            continue
        info = entry.info
        rows.append(
            (
                name,
                f"{info.size_bytes / 2**20:.0f} MiB",
                info.architecture,
                info.quantization,
                str(info.context_length or "?"),
                "yes" if info.has_chat_template else "no",
            )
        )
    table, _ = fit_table("GGUF models", MODEL_COLUMNS, rows, console.width)
    console.print(table)
    for line in unreadable:
        console.print(line, style="red", highlight=False)
    folders = ", ".join(_shown_path(folder) for folder in model_search_dirs())
    console.print(
        f"searched: {folders} ($HAF_MODELS_PATH adds folders); --model takes a file's path; the "
        "embedded default runs without --model",
        style="dim",
    )
    return 0
