"""``haf campaign run``'s console keeps its lines while llama.cpp silences a model's load in
another lane (``suppress_stdout_stderr`` points descriptor 1 and ``sys.stdout`` at /dev/null
for the whole process): a cell's "run … (resuming)" line was lost under load. In a process of
its own, its output a pipe, llama-cpp-python's own silencing entered around a line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = """
import sys
from rich.console import Console
from llama_cpp._utils import suppress_stdout_stderr
from haf_tui.cli.steady_output import steady_output
console = Console()
def lines():
    console.print("before the load")
    with suppress_stdout_stderr(disable=False):  # (what Llama(verbose=False) enters)
        console.print("while a model loads")
    console.print("after the load")
if sys.argv[1] == "steady":
    with steady_output(console):
        lines()
else:
    lines()
console.print("outside")
"""


@pytest.mark.parametrize("how", ["steady", "plain"])
def test_a_line_printed_while_a_model_loads_is_kept(how: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, how],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    shown = done.stdout.splitlines()
    if how == "steady":
        assert shown == ["before the load", "while a model loads", "after the load", "outside"]
    else:  # (the premise: without it, llama.cpp's silencing swallows the line)
        assert shown == ["before the load", "after the load", "outside"]
