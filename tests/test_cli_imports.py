"""``haf --help`` answers at once (issue 34 §8, issue 44 §1): building the parser imports none of
the heavy libraries, which only the commands that use them import (a run, a report, haf serve);
the top-level help and the help of a command that needs no method's settings or reports read
no method, no pydantic and no DuckDB either (the parser is built lazily,
:mod:`haf_tui.cli.command_table`).

Each check runs ``main([... '--help'])`` in a fresh interpreter (a module imported by another
test would hide the import here) and reads ``sys.modules`` after it. The time itself is
measured by ``make bench`` (benchmarks/cli_startup.py), not here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

HEAVY = (
    "scipy",
    "matplotlib",
    "torch",
    "transformers",
    "sentence_transformers",
    "llama_cpp",
    # Lighter, but still imported only by what uses them: the datasets and metrics (numpy),
    # the server client and haf serve (httpx, uvicorn), the workbench (textual).
    "numpy",
    "httpx",
    "uvicorn",
    "textual",
)

LIGHT = (
    *HEAVY,
    "duckdb",
    "pydantic",
    "rich.console",
    "haf_tui.methods.loader",
    "haf_tui.methods.registry",
    "haf_tui.reports",
    "haf_tui.store.db",
    "haf_tui.config",
)
"""What a help that needs no method's declarations imports neither: the methods (their
settings models are pydantic's), the reports, the store (DuckDB), rich's console."""

PROBE = """
import json, sys
from haf_tui.cli import main
try:
    status = main({argv!r})
except SystemExit as exit:
    status = exit.code
heavy = sorted(name for name in {heavy!r} if name in sys.modules)
print("\\nIMPORTS " + json.dumps({{"status": status, "heavy": heavy}}))
"""


def _imports_after(
    argv: list[str], tmp_path: Path, heavy: tuple[str, ...] = HEAVY
) -> dict[str, object]:
    env = os.environ | {"HAF_HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(argv=argv, heavy=heavy)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    line = done.stdout.rsplit("\nIMPORTS ", 1)[-1]
    found: dict[str, object] = json.loads(line)
    assert "usage: haf" in done.stdout  # the help was printed, not an error
    return found


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["runs", "--help"],
        ["query", "--help"],
        ["report", "--help"],
        ["run", "--help"],
        ["serve", "--help"],
        ["campaign", "run", "--help"],
        ["datasets", "import", "--help"],
        ["models", "--help"],
    ],
    ids=lambda argv: "-".join(a.strip("-") for a in argv),
)
def test_help_imports_no_heavy_library(argv: list[str], tmp_path: Path) -> None:
    found = _imports_after(argv, tmp_path)
    assert found == {"status": 0, "heavy": []}


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["runs", "--help"],
        ["query", "--help"],
        ["export", "--help"],
        ["models", "--help"],
        ["rescore", "--help"],
        ["serve", "--help"],
        ["campaign", "run", "--help"],
        ["datasets", "import", "--help"],
    ],
    ids=lambda argv: "-".join(a.strip("-") for a in argv),
)
def test_a_help_without_method_declarations_reads_no_method_pydantic_or_duckdb(
    argv: list[str], tmp_path: Path
) -> None:
    """The top-level help lists the commands from the light table; these commands' options
    are plain declarations (issue 44 §1: ``haf --help`` read DuckDB, pydantic and every
    method, 0.8 s of CPU)."""
    found = _imports_after(argv, tmp_path, LIGHT)
    assert found == {"status": 0, "heavy": []}


@pytest.mark.parametrize(
    "argv",
    [["run", "--help"], ["report", "--help"], ["judge", "meta", "--help"]],
    ids=lambda argv: "-".join(a.strip("-") for a in argv),
)
def test_a_help_that_reads_the_methods_reads_no_duckdb(argv: list[str], tmp_path: Path) -> None:
    """``haf run --help`` needs every method's settings flags, ``report`` their reports'
    names, ``judge`` its own method: the methods are loaded, but a method's modules name the
    store's ``Store`` for their annotations only, so no DuckDB is read (issue 44 §1)."""
    found = _imports_after(argv, tmp_path, (*HEAVY, "duckdb", "haf_tui.store.db"))
    assert found == {"status": 0, "heavy": []}


def test_the_probe_sees_a_heavy_import(tmp_path: Path) -> None:
    """The probe can fail: a heavy library imported beside ``main`` is seen."""
    env = os.environ | {"HAF_HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    code = PROBE.format(argv=["--help"], heavy=HEAVY).replace(
        "from haf_tui.cli import main", "from haf_tui.cli import main\nimport numpy"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env
    )
    assert json.loads(done.stdout.rsplit("\nIMPORTS ", 1)[-1])["heavy"] == ["numpy"]
