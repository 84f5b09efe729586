"""``make bench``'s CLI start-up arm (benchmarks/cli_startup.py): it times real processes,
refuses a command that fails rather than timing its error, and reports the goal per command."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.cli_startup import (
    COMMANDS,
    CPU_GOALS_S,
    ROOT,
    bench_cli_startup,
    bytecode_cache,
    markdown,
    run_once,
)


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


def test_a_baseline_checkout_is_timed_in_the_same_rounds() -> None:
    """``--cli-baseline``: each command from the other checkout is one more arm, named by the
    checkout's folder, judged by the same command's goal."""
    result = bench_cli_startup(rounds=1, baseline=ROOT)
    names = [*COMMANDS, *(f"{ROOT.name}: {name}" for name in COMMANDS)]
    assert list(result["figures"]) == names
    assert result["cpu_goal_s"][f"{ROOT.name}: haf --help"] == CPU_GOALS_S["haf --help"]


def test_the_baseline_s_own_code_is_what_runs(tmp_path: Path) -> None:
    """A baseline checkout whose ``haf`` fails is refused: its own package ran, not this one."""
    package = tmp_path / "haf_tui" / "cli"
    package.mkdir(parents=True)
    (tmp_path / "haf_tui" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "__main__.py").write_text("import sys\nsys.exit('the baseline ran')\n")
    with pytest.raises(RuntimeError, match="the baseline ran"):
        bench_cli_startup(rounds=1, baseline=tmp_path)


def test_the_bytecode_condition_is_stated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    assert bytecode_cache().startswith("off")
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE")
    assert bytecode_cache().startswith("kept")
