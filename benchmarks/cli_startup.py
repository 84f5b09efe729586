"""How fast ``haf`` answers (issue 34 §8, issue 44 §1): the CPU seconds (user + system) and the
wall seconds of ``haf --help``, ``haf run --help``, ``haf runs --help`` and ``haf query --help``,
each in a fresh process.

The commands are the arms of one interleaved comparison (:func:`benchmarks.method.compare`),
so a change in the machine's load falls on each alike; the CPU time is the child's own (from
``os.wait4``), which a loaded machine changes far less than the wall time. The goal: each
command's median under its own :data:`CPU_GOALS_S`. ``python -m benchmarks --only cli`` runs
this part alone; ``--cli-baseline CHECKOUT`` adds each command run from another checkout (the
code before a change) as one more arm of the same rounds, ``CHECKOUT: haf --help``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks.method import compare

COMMANDS: dict[str, tuple[str, ...]] = {
    "haf --help": ("--help",),
    "haf run --help": ("run", "--help"),
    "haf runs --help": ("runs", "--help"),
    "haf query --help": ("query", "--help"),
}
CPU_GOALS_S: dict[str, float] = {
    "haf --help": 0.3,
    "haf run --help": 0.5,
    "haf runs --help": 0.5,
    "haf query --help": 0.5,
}
"""The most CPU time each ``--help`` may take (issue 44 §1: the top-level help < 0.3 s, a
sub-command's < 0.5 s)."""
ROOT = Path(__file__).resolve().parents[1]


def run_once(argv: Sequence[str], root: Path = ROOT) -> tuple[float, float]:
    """``python -m haf_tui.cli ARGV`` once from the checkout ``root`` (its ``haf_tui`` comes
    first on the path), output discarded: (CPU seconds, wall seconds)."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "haf_tui.cli", *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=root,
    )
    assert process.stderr is not None
    error = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    if process.returncode != 0:
        raise RuntimeError(f"haf {' '.join(argv)} failed: {error.decode(errors='replace')}")
    return usage.ru_utime + usage.ru_stime, wall


def bench_cli_startup(rounds: int = 5, baseline: Path | None = None) -> dict[str, Any]:
    """Each command's CPU and wall seconds per round, interleaved (with ``baseline``: each
    command from that checkout too, as ``"BASELINE: COMMAND"``); the medians, and whether
    each CPU median is under its goal."""
    roots = {name: ROOT for name in COMMANDS}
    argvs = dict(COMMANDS)
    goals = dict(CPU_GOALS_S)
    if baseline is not None:
        for name in COMMANDS:
            label = f"{baseline.name}: {name}"
            roots[label], argvs[label], goals[label] = baseline, COMMANDS[name], CPU_GOALS_S[name]
    walls: dict[str, list[float]] = {name: [] for name in argvs}

    def arm(name: str) -> Callable[[], float]:
        def run() -> float:
            cpu, wall = run_once(argvs[name], roots[name])
            walls[name].append(round(wall, 3))
            return cpu

        return run

    figures = compare({name: arm(name) for name in argvs}, rounds, {}, digits=3)
    cpu_medians: dict[str, float] = figures["median"]
    return {
        "figure": "CPU seconds (user + system) of one process",
        "bytecode_cache": bytecode_cache(),
        **figures,
        "wall_seconds": walls,
        "cpu_goal_s": goals,
        "under_goal": {name: value < goals[name] for name, value in cpu_medians.items()},
    }


def bytecode_cache() -> str:
    """Whether the timed processes may keep compiled modules (``__pycache__``, as an installed
    haf does) or compile every module of haf at each start (``PYTHONDONTWRITEBYTECODE``)."""
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        return "off: PYTHONDONTWRITEBYTECODE is set, every module is compiled at each start"
    return "kept: compiled modules are written and read again, as an installed haf's are"


def markdown(result: dict[str, Any]) -> list[str]:
    """The figures as a Markdown table: command, CPU median (min-max), wall median, goal met."""
    lines = [
        f"| command | CPU s: median (min-max), {result['rounds']} rounds | wall s: median "
        "| CPU goal: under |",
        "|---|---|---|---|",
    ]
    for name, values in result["figures"].items():
        walls = sorted(result["wall_seconds"][name])
        wall = walls[len(walls) // 2]
        lines.append(
            f"| {name} | {result['median'][name]:.2f} ({min(values):.2f}-{max(values):.2f}) "
            f"| {wall:.2f} | {result['cpu_goal_s'][name]} s: "
            f"{'yes' if result['under_goal'][name] else 'NO'} |"
        )
    return lines
