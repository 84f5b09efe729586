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
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

from haf_tui import __version__
from haf_tui.cli.command_table import (
    BUILT_IN_METHOD_COMMANDS,
    COMMANDS_AFTER_METHODS,
    COMMANDS_BEFORE_METHODS,
    LazySubParsers,
    method_commands,
)
from haf_tui.cli.help_format import OneLineErrorParser, use_haf_help
from haf_tui.methods import ENTRY_POINT_GROUP
from haf_tui.store.errors import StoppedWaitingError
from haf_tui.vocabulary import HafError, error_line, first_line, shown_text

if TYPE_CHECKING:
    from rich.console import Console

    from haf_tui.methods.registry import MethodRegistry

# The parser is built lazily (issue 44 §1): ``haf --help`` lists the sub-commands from the light
# table of haf_tui.cli.command_table and imports no command's module, no method, no pydantic and
# no DuckDB; a sub-command's parser is built when it is chosen, and what a command does is
# imported when it runs (_dispatch). tests/test_cli_imports.py checks what each help imports.

READ_COMMANDS = ("report", "query", "runs", "export")
WRITE_COMMANDS = ("run", "import", "models", "rescore")
"""Sub-commands that write (or read no database): no ``--snapshot`` after them."""
NO_DATABASE_COMMANDS = ("serve",)
"""Sub-commands that open no database: no ``--db`` after them."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``haf``, every sub-command's parser built (a walk over the
    whole tree, a method's command that runs ``haf run`` first)."""
    parser, commands = _parser(_known_registry())
    commands.build_all()
    return parser


def _parser(
    registry: MethodRegistry | None, warn: bool = False
) -> tuple[argparse.ArgumentParser, LazySubParsers]:
    """``haf``'s parser with its sub-commands listed and built when chosen (``warn``: a flag
    a sub-command's parser leaves out is said on stderr as it is built). The methods' own
    commands: the built-in ones' from the table when no registry is known yet, else
    ``registry``'s, added now as each method declares it (a plug-in's command too)."""
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
    commands = cast(
        LazySubParsers,
        parser.add_subparsers(dest="command", metavar="COMMAND", action=LazySubParsers),
    )
    commands.finish = _finisher(warn)
    for entry in COMMANDS_BEFORE_METHODS:
        commands.add_lazy(entry)
    if registry is None:
        for entry in BUILT_IN_METHOD_COMMANDS:
            commands.add_lazy(entry)
    else:
        _add_method_commands(commands, registry)
    for entry in COMMANDS_AFTER_METHODS:
        commands.add_lazy(entry)
    use_haf_help(parser)
    return parser, commands


def _add_method_commands(commands: LazySubParsers, registry: MethodRegistry) -> None:
    """The commands of ``registry``'s methods, each added as its method declares it; one that
    fails is left out with one line in ``REFUSED_FLAGS`` (a plug-in's own bug)."""
    from haf_tui.cli.settings_options import REFUSED_FLAGS

    for method in registry.methods.values():
        for command in method.commands:
            before = set(commands.choices)
            try:
                command.add_parser(commands)
            except Exception as error:  # a plug-in's own command: one line, the rest works
                REFUSED_FLAGS.append(
                    f"the command {command.name!r} is left out: {error_line(error)}"
                )
                continue
            for name in [name for name in commands.choices if name not in before]:
                commands.finish(name, commands.choices[name])


def _finisher(warn: bool) -> Callable[[str, argparse.ArgumentParser], None]:
    """What completes a sub-command's parser once built: ``--db`` (and ``--snapshot``) after
    it (or after each of its own sub-commands), the help format; with ``warn``, the flags
    its building left out said on stderr."""

    def finish(name: str, sub: argparse.ArgumentParser) -> None:
        for leaf_name, leaf in _leaves(name, sub):
            if leaf_name not in NO_DATABASE_COMMANDS:
                _add_database_options(leaf, snapshot=leaf_name not in WRITE_COMMANDS)
        use_haf_help(sub)
        if warn:
            _warn_refused()

    return finish


