"""``haf run`` and ``haf rescore`` on a database another process writes (issue 43 §2): without
``--wait`` one line naming the holder (PID, command, what it does), and no model loaded; with
``--wait`` that line once as "waiting for …", then the command starts by itself when the
holder lets go; Ctrl-C while waiting stops it cleanly, nothing started.

The holder is a real second process holding a real DuckDB file for writing (with its note), as
``haf run`` does; DuckDB's locks are per process, so it is always a subprocess."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from benchmarks.benchdata import build_bench_db
from haf_tui.cli import main
from haf_tui.similarity import load_similarity
from haf_tui.store import open_store
from haf_tui.store.derived_runs import children_of
from haf_tui.store.holder import holder_note_path
from tests.support import one_line_error
from tests.support.rescore_runs import save_tiny_dataset, scripted_run
from tests.support.tiny_similarity import tiny_bi_encoder

ROOT = Path(__file__).resolve().parent.parent
DEADLINE = 300.0  # (generous: only "never" fails; a loaded machine imports slowly)

HOLDER = """\
import sys
from haf_tui.store import open_store

with open_store(sys.argv[1], purpose="run ab12cd: writing"):
    print("holding", flush=True)
    sys.stdin.readline()
print("done", flush=True)
"""
"""A ``haf run`` in miniature: holds the file for writing, with its note, until told (a line
on stdin)."""


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}


class Lines:
    """A child's output read line by line in a thread, so that a test waits for a line with a
    deadline instead of blocking for ever."""

    def __init__(self, stream: IO[str]) -> None:
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self.lines.put(line.rstrip("\n"))

    def next(self) -> str:
        line = self.lines.get(timeout=DEADLINE)
        self.seen.append(line)
        return line


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[tuple[Path, str, subprocess.Popen[str]]]:
    """A database with a synthetic finished run (its id), held for writing by a live child."""
    db = tmp_path / "haf.duckdb"
    (run_id,) = build_bench_db(db, n_instances=3, n_runs=1, seed=1)
    child = _hold(db)
    try:
        yield db, run_id, child
    finally:
        child.kill()
        child.wait(DEADLINE)


def _hold(db: Path) -> subprocess.Popen[str]:
    script = db.with_name("haf_holder.py")
    script.write_text(HOLDER)
    child = subprocess.Popen(
        [sys.executable, str(script), str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    assert child.stdout is not None and child.stdout.readline().strip() == "holding"
    return child


def _let_go(child: subprocess.Popen[str]) -> None:
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write("go\n")
    child.stdin.flush()
    assert child.stdout.readline().strip() == "done"
    assert child.wait(DEADLINE) == 0


def _held_line(line: str, db: Path, pid: int) -> None:
    """The one line names the file, the holder's PID, its command and what it does."""
    assert f"{db.name} — held by PID {pid} (`haf_holder.py " in line, line
    assert ", run ab12cd: writing, since " in line, line


