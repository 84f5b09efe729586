"""``haf``'s parser built lazily (issue 44 §1) is the command line it was: every sub-command,
its summary and its options' strings as stored from the eager parser before the change
(tests/fixtures/cli_tree.json), whether the tree is built at once (:func:`build_parser`) or
one chosen sub-command at a time in a fresh process, where no method is loaded yet.

An option or a command added on purpose: regenerate the stored copy (tests/support/cli_tree.py
says how) and look at its diff.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from haf_tui.cli import build_parser, main
from haf_tui.cli.command_table import (
    BUILT_IN_METHOD_COMMANDS,
    COMMANDS_AFTER_METHODS,
    COMMANDS_BEFORE_METHODS,
    CommandEntry,
    CommandTableError,
    LazySubParsers,
)
from haf_tui.methods.loader import BUILT_IN
from tests.support.cli_tree import cli_tree

ROOT = Path(__file__).resolve().parents[1]
STORED = json.loads((ROOT / "tests" / "fixtures" / "cli_tree.json").read_text(encoding="utf-8"))
TABLE = (*COMMANDS_BEFORE_METHODS, *BUILT_IN_METHOD_COMMANDS, *COMMANDS_AFTER_METHODS)

FRESH = """
import json, sys
from haf_tui.cli import _parser
from tests.support.cli_tree import cli_tree
parser, commands = _parser(None)
top = parser.format_help()
loaded = "haf_tui.methods.loader" in sys.modules
commands.build_all()
print(json.dumps({"tree": cli_tree(parser), "top": top, "loaded_before": loaded}))
"""


def _fresh(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = os.environ | {"HAF_HOME": str(tmp_path), "PYTHONPATH": str(ROOT), "COLUMNS": "100"}
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )


REGENERATE = (
    "an option or a command added, renamed or removed: if on purpose, regenerate the stored "
    "copy (PYTHONPATH=. python -m tests.support.cli_tree > tests/fixtures/cli_tree.json)"
)


def _differences(found: dict[str, object]) -> list[str]:
    names = dict.fromkeys([*STORED, *found])
    return [
        f"{name}: stored {STORED.get(name)} != now {found.get(name)}"
        for name in names
        if STORED.get(name) != found.get(name)
    ]


def test_the_whole_tree_is_the_stored_one() -> None:
    found = cli_tree(build_parser())
    assert found == STORED, "\n".join([REGENERATE, *_differences(found)])


def test_built_in_a_fresh_process_the_tree_is_the_stored_one(tmp_path: Path) -> None:
    """No method loaded: the built-in methods' commands come from the table, each sub-command
    built from its own builder; the top-level help was shown before any method loaded."""
    done = _fresh(FRESH, tmp_path)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["tree"] == STORED, "\n".join([REGENERATE, *_differences(found["tree"])])
    assert not found["loaded_before"]
    assert found["top"] == _eager_top_help(100)


def _eager_top_help(columns: int) -> str:
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(columns)
    try:
        return build_parser().format_help()
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old


@pytest.mark.parametrize("entry", TABLE, ids=lambda entry: entry.name)
def test_each_summary_in_the_table_is_the_help_its_builder_gives(entry: CommandEntry) -> None:
    scratch = argparse.ArgumentParser(prog="haf").add_subparsers()
    entry.add(scratch)
    helps = {choice.dest: choice.help for choice in scratch._choices_actions}
    assert helps[entry.name] == entry.summary


def test_the_table_lists_the_built_in_methods_own_commands_in_their_order() -> None:
    declared = [command.name for method in BUILT_IN for command in method.commands]
    assert [entry.name for entry in BUILT_IN_METHOD_COMMANDS] == declared


def test_a_sub_command_is_built_only_when_chosen(tmp_path: Path) -> None:
    """argparse's choice builds the chosen parser alone; the others stay bare."""
    code = """
from haf_tui.cli import _parser
parser, commands = _parser(None)
args = parser.parse_args(["export", "RUN", "--format", "csv", "--db", "x.duckdb"])
print(args.run_id, args.format, args.db, sorted(commands.pending))
"""
    done = _fresh(code, tmp_path)
    assert done.returncode == 0, done.stderr
    rest = sorted(entry.name for entry in TABLE if entry.name != "export")
    assert done.stdout.split(" ", 3) == ["RUN", "csv", "x.duckdb", f"{rest}\n"]


def test_a_bad_choice_still_names_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["no-such-command"])
    said = capsys.readouterr().err
    assert "invalid choice: 'no-such-command'" in said
    for entry in TABLE:
        assert f"'{entry.name}'" in said


def test_a_builder_that_adds_another_name_is_a_clear_error() -> None:
    parser = argparse.ArgumentParser(prog="haf")
    commands = parser.add_subparsers(dest="command", action=LazySubParsers)
    assert isinstance(commands, LazySubParsers)
    commands.add_lazy(CommandEntry("runz", "a typo in the table", COMMANDS_BEFORE_METHODS[5].add))
    with pytest.raises(CommandTableError, match=r"'runz' was not added by its builder .*runs"):
        parser.parse_args(["runz"])
