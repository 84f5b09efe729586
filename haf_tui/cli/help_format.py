"""The help formatter of every ``haf`` parser: an option's default is stated once, and only
when it says something; a bad option or value is one line, not the usage block."""

from __future__ import annotations

import argparse
import re
import textwrap
from collections.abc import Iterator
from typing import NoReturn

STATED_DEFAULT = re.compile(r"\bdefault:")
"""A help text that names its default already (``(default: …)``) gets none added."""
_STRAY_PERCENT = re.compile(r"%(?!\()")
"""A ``%`` that is not a ``%(name)s`` placeholder: argparse would %-format it and crash."""


class HafHelpFormatter(argparse.HelpFormatter):
    """Adds ``(default: X)`` to an option's help unless the default is nothing worth saying
    (None, False, an empty list or string, a suppressed default), or the help states it
    already; a stray ``%`` in a help text is shown as itself instead of breaking ``--help``;
    lines break at spaces, never inside a hyphenated name."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = _STRAY_PERCENT.sub("%%", action.help or "")
        default = action.default
        if (
            default is None
            or default is False
            or default == argparse.SUPPRESS
            or (isinstance(default, list | tuple | str) and not default)
            or STATED_DEFAULT.search(text)
            or not (action.option_strings or action.nargs in ("?", "*"))
        ):
            return text
        return f"{text} (default: %(default)s)"

    def _split_lines(self, text: str, width: int) -> list[str]:
        """Lines of a help text broken at spaces only: an option or report name with a hyphen
        (``--judge-prompt``, ``judge-mass``) stays whole."""
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)


class OneLineErrorParser(argparse.ArgumentParser):
    """A parser whose error is one line naming where the options are listed, instead of the
    whole usage block above it (a 23-line usage before "invalid int value" hid the line).
    ``haf``'s own parser is one, and argparse makes each sub-command's parser of its class."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} ({self.prog} --help lists the options)\n")


def every_parser(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """``parser`` and each of its sub-commands' parsers, nested ones included."""
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):  # aliases: once
                yield from every_parser(sub)


def use_haf_help(parser: argparse.ArgumentParser) -> None:
    """Give ``parser`` and every sub-command's parser :class:`HafHelpFormatter`."""
    for each in every_parser(parser):
        each.formatter_class = HafHelpFormatter
