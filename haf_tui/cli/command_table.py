"""``haf``'s sub-commands as a light table (name, one-line summary, how to add its parser),
and the sub-parsers action that builds a sub-command's parser only when it is chosen
(issue 44 §1): ``haf --help`` lists the names and summaries from this table and imports no
command's module, no method, no DuckDB; ``haf run --help`` builds ``run``'s parser alone.

A builder imports its command's parser module when it is called; those that read the
methods' registry (``run``'s settings flags, ``report``'s report names, a method's own
command) load the methods first. A summary here must be the ``help`` its builder gives
(tests/test_cli_lazy.py compares them, and the whole tree with a stored copy).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from haf_tui.methods import BUILT_IN_COMMANDS

if TYPE_CHECKING:
    from haf_tui.methods.declare import MethodCommand

    SubParsers = argparse._SubParsersAction[argparse.ArgumentParser]
    _SubParsersBase = argparse._SubParsersAction[argparse.ArgumentParser]
else:
    _SubParsersBase = argparse._SubParsersAction


@dataclass(frozen=True)
class CommandEntry:
    """One sub-command of ``haf``: its name, its one-line summary (what ``haf --help`` lists)
    and the function that adds its parser to ``haf``'s sub-parsers."""

    name: str
    summary: str
    add: Callable[[SubParsers], None]


def _load_methods() -> None:
    from haf_tui.methods.loader import ensure_methods

    ensure_methods()


def _add_run(commands: SubParsers) -> None:
    _load_methods()  # its settings flags: each method's settings model
    from haf_tui.cli.run_command import add_run_parser

    add_run_parser(commands)


def _add_campaign(commands: SubParsers) -> None:
    from haf_tui.cli.campaign_parser import add_campaign_parser

    add_campaign_parser(commands)


def _add_rescore(commands: SubParsers) -> None:
    from haf_tui.cli.rescore_parser import add_rescore_parser

    add_rescore_parser(commands)


def _add_report(commands: SubParsers) -> None:
    _load_methods()  # the report names: each method's reports
    from haf_tui.cli.report_command import add_report_parser

    add_report_parser(commands)


def _add_query(commands: SubParsers) -> None:
    from haf_tui.cli.read_parsers import add_query_parser

    add_query_parser(commands)


def _add_runs(commands: SubParsers) -> None:
    from haf_tui.cli.read_parsers import add_runs_parser

    add_runs_parser(commands)


def _add_export(commands: SubParsers) -> None:
    from haf_tui.cli.read_parsers import add_export_parser

    add_export_parser(commands)


def _add_models(commands: SubParsers) -> None:
    from haf_tui.cli.read_parsers import add_models_parser

    add_models_parser(commands)


def _add_datasets(commands: SubParsers) -> None:
    from haf_tui.cli.dataset_parser import add_datasets_parser

    add_datasets_parser(commands)


def _add_serve(commands: SubParsers) -> None:
    from haf_tui.cli.serve_command import add_serve_parser

    add_serve_parser(commands)


def _add_method_command(name: str) -> Callable[[SubParsers], None]:
    """The builder of the built-in method's own command ``name``: the methods loaded, then
    the command its method declares adds its parser."""

    def add(commands: SubParsers) -> None:
        _load_methods()
        method_commands()[name].add_parser(commands)

    return add


COMMANDS_BEFORE_METHODS: tuple[CommandEntry, ...] = (
    CommandEntry("run", "run (or resume) a HAF evaluation", _add_run),
    CommandEntry(
        "campaign",
        "a grid of models × datasets × suites, run as one resumable whole",
        _add_campaign,
    ),
    CommandEntry(
        "rescore",
        "re-score a finished run's HAF values with another similarity model g: a derived "
        "run, nothing generated again (resumes an unfinished one with the same g)",
        _add_rescore,
    ),
    CommandEntry(
        "report",
        "each suite's tables for stored runs (HAF: the paper's Tables 1, 2, 4)",
        _add_report,
    ),
    CommandEntry("query", "run SQL (read-only) or a named query", _add_query),
    CommandEntry("runs", "list stored runs", _add_runs),
    CommandEntry("export", "write a run's tables to Parquet or CSV", _add_export),
    CommandEntry("models", "list GGUF files in the model folders", _add_models),
    CommandEntry("datasets", "list, import, show, preview or remove datasets", _add_datasets),
)
"""The sub-commands listed before the methods' own, in ``haf --help``'s order."""

BUILT_IN_METHOD_COMMANDS: tuple[CommandEntry, ...] = tuple(
    CommandEntry(name, summary, _add_method_command(name)) for name, summary in BUILT_IN_COMMANDS
)
"""The built-in methods' own commands (their ``Method.commands``), listed without loading
the methods; when a registry is known already (a plug-in is installed, or a program loaded
the methods) its methods' commands are added instead, each as its method declares it."""

COMMANDS_AFTER_METHODS: tuple[CommandEntry, ...] = (
    CommandEntry(
        "serve",
        "serve a GGUF to haf run --server (OpenAI-compatible, raw log-probabilities)",
        _add_serve,
    ),
)
"""The sub-commands listed after the methods' own."""


def method_commands() -> dict[str, MethodCommand]:
    """The sub-commands the (loaded) methods bring, by name."""
    from haf_tui.methods.registry import methods

    return {command.name: command for method in methods().values() for command in method.commands}


class CommandTableError(RuntimeError):
    """A builder did not add the sub-command the table names (a bug of the table)."""


class LazySubParsers(_SubParsersBase):
    """``haf``'s sub-parsers: each sub-command added by :meth:`add_lazy` is a bare parser
    (its name and summary) until argparse chooses it, or :meth:`build` is asked for it; then
    its builder adds the real one in its place and ``finish`` completes it (the database
    options, the help format). Everything argparse shows of the choices (the list in
    ``haf --help``, "invalid choice") comes from the bare parsers' names and summaries."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.pending: dict[str, Callable[[SubParsers], None]] = {}
        self.finish: Callable[[str, argparse.ArgumentParser], None] = lambda name, parser: None

    def add_lazy(self, entry: CommandEntry) -> None:
        """List ``entry``; its parser is built when it is chosen."""
        self.add_parser(entry.name, help=entry.summary)
        self.pending[entry.name] = entry.add

    def build(self, name: str) -> argparse.ArgumentParser:
        """The parser of sub-command ``name``, built now if it was not yet."""
        add = self.pending.pop(name, None)
        if add is not None:
            scratch: SubParsers = argparse._SubParsersAction(
                option_strings=[], prog=self._prog_prefix, parser_class=self._parser_class
            )
            add(scratch)
            if name not in scratch._name_parser_map:
                raise CommandTableError(
                    f"the command table's {name!r} was not added by its builder "
                    f"(it added {', '.join(scratch._name_parser_map) or 'nothing'})"
                )
            self._name_parser_map[name] = scratch._name_parser_map[name]
            self.finish(name, self._name_parser_map[name])
        return self._name_parser_map[name]

    def build_all(self) -> None:
        """Every sub-command's parser built (what a walk over the whole tree needs)."""
        for name in list(self.pending):
            self.build(name)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        chosen = values[0] if isinstance(values, list) and values else None
        if isinstance(chosen, str) and chosen in self.pending:
            self.build(chosen)
        super().__call__(parser, namespace, values, option_string)
