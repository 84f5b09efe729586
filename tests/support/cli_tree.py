"""Every ``haf`` sub-command, with its one-line summary and its options' strings, as plain
data: what the command line accepts, compared with a stored copy (tests/fixtures/cli_tree.json)
so that building the parser lazily (issue 44 §1) loses or renames nothing.

Regenerate the copy, when a command or an option is added on purpose, with
``PYTHONPATH=. python -m tests.support.cli_tree > tests/fixtures/cli_tree.json``.
"""

from __future__ import annotations

import argparse
import json
from typing import Any


def cli_tree(parser: argparse.ArgumentParser) -> dict[str, Any]:
    """``{prog: {"summary": ..., "options": [...]}}`` for ``parser`` and every sub-command's
    parser (nested ones included): each option as its strings joined by ``/`` (a positional
    as its name), in declaration order."""
    tree: dict[str, Any] = {}
    _walk(parser, "", tree)
    return tree


def _walk(parser: argparse.ArgumentParser, summary: str, tree: dict[str, Any]) -> None:
    options: list[str] = []
    nested: list[tuple[argparse.ArgumentParser, str]] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            options.append("{" + ",".join(action.choices) + "}")
            nested += [(sub, helps.get(name, "")) for name, sub in action.choices.items()]
            continue
        options.append("/".join(action.option_strings) or str(action.dest))
    tree[parser.prog] = {"summary": summary, "options": options}
    for sub, sub_summary in nested:
        _walk(sub, sub_summary, tree)


if __name__ == "__main__":
    from haf_tui.cli import build_parser
    from haf_tui.methods.loader import ensure_methods

    ensure_methods()
    print(json.dumps(cli_tree(build_parser()), indent=1, ensure_ascii=False))
