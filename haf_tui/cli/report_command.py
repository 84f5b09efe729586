"""``haf report``: each suite's reports over the runs that hold that suite (a run without it
is named once under its tables, never drawn as a row of "—"), one compact table each with a
legend; ``--format html|latex|markdown-file`` writes the campaign report's files for the
chosen runs (one run: a one-cell campaign) into ``--out``."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from rich.console import Console
from rich.markup import escape

from haf_tui import reports
from haf_tui.cli.report_layout import (
    SMALL_N_LEGEND,
    carries_small_n,
    compact_table,
    left_out_line,
    legend_lines,
    print_result,
)
from haf_tui.vocabulary import HafError, error_line

if TYPE_CHECKING:
    from haf_tui.store.db import Store

PRINTED: Final = ("table", "csv", "json", "markdown")
"""Formats printed to the terminal."""
WRITTEN: Final = ("html", "latex")
"""Formats written as files into ``--out`` (the campaign report's)."""
_HAF: Final = "haf"


class ReportCommandError(HafError):
    """``haf report`` cannot do what it was asked (one line)."""


def add_report_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``haf report``'s parser."""
    report = commands.add_parser(
        "report", help="each suite's tables for stored runs (HAF: the paper's Tables 1, 2, 4)"
    )
    report.add_argument(
        "--run", action="append", default=[], help="run id (repeatable; default: all runs)"
    )
    report.add_argument(
        "--report",
        action="append",
        choices=sorted(reports.REPORTS),
        metavar="NAME",
        help=f"which report (repeatable): {', '.join(sorted(reports.REPORTS))} (default: "
        "each suite's summary: HAF's table1, table2, table4; the first report of the others)",
    )
    report.add_argument(
        "--format",
        choices=(*PRINTED, *WRITTEN),
        default="table",
        help="table: for the terminal; csv, json (several reports: one object by report name) "
        "or markdown: for other tools; html (one "
        "self-contained file) or latex: the campaign report's files for the runs, into --out",
    )
    report.add_argument(
        "--columns",
        choices=("fit", "all"),
        default="fit",
        help="fit: the columns that fit the terminal, the others named; all: every column "
        "(wider than the terminal: one record per row)",
    )
    report.add_argument(
        "--out", metavar="FOLDER", help="the folder --format html or latex writes into"
    )
    report.add_argument("--force", action="store_true", help="write over files already there")


def _owners() -> dict[str, str]:
    """Each method's report by name → the method (suite) it belongs to."""
    from haf_tui.methods.registry import methods

    return {report.name: name for name, method in methods().items() for report in method.reports}


def _specs(owner: str | None = None) -> dict[str, tuple[str, str]]:
    """Metric label → (direction arrow, definition): the method ``owner``'s alone (a label
    means what its own method says: classify's "gold" is no rationales' "gold"), or every
    method's for haf's own reports."""
    from haf_tui.methods.registry import methods

    found: dict[str, tuple[str, str]] = {}
    for name, method in methods().items():
        if owner is None or name == owner:
            for spec in method.metrics:
                found.setdefault(spec.label, (spec.arrow, spec.definition))
    return found


def default_reports(suites: Sequence[str]) -> list[str]:
    """What ``haf report`` shows for runs holding ``suites``: each method's summary reports,
    or the first it suggests when it has none; every summary report when none applies."""
    from haf_tui.methods.registry import methods

    shown: list[str] = []
    for name, method in methods().items():
        if name in suites:
            named = method.summary_reports or method.suggested_reports[:1]
            shown.extend(r for r in named if r not in shown)
    return shown or [r.name for r in reports.summary_reports()]


def report_command(args: argparse.Namespace, store: Store, console: Console) -> int:
    """Print (or write) the chosen reports for the chosen runs."""
    from haf_tui.store.comparison_readers import run_suites

    chosen = [store.get_run(r).run_id for r in args.run]
    every = chosen or [str(run["run_id"]) for run in reversed(store.list_runs())]
    suites = run_suites(store, every)
    if args.format in WRITTEN:
        return _write(args, store, console, every)
    names = args.report or default_reports(sorted({s for r in every for s in suites[r]}))
    names = list(dict.fromkeys(n for a in names for n in (a, *reports.get_report(a).companions)))
    owners = _owners()
    shown = _shown_reports(names, every, suites, owners)
    if args.format == "json" and len(names) > 1:
        return _json_document(store, console, shown)
    last_of = {owners.get(n, ""): n for n in names}  # (the suite's note after its last table)
    failed = 0
    for name in names:
        suite = owners.get(name)
        if name in shown:
            failed += _one_report(args, store, console, name, shown[name], suite)
        if suite is not None and last_of[suite] == name and args.format == "table":
            _lacking_line(console, suite, [r for r in every if suite not in suites[r]])
    if args.format == "table" and not every:
        console.print(f"no runs in {store.path} yet: haf run --demo stores one")
    elif args.format == "table":
        _closing(store, console, every, suites, names)
    return 2 if failed else 0


def _shown_reports(
    names: list[str],
    every: list[str],
    suites: dict[str, tuple[str, ...]],
    owners: dict[str, str],
) -> dict[str, list[str]]:
    """The reports of ``names`` to show, each with its runs: those of ``every`` that hold its
    method's suite (haf's own reports: all); one no run holds is left out (no run stored at
    all: each is shown, empty, under its title)."""
    shown: dict[str, list[str]] = {}
    for name in names:
        suite = owners.get(name)
        runs = every if suite is None else [r for r in every if suite in suites[r]]
        if runs or not every:
            shown[name] = runs
    return shown


def _json_document(store: Store, console: Console, shown: dict[str, list[str]]) -> int:
    """Several reports as one JSON document (a JSON reader takes one): an object of each
    report's rows by the report's name, in the order asked; 2 when one failed (one line)."""
    document: dict[str, list[dict[str, Any]]] = {}
    failed = 0
    for name, runs in shown.items():
        try:
            result = reports.get_report(name).run(store, {"run_ids": runs})
        except Exception as error:  # a report (a plug-in's) that fails: one line, the rest print
            _failed_line(name, error)
            failed += 1
            continue
        document[name] = reports.to_records(result.columns, result.rows)
    console.out(json.dumps(document, ensure_ascii=False, indent=2, allow_nan=False))
    return 2 if failed else 0


def _failed_line(name: str, error: Exception) -> None:
    Console(stderr=True, soft_wrap=True).print(
        f"[red]error:[/] report {name!r} failed: {escape(error_line(error))}", highlight=False
    )


def _one_report(
    args: argparse.Namespace,
    store: Store,
    console: Console,
    name: str,
    runs: list[str],
    owner: str | None,
) -> int:
    """Print one report over ``runs`` (``owner``: the method whose report it is, None: haf's
    own); 1 when it failed (one line said why), else 0."""
    report = reports.get_report(name)
    try:
        result = report.run(store, {"run_ids": runs})
        notes = _run_notes(report, result, store) if args.format == "table" else []
        if args.format != "table" or args.columns == "all":
            print_result(console, result.title, result.columns, result.rows, args.format)
            shown_columns = result.columns
        else:
            shown_columns = _print_compact(console, result, report.counts)
    except Exception as error:  # a report (a plug-in's) that fails: one line, the rest print
        _failed_line(name, error)
        return 1
    if args.format == "table":
        legend = legend_lines(shown_columns, result.rows, _specs(owner), report.terms)
        left_out = [c for c in result.columns if c not in shown_columns]
        if carries_small_n(result.columns, result.rows, left_out, report.counts):
            legend.append(SMALL_N_LEGEND)
        for line in legend:
            console.print(line, style="dim", highlight=False)
        for warning in notes:
            console.print(warning, style="yellow", highlight=False)
    return 0


def _print_compact(
    console: Console, result: reports.ReportResult, counts: Sequence[tuple[str, str]]
) -> list[str]:
    """The report as one compact table that fits; records only when not even that fits.
    Returns the columns shown."""
    fitted = compact_table(result.title, result.columns, result.rows, console, counts)
    if fitted is None:
        print_result(console, result.title, result.columns, result.rows, "table")
        return result.columns
    table, left_out = fitted
    console.print(result.title, style="bold", highlight=False)
    console.print(table)
    if left_out and result.rows:
        console.print(left_out_line(left_out), style="dim", highlight=False)
    return [c for c in result.columns if c not in left_out]


def _run_notes(report: reports.Report, result: reports.ReportResult, store: Store) -> list[str]:
    """The report's warning lines about the runs of its rows."""
    if report.run_note is None or "run" not in result.columns:
        return []
    notes = (report.run_note(store, row[result.columns.index("run")]) for row in result.rows)
    return [note for note in notes if note]


def _lacking_line(console: Console, suite: str, lacking: list[str]) -> None:
    """Name once the runs without ``suite`` that its tables leave out."""
    if not lacking:
        return
    from haf_tui.methods.registry import methods

    title = methods()[suite].title
    shown = ", ".join(lacking[:6]) + (f" and {len(lacking) - 6} more" if len(lacking) > 6 else "")
    many = len(lacking) > 1
    console.print(
        f"{len(lacking)} run{'s' if many else ''} {'have' if many else 'has'} no {title} "
        f"stages: {shown} (haf report --run RUN shows a run's own suites)",
        highlight=False,
    )


def _closing(
    store: Store,
    console: Console,
    every: list[str],
    suites: dict[str, tuple[str, ...]],
    shown: Sequence[str],
) -> None:
    """The closing lines: HAF's runs' stops after JUSTIFY and an instance of the newest of
    them to explore; without HAF, what the newest run offers."""
    from haf_tui.cli.read_commands import suggest_instance
    from haf_tui.store.readers import run_stops

    with_haf = [r for r in every if _HAF in suites[r]]
    if with_haf:
        stops = run_stops(store, with_haf)
        if stops.stopped:
            console.print(
                f"{stops.stopped} of {stops.total} instances stopped after JUSTIFY "
                f"({stops.reasons}); their metrics are undefined "
                "(haf query --name unclear_rates)."
            )
    newest = with_haf[-1] if with_haf else (every[-1] if every else None)
    if newest is not None:
        suggest_instance(store, newest, console, shown=tuple(shown))


def _write(args: argparse.Namespace, store: Store, console: Console, runs: list[str]) -> int:
    """Write the campaign report's ``--format`` files for ``runs`` (each a cell) into
    ``--out``."""
    from haf_tui.campaign.report import write_campaign_report  # (matplotlib, scipy: on demand)

    if args.report:
        raise ReportCommandError(
            f"--format {args.format} writes every table of the runs' suites: leave out --report"
        )
    if not args.out or not args.out.strip():
        raise ReportCommandError(f"--format {args.format} writes files: give --out FOLDER")
    if not runs:
        raise ReportCommandError("no runs stored: nothing to report")
    cells = _cells(store, runs)
    title = runs[0] if len(runs) == 1 else f"{len(runs)} runs"
    written = write_campaign_report(
        store, title, cells, [args.format], Path(args.out), force=args.force, kind="Run report"
    )
    for path in written:
        console.print(str(path), highlight=False, soft_wrap=True)
    return 0


def _cells(store: Store, runs: list[str]) -> list[tuple[str, str, str]]:
    """Each run as a campaign cell (model, dataset, run); a model × dataset that two runs
    share names its run in the model's label."""
    records: list[Any] = [store.get_run(r) for r in runs]
    labels = [(Path(r.model_file).name.removesuffix(".gguf"), r.dataset_id) for r in records]
    return [
        (f"{model} ({run.run_id})" if labels.count((model, dataset)) > 1 else model, dataset,
         run.run_id)
        for (model, dataset), run in zip(labels, records, strict=True)
    ]  # fmt: skip
