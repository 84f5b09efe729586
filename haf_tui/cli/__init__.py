"""The ``haf`` command line: ``run``, ``campaign``, ``report``, ``query``, ``runs``, ``export``,
``models``, ``datasets``, ``serve``;
``haf`` alone opens the Textual workbench.

Every error is one line on stderr and a non-zero exit status; read commands open the
database read-only (``--snapshot`` reads a copy while another process writes to it).
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape

from haf_tui import __version__
from haf_tui.cli.campaign_parser import add_campaign_parser
from haf_tui.cli.dataset_parser import add_datasets_parser
from haf_tui.cli.help_format import OneLineErrorParser, use_haf_help
from haf_tui.cli.read_commands import add_read_parsers
from haf_tui.cli.rescore_parser import add_rescore_parser
from haf_tui.cli.run_command import add_run_parser
from haf_tui.cli.serve_command import add_serve_parser
from haf_tui.cli.settings_options import REFUSED_FLAGS
from haf_tui.methods.loader import ensure_methods
from haf_tui.methods.registry import left_out, methods
from haf_tui.store.errors import StoppedWaitingError
from haf_tui.vocabulary import HafError, error_line, first_line, shown_text

if TYPE_CHECKING:
    from haf_tui.methods.declare import MethodCommand

# What a command does is imported when it runs (_dispatch), not here: the parser is built from
# light modules, so ``haf --help`` reads no scipy, duckdb or model library (issue 34 §8;
# tests/test_cli_imports.py).

READ_COMMANDS = ("report", "query", "runs", "export")
WRITE_COMMANDS = ("run", "import", "models", "rescore")
"""Sub-commands that write (or read no database): no ``--snapshot`` after them."""
NO_DATABASE_COMMANDS = ("serve",)
"""Sub-commands that open no database: no ``--db`` after them."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``haf``."""
    parser: argparse.ArgumentParser = OneLineErrorParser(
        prog="haf", description="Human-Aligned Faithfulness workbench"
    )
    parser.add_argument("--version", action="version", version=f"haf-tui {__version__}")
    parser.add_argument("--db", help="the DuckDB file (default: $HAF_DB or $HAF_HOME/haf.duckdb)")
    parser.add_argument(
        "--snapshot",
        action="store_true",
        help="read a copy of the database (while another process writes to it)",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    add_run_parser(commands)
    add_campaign_parser(commands)
    add_rescore_parser(commands)
    add_read_parsers(commands)
    add_datasets_parser(commands)
    for command in method_commands().values():
        try:
            command.add_parser(commands)
        except Exception as error:  # a plug-in's own command: one line, the rest works
            REFUSED_FLAGS.append(f"the command {command.name!r} is left out: {error_line(error)}")
    add_serve_parser(commands)
    for name, sub in _all_subparsers(commands):
        if name in NO_DATABASE_COMMANDS:
            continue
        _add_database_options(sub, snapshot=name not in WRITE_COMMANDS)
    use_haf_help(parser)
    return parser


def _all_subparsers(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
) -> list[tuple[str, argparse.ArgumentParser]]:
    """Every sub-command's parser by name, nested ones (``import`` of ``datasets``) included."""
    found: list[tuple[str, argparse.ArgumentParser]] = []
    for name, sub in commands.choices.items():
        nested = [a for a in sub._actions if isinstance(a, argparse._SubParsersAction)]
        if nested:
            for action in nested:
                found += _all_subparsers(action)
        else:
            found.append((name, sub))
    return found


def _add_database_options(sub: argparse.ArgumentParser, *, snapshot: bool) -> None:
    """``--db`` (and ``--snapshot`` for reading commands) after the sub-command too:
    ``haf run --db x.duckdb``; a value given there wins over one given before it."""
    sub.add_argument("--db", default=argparse.SUPPRESS, help="the DuckDB file (as haf --db)")
    if snapshot:
        sub.add_argument(
            "--snapshot",
            action="store_true",
            default=argparse.SUPPRESS,
            help="read a copy of the database (as haf --snapshot)",
        )


def method_commands() -> dict[str, MethodCommand]:
    """The sub-commands the methods bring, by name."""
    return {command.name: command for method in methods().values() for command in method.commands}


def _dispatch(args: argparse.Namespace, console: Console) -> int:
    if args.command == "serve":
        from haf_tui.cli.serve_command import serve_command

        return serve_command(args)
    if args.command == "models":
        from haf_tui.cli.models_command import models_command

        return models_command(console)
    if args.command == "datasets":
        from haf_tui.cli.dataset_commands import datasets_command

        return datasets_command(args, console)
    if args.command == "campaign":
        from haf_tui.cli.campaign_command import campaign_command

        return campaign_command(args, console)
    from haf_tui.cli.read_commands import export_command, query_command, runs_command
    from haf_tui.cli.report_command import report_command
    from haf_tui.cli.run_command import run_command
    from haf_tui.cli.writer_open import open_writer
    from haf_tui.store import open_snapshot, open_store

    wait = bool(getattr(args, "wait", False))
    if args.command == "run":  # (the file checked, or waited for, before any model loads)
        with open_writer(args.db, wait=wait, command="run") as store:
            return run_command(args, store, console)
    if args.command == "rescore":
        from haf_tui.cli.rescore_command import rescore_command

        with open_writer(args.db, wait=wait, command="rescore") as store:
            return rescore_command(args, store, console)
    own = method_commands().get(args.command)
    first = own.run_first(args) if own and own.run_first else None
    if first is not None:  # a method's command that runs first (one run path)
        run_args = build_parser().parse_args(first)
        with open_writer(args.db, wait=wait, command="run") as store:
            status = run_command(run_args, store, console)
        if status:
            return status
        args.run = run_args.run_id
    allow_read = [Path(p) for p in getattr(args, "allow_read", [])]
    store = (
        open_snapshot(args.db, allow_read=allow_read)
        if args.snapshot
        else open_store(args.db, read_only=True, allow_read=allow_read)
    )
    with store:
        if args.command == "report":
            return report_command(args, store, console)
        if args.command == "query":
            return query_command(args, store, console)
        if args.command == "runs":
            return runs_command(store, console)
        if own is not None:
            return own.run(args, store, console)
        return export_command(args, store, console)


def _where(loc: tuple[int | str, ...], value: object, args: argparse.Namespace) -> str:
    """Where a bad value came from: the option of the field's name when the value is the one
    given to it (``--until-complete``, not ``until_complete``; a method's setting of the same
    name, given by ``--toy-max-new-tokens``, is not ``--max-new-tokens``), else the field."""
    name = str(loc[0]) if len(loc) == 1 else ""
    if name and hasattr(args, name) and str(getattr(args, name)) == str(value):
        return "--" + name.replace("_", "-")
    return ".".join(map(str, loc))


def _print_error(message: str) -> None:
    """The one place an error reaches the terminal: ``error: MESSAGE`` on stderr, the message
    as text (never markup: a name like ``[/]``) with its control characters shown as escapes
    (a server's or a file's text may carry ``ESC [31m``)."""
    Console(stderr=True, soft_wrap=True).print(
        "[red]error:[/] " + escape(shown_text(message.replace("\n", " "))), highlight=False
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``haf``; errors are one line on stderr and exit status 2."""
    ensure_methods()  # loaded once, here (a test session's, already installed, is kept)
    parser = build_parser()
    for line in [*left_out(), *REFUSED_FLAGS]:  # a broken plug-in: one line each, the rest works
        Console(stderr=True, soft_wrap=True).print(
            f"[yellow]warning:[/] {escape(shown_text(line))}", highlight=False
        )
    args = parser.parse_args(argv)
    console = Console()
    if args.command is None:
        from haf_tui.tui import create_app

        create_app(args.db).run()
        return 0
    previous_handler = signal.getsignal(signal.SIGINT)
    try:
        return _dispatch(args, console)
    except ValidationError as exc:
        details = "; ".join(
            ": ".join(
                part
                for part in (
                    _where(e["loc"], e.get("input"), args),
                    e["msg"].removeprefix("Value error, "),
                )
                if part
            )
            for e in exc.errors()
        )
        _print_error(details)
        return 2
    except StoppedWaitingError as exc:  # (Ctrl-C while waiting for the database: nothing started)
        Console(stderr=True, soft_wrap=True).print(shown_text(str(exc)), markup=False)
        return 130
    except (HafError, ValueError) as exc:  # every error of haf-tui's own, and bad values
        _print_error(first_line(exc))
        return 2
    except KeyboardInterrupt:
        run_id = getattr(args, "run_id", None)
        Console(stderr=True).print(
            f"interrupted: resume the run with haf run --resume {run_id}"
            if run_id
            else "interrupted before a run was stored: nothing to resume"
        )
        return 130
    finally:
        signal.signal(signal.SIGINT, previous_handler)


def entry() -> None:
    """The ``haf`` process: :func:`main`, then exit with its status. Once main has returned
    there is nothing left to stop, so a late Ctrl-C (the second of two close together, when
    the first already stopped the run) is ignored while the process frees the model and
    exits, instead of ending it by a signal with a traceback."""
    status = main()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.exit(status)


if __name__ == "__main__":
    entry()
