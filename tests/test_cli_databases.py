"""One database whichever way haf is started (issue 34 §1): ``make run`` and ``make tui`` use
haf's own data folder, as ``.venv/bin/haf`` and ``haf`` do; a command that finds no database
names where runs are."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from haf_tui.cli import main
from haf_tui.store import open_store
from tests.support import one_line_error

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_the_makefile_sets_haf_home_for_tests_and_benchmarks_only() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("HAF_HOME", "MAKEFLAGS", "MFLAGS")}
    probe = 'show-home: ; @echo "home=[$$HAF_HOME]"'
    shown = subprocess.run(
        ["make", "-s", "-C", str(REPO), "--eval", probe, "show-home"],
        capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip
    assert shown.stdout.strip() == "home=[]"  # run and tui: haf's own folder
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert "test test-fast bench: export HAF_HOME ?= $(CURDIR)/.haf" in makefile


def test_no_database_here_names_the_one_in_the_checkout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    checkout = tmp_path / "checkout"
    kept = checkout / ".haf" / "haf.duckdb"
    kept.parent.mkdir(parents=True)
    open_store(kept).close()
    monkeypatch.chdir(checkout)
    monkeypatch.setenv("HAF_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("HAF_DB", raising=False)
    assert main(["report"]) == 2
    line = one_line_error(capsys)
    assert line.startswith(f"error: no database at {tmp_path / 'home' / 'haf.duckdb'}")
    assert f"runs are in {kept}: pass --db {kept}" in line


def test_no_database_anywhere_says_how_to_make_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HAF_HOME", str(tmp_path / "home"))
    monkeypatch.setattr("platformdirs.user_data_dir", lambda *a, **k: str(tmp_path / "none"))
    assert main(["report"]) == 2
    assert "run `haf run` first or pass --db" in one_line_error(capsys)


@pytest.mark.parametrize("where", ["given", "default"])
def test_a_refused_demo_run_creates_no_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    """``haf run --demo --model`` is refused from its options alone: before the database is
    opened, so neither ``--db``'s file nor the default one is created (an empty file was)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HAF_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("HAF_DB", raising=False)

    def never(*args: object) -> None:  # (a refusal lost: the demo run loads no model here)
        raise AssertionError("the run went on")

    monkeypatch.setattr("haf_tui.pipeline.runs.start_or_resume", never)
    db = tmp_path / "given.duckdb"
    model = tmp_path / "x.gguf"  # (absent: the demo's refusal comes first)
    given = ["--db", str(db)] if where == "given" else []
    assert main([*given, "run", "--demo", "--model", str(model)]) == 2
    line = one_line_error(capsys)
    assert line.startswith("error: --demo runs the embedded model only"), line
    assert f"not {model}: drop --model, or drop --demo" in line, line
    assert sorted(tmp_path.rglob("*")) == [], "nothing created"