def test_rescore_on_a_held_file_is_one_line_naming_the_holder_before_g_loads(
    holder: tuple[Path, str, subprocess.Popen[str]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from haf_tui.cli import rescore_command

    db, run_id, child = holder
    loads: list[str] = []

    def loader(name: str, *args: Any, **kwargs: Any) -> Any:
        loads.append(name)
        raise AssertionError("g loaded while the file is held")

    monkeypatch.setattr(rescore_command, "load_rescore_similarity", loader)
    status = main(["--db", str(db), "rescore", run_id, "--similarity", "some/model"])
    assert status == 2
    line = one_line_error(capsys)
    _held_line(line, db, child.pid)
    assert line.endswith(": haf rescore --wait waits for it, or use another --db"), line
    assert loads == []  # the lock was checked before the similarity model loaded


def test_run_on_a_held_file_is_one_line_naming_the_holder_before_the_model_loads(
    holder: tuple[Path, str, subprocess.Popen[str]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from haf_tui.pipeline import runs

    db, run_id, child = holder
    loads: list[object] = []
    monkeypatch.setattr(runs, "load_models", lambda config, *a, **k: loads.append(config))
    status = main(["--db", str(db), "run", "--resume", run_id])
    assert status == 2
    line = one_line_error(capsys)
    _held_line(line, db, child.pid)
    assert "haf run --wait waits for it" in line
    assert loads == []


def test_ctrl_c_while_waiting_stops_cleanly_with_nothing_started(
    holder: tuple[Path, str, subprocess.Popen[str]],
) -> None:
    db, run_id, child = holder
    waiting = subprocess.Popen(
        [sys.executable, "-m", "haf_tui.cli", "--db", str(db), "rescore", run_id,
         "--similarity", "some/model", "--wait"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(),
    )  # fmt: skip
    try:
        assert waiting.stderr is not None
        err = Lines(waiting.stderr)
        line = err.next()
        assert line.startswith(f"waiting for {db.name} — held by PID {child.pid} (`"), line
        _held_line(line, db, child.pid)
        waiting.send_signal(signal.SIGINT)
        assert waiting.wait(DEADLINE) == 130
        assert err.next() == f"stopped waiting for {db.name}: nothing was started"
    finally:
        waiting.kill()
        waiting.wait(DEADLINE)
    assert child.poll() is None  # (the holder still holds: its note is its own)
    _let_go(child)
    assert not holder_note_path(db).exists()
    with open_store(db, read_only=True) as store:
        assert len(store.list_runs()) == 1  # nothing started


def test_rescore_wait_waits_for_the_holder_then_rescores(tmp_path: Path) -> None:
    first, second = tiny_bi_encoder(tmp_path, 1), tiny_bi_encoder(tmp_path, 2)
    db = tmp_path / "haf.duckdb"
    with open_store(db) as store:
        save_tiny_dataset(store)
        scripted_run(store, "parent", load_similarity(str(first)))
    child = _hold(db)
    waiting = subprocess.Popen(
        [sys.executable, "-m", "haf_tui.cli", "--db", str(db), "rescore", "parent",
         "--similarity", str(second), "--wait"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(),
    )  # fmt: skip
    try:
        assert waiting.stderr is not None and waiting.stdout is not None
        line = Lines(waiting.stderr).next()
        assert line.startswith(f"waiting for {db.name} — held by PID {child.pid} (`"), line
        assert waiting.poll() is None  # still waiting: the holder has not let go
        _let_go(child)
        assert waiting.wait(DEADLINE) == 0
        out = waiting.stdout.read()
        assert "made run " in out and "re-scored with" in out
    finally:
        child.kill()
        child.wait(DEADLINE)
        waiting.kill()
        waiting.wait(DEADLINE)
    with open_store(db, read_only=True) as store:
        (derived,) = children_of(store, "parent")
        assert derived.status == "finished" and derived.similarity_model == str(second)
    assert not holder_note_path(db).exists()


GRID = "models = ['embedded']\ndatasets = ['sample']\nsuites = ['classify']\nlimit = 2\n"


def test_campaign_run_on_a_held_file_is_one_line_before_any_model_loads(
    holder: tuple[Path, str, subprocess.Popen[str]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    db, _, child = holder
    grid = db.with_name("grid.toml")
    grid.write_text(GRID, encoding="utf-8")
    loads: list[object] = []
    monkeypatch.setattr("haf_tui.campaign.runner.load_models", lambda *a: loads.append(a))
    monkeypatch.setattr(
        "haf_tui.cli.campaign_command.check_similarities", lambda *a, **k: loads.append(a)
    )
    assert main(["campaign", "run", str(grid), "--db", str(db)]) == 2
    line = one_line_error(capsys)
    _held_line(line, db, child.pid)
    assert "haf campaign run --wait waits for it" in line
    assert loads == []


def test_wait_in_a_grid_s_settings_is_refused_naming_the_option(tmp_path: Path) -> None:
    from haf_tui.campaign import GridError, load_grid
    from haf_tui.cli.campaign_command import grid_run_config

    grid = tmp_path / "grid.toml"
    grid.write_text(GRID + "[settings]\nwait = true\n", encoding="utf-8")
    with pytest.raises(GridError, match=r"\[settings\] wait: give --wait to haf campaign run"):
        grid_run_config(load_grid(grid))