def _known_registry() -> MethodRegistry | None:
    """The methods' registry when it is known before the command is chosen: one a program
    (a test session) installed, or, when a package declares a method of its own, the one
    loaded now (its commands are listed, and one left out is said at once). None: only the
    built-in methods, loaded when a command needs them."""
    loaded = sys.modules.get("haf_tui.methods.registry")  # not imported: none is installed
    if loaded is not None:
        registry = cast("MethodRegistry | None", loaded.installed())
        if registry is not None:
            return registry
    from importlib import metadata

    if not metadata.entry_points(group=ENTRY_POINT_GROUP):
        return None
    from haf_tui.methods.loader import ensure_methods

    return ensure_methods()


def _leaves(name: str, sub: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    """``sub`` by ``name``, or each of its own sub-commands' parsers (nested ones included)."""
    nested = [a for a in sub._actions if isinstance(a, argparse._SubParsersAction)]
    if not nested:
        return [(name, sub)]
    return [leaf for action in nested for leaf in _all_subparsers(action)]


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
    from haf_tui.cli.run_command import refuse_before_opening, run_command
    from haf_tui.cli.writer_open import open_writer
    from haf_tui.store import open_snapshot, open_store

    wait = bool(getattr(args, "wait", False))
    if args.command == "run":  # (the file checked, or waited for, before any model loads)
        refuse_before_opening(args)  # (a refusal creates no database)
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
        refuse_before_opening(run_args)
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
    from rich.console import Console
    from rich.markup import escape

    Console(stderr=True, soft_wrap=True).print(
        "[red]error:[/] " + escape(shown_text(message.replace("\n", " "))), highlight=False
    )


def _warn(lines: Sequence[str]) -> None:
    """``warning: LINE`` on stderr for each line (a broken plug-in: one line each, the rest
    works)."""
    if not lines:
        return
    from rich.console import Console
    from rich.markup import escape

    for line in lines:
        Console(stderr=True, soft_wrap=True).print(
            f"[yellow]warning:[/] {escape(shown_text(line))}", highlight=False
        )


def _warn_refused() -> None:
    """Say (once) each flag or command a parser just built left out (``REFUSED_FLAGS``)."""
    options = sys.modules.get("haf_tui.cli.settings_options")  # not imported: none refused
    if options is None:
        return
    refused = cast("list[str]", options.REFUSED_FLAGS)
    _warn(refused)
    refused.clear()


def _validation_details(exc: ValueError, args: argparse.Namespace) -> str | None:
    """A pydantic ``ValidationError``'s errors in one line, each where its value came from;
    None for any other ``ValueError`` (pydantic is imported only by a command that used it)."""
    if "pydantic" not in sys.modules:
        return None
    from pydantic import ValidationError

    if not isinstance(exc, ValidationError):
        return None
    return "; ".join(
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


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``haf``; errors are one line on stderr and exit status 2."""
    registry = _known_registry()
    if registry is not None:
        _warn(registry.left_out)
    parser, _ = _parser(registry, warn=True)
    _warn_refused()
    args = parser.parse_args(argv)
    from rich.console import Console

    from haf_tui.methods.loader import ensure_methods

    ensure_methods()  # loaded once, here (a test session's, already installed, is kept)
    console = Console()
    if args.command is None:
        from haf_tui.tui import create_app

        create_app(args.db).run()
        return 0
    previous_handler = signal.getsignal(signal.SIGINT)
    try:
        return _dispatch(args, console)
    except StoppedWaitingError as exc:  # (Ctrl-C while waiting for the database: nothing started)
        Console(stderr=True, soft_wrap=True).print(shown_text(str(exc)), markup=False)
        return 130
    except (HafError, ValueError) as exc:  # every error of haf-tui's own, and bad values
        details = _validation_details(exc, args) if isinstance(exc, ValueError) else None
        _print_error(first_line(exc) if details is None else details)
        return 2
    except KeyboardInterrupt:
        run_id = getattr(args, "run_id", None)
        from rich.console import Console

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
