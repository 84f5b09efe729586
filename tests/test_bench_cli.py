"""``make bench``'s CLI start-up arm (benchmarks/cli_startup.py): it times real processes,
refuses a command that fails rather than timing its error, and reports the goal per command."""

from __future__ import annotations

import pytest

from benchmarks.cli_startup import COMMANDS, CPU_GOALS_S, bench_cli_startup, markdown, run_once


def test_one_round_times_every_command() -> None:
    result = bench_cli_startup(rounds=1)
    assert set(result["figures"]) == set(COMMANDS)
    assert all(values[0] > 0 for values in result["figures"].values())  # CPU seconds spent
    assert all(len(walls) == 1 for walls in result["wall_seconds"].values())
    lines = markdown(result)
    assert len(lines) == 2 + len(COMMANDS) and "haf query --help" in lines[-1]


def test_a_failing_command_is_not_timed() -> None:
    with pytest.raises(RuntimeError, match="no-such-flag"):
        run_once(["--no-such-flag"])


def test_the_goal_is_judged_per_command() -> None:
    result = {
        "rounds": 1,
        "cpu_goal_s": CPU_GOALS_S,
        "figures": {"haf --help": [0.3], "haf runs --help": [0.7]},
        "median": {"haf --help": 0.3, "haf runs --help": 0.7},
        "wall_seconds": {"haf --help": [0.5], "haf runs --help": [0.9]},
        "under_goal": {"haf --help": True, "haf runs --help": False},
    }
    assert markdown(result)[2:] == [
        "| haf --help | 0.30 (0.30-0.30) | 0.50 | 0.3 s: yes |",
        "| haf runs --help | 0.70 (0.70-0.70) | 0.90 | 0.5 s: NO |",
    ]
