"""The parsers of the commands that read the store (``query``, ``runs``, ``export``,
``models``; ``report``'s is :func:`haf_tui.cli.report_command.add_report_parser`): plain
argparse declarations, so ``haf query --help`` reads no DuckDB and no report (issue 44 §1).
What the commands do is :mod:`haf_tui.cli.read_commands`."""

from __future__ import annotations

import argparse

FORMATS = ("table", "csv", "json", "markdown")
FORMAT_HELP = "table: for the terminal; csv, json or markdown: for other tools"


def add_read_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The read-only sub-commands."""
    from haf_tui.cli.report_command import add_report_parser

    add_report_parser(commands)
    add_query_parser(commands)
    add_runs_parser(commands)
    add_export_parser(commands)
    add_models_parser(commands)


def add_query_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``haf query``'s parser."""
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


def add_runs_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``haf runs``'s parser."""
    commands.add_parser("runs", help="list stored runs")


def add_export_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``haf export``'s parser."""
    export = commands.add_parser("export", help="write a run's tables to Parquet or CSV")
    export.add_argument("run_id", help="the run (an id or its prefix; haf runs lists them)")
    export.add_argument(
        "--format", choices=["parquet", "csv"], default="parquet", help="the files' format"
    )
    export.add_argument("--out", default="exports", help="the folder; RUN_ID/ is made in it")
    export.add_argument(
        "--overwrite", action="store_true", help="replace files an earlier export left there"
    )


def add_models_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``haf models``'s parser."""
    commands.add_parser("models", help="list GGUF files in the model folders")
