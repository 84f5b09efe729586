"""Exports never destroy the database (issue 24 §1): the SQL screen's export and ``haf export``
refuse the open database's file, its write-ahead log and its holder note however the path is
spelled (absolute, relative, ``..``, a symlink, a hard link); an existing file is replaced
only after asking (the screen) or with ``--overwrite`` (the CLI); and a failed export leaves
the file it would have replaced as it was, and no temporary file behind."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Static

from benchmarks.benchdata import build_bench_db
from haf_tui.cli import main
from haf_tui.store import StoreError, TargetExistsError, check_target, open_store
from haf_tui.tui import create_app
from haf_tui.tui.screens.confirm import ConfirmScreen
from haf_tui.tui.screens.sql import SqlScreen
from haf_tui.tui.screens.sql_dialogs import ExportScreen
from haf_tui.tui.widgets.sql_editor import SqlEditor
from tests.support import one_line_error, settle


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def runs_db(tmp_path: Path) -> tuple[Path, list[str]]:
    """A database with runs, in ``tmp_path/data`` (the tests work in ``tmp_path/work``)."""
    folder = tmp_path / "data"
    folder.mkdir()
    db = folder / "x.duckdb"
    return db, build_bench_db(db, n_instances=3, n_runs=2, seed=5)


def _spellings(db: Path, work: Path) -> list[str]:
    """Paths that all name the database (or its companions), as a user may type them."""
    (work / "link.duckdb").symlink_to(db)
    os.link(db, work / "hard.duckdb")
    return [
        str(db),
        os.path.relpath(db, work),
        str(work / ".." / "data" / "." / db.name),
        "link.duckdb",
        "hard.duckdb",
        str(db) + ".wal",
        str(db) + ".holder.json",
    ]


def test_no_spelling_of_the_database_can_be_a_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "data" / "x.duckdb"
    db.parent.mkdir()
    open_store(db).close()
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    for spelling in _spellings(db, work):
        with pytest.raises(StoreError, match="is the open database's file"):
            check_target(Path(spelling), [db], overwrite=True)
            pytest.fail(spelling)
    (work / "old.csv").write_text("old\n")
    with pytest.raises(TargetExistsError):
        check_target(Path("old.csv"), [db])
    assert check_target(Path("old.csv"), [db], overwrite=True) == work / "old.csv"
    assert check_target(Path("new.csv"), [db]) == work / "new.csv"


async def _run_and_open_export(pilot: Pilot[Any], sql: str) -> ExportScreen:
    await settle(pilot)
    await pilot.press("s")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, SqlScreen)
    screen.query_one("#sql-editor", SqlEditor).load_text(sql)
    await pilot.press("ctrl+r")
    await settle(pilot)
    await pilot.press("ctrl+e")
    await settle(pilot)
    dialog = pilot.app.screen
    assert isinstance(dialog, ExportScreen)
    return dialog


async def _export_to(pilot: Pilot[Any], dialog: ExportScreen, path: str) -> str:
    """Type ``path`` over the proposed one, press enter; what the dialog's error line says."""
    dialog.query_one("#export-path", Input).value = path
    dialog.query_one("#export-path", Input).focus()
    await pilot.press("enter")
    await settle(pilot)
    if pilot.app.screen is not dialog:
        return f"(the dialog closed: {pilot.app.screen})"
    return str(dialog.query_one("#export-error", Static).render())


async def test_the_sql_screen_never_exports_over_its_own_database(
    runs_db: tuple[Path, list[str]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The issue's steps: `s`, SELECT 42, ctrl+r, ctrl+e, the database's own path, enter."""
    db, run_ids = runs_db
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    spellings = _spellings(db, work)
    before = _sha(db)
    app = create_app(db)
    async with app.run_test(size=(100, 30)) as pilot:
        dialog = await _run_and_open_export(pilot, "SELECT 42 AS a")
        for spelling in spellings:
            said = await _export_to(pilot, dialog, spelling)
            assert app.screen is dialog, spelling  # (still open: choose another path)
            assert said.startswith("export failed: refused:"), (spelling, said)
            assert "\n" not in said
    assert _sha(db) == before
    assert not (db.parent / (db.name + ".wal")).exists()
    assert not list(work.glob(".*.tmp")) and not list(db.parent.glob(".*.tmp"))
    assert main(["--db", str(db), "runs"]) == 0  # every run is still there
    out = capsys.readouterr().out
    assert all(run_id[:6] in out for run_id in run_ids)


async def test_the_sql_screen_asks_before_replacing_a_file(
    runs_db: tuple[Path, list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db, _ = runs_db
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    kept = work / "kept.csv"
    kept.write_text("precious\n")
    app = create_app(db)
    async with app.run_test(size=(100, 30)) as pilot:
        dialog = await _run_and_open_export(pilot, "SELECT 42 AS a")
        await _export_to(pilot, dialog, "kept.csv")
        asked = app.screen
        assert isinstance(asked, ConfirmScreen)  # asked: n keeps the file
        await pilot.press("n")
        await settle(pilot)
        assert app.screen is dialog and kept.read_text() == "precious\n"
        assert "was kept" in str(dialog.query_one("#export-error", Static).render())
        await _export_to(pilot, dialog, "kept.csv")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await settle(pilot)
        assert isinstance(app.screen, SqlScreen)
        assert kept.read_text().splitlines() == ["a", "42"]
    assert not list(work.glob(".*.tmp"))


DISK_FULL = """
import json, resource, signal, sys
from pathlib import Path
from haf_tui.store import StoreError, open_store
db, target, fmt = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
big = "SELECT i, md5(i::VARCHAR) || md5((-i)::VARCHAR) AS pad FROM range(200000) t(i)"
with open_store(Path(db), read_only=True) as store:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # (a write past the limit: EFBIG)
    _, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1_000_000, hard))
    try:
        store.export_user(big, None, target, fmt, overwrite=True)
    except StoreError as exc:
        print(json.dumps(str(exc)))
    else:
        print(json.dumps(None))
"""
"""Exports 12 MB under a 1 MB file size limit, as on a full disk, in a process of its own: the
limit is the whole process's (every thread's files), and a hang is a failure after
``timeout``, not a test that never ends."""

REPO = Path(__file__).resolve().parents[2]


def _export_with_a_full_disk(db: Path, target: Path, fmt: str, repeat: int) -> list[str]:
    """The error lines of ``repeat`` exports that fill the disk; fails the test on a hang."""
    said: list[str] = []
    for _ in range(repeat):
        try:
            done = subprocess.run(
                [sys.executable, "-c", DISK_FULL, str(db), str(target), fmt],
                capture_output=True,
                text=True,
                timeout=120,
                cwd=REPO,
                env={**os.environ, "PYTHONPATH": str(REPO)},
            )
        except subprocess.TimeoutExpired:
            pytest.fail(f"a {fmt} export that fills the disk hung (over 120 s)")
        assert done.returncode == 0, done.stderr
        error = json.loads(done.stdout)
        assert error is not None, "the export did not fail under the file size limit"
        said.append(error)
    return said


def test_a_failed_export_leaves_the_old_file_and_no_temporary_file(
    runs_db: tuple[Path, list[str]], tmp_path: Path
) -> None:
    """The query fails after 200,000 rows were written, or the disk fills up after 1 MB of a
    12 MB file: the file the export would replace is unchanged, and nothing else is left.

    (With DuckDB 2.0's asynchronous writes the disk-full export deadlocked now and then, in
    COPY, aborting the failed write, and printed a JSON blob otherwise: the export's writer
    writes synchronously now; each try runs in its own process, bounded in time.)"""
    db, _ = runs_db
    target = tmp_path / "out.csv"
    target.write_text("old\n")
    failing = "SELECT if(i < 200000, i, error('boom')) AS i FROM range(300000) t(i)"
    with open_store(db, read_only=True) as store:
        for fmt in ("csv", "parquet"):
            with pytest.raises(StoreError, match="boom"):
                store.export_user(failing, None, target, fmt, overwrite=True)
            assert target.read_text() == "old\n"
    for fmt in ("csv", "parquet"):
        for error in _export_with_a_full_disk(db, target, fmt, repeat=3):
            assert error.startswith(f"export to {target} failed: "), error
            assert error.endswith("File too large"), error  # (one plain line, no JSON)
            assert target.read_text() == "old\n"
    with open_store(db, read_only=True) as store:
        assert store.export_user("SELECT 1 AS i", None, target, "csv", overwrite=True) == 1
    assert target.read_text().splitlines() == ["i", "1"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "out.csv"]


def test_haf_export_refuses_the_database_and_asks_for_overwrite(
    runs_db: tuple[Path, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A database that happens to sit where ``haf export`` writes (``out/RUN/runs.csv``) is
    refused; a second export into the same folder needs ``--overwrite``."""
    db, run_ids = runs_db
    run_id = run_ids[0]
    out = tmp_path / "out"
    (out / run_id).mkdir(parents=True)
    there = out / run_id / "runs.csv"
    db.rename(there)
    before = _sha(there)
    assert main(["--db", str(there), "export", run_id, "--format", "csv", "--out", str(out)]) == 2
    assert "is the open database's file" in one_line_error(capsys)
    assert _sha(there) == before
    assert sorted(p.name for p in (out / run_id).iterdir()) == ["runs.csv"]  # nothing written
    there.rename(db)

    exported = ["--db", str(db), "export", run_id, "--format", "csv", "--out", str(out)]
    assert main(exported) == 0
    tokens = out / run_id / "tokens.csv"
    tokens.write_text("edited by hand\n")
    capsys.readouterr()
    assert main(exported) == 2  # an earlier export is there: not replaced without asking
    assert "pass --overwrite" in one_line_error(capsys)
    assert tokens.read_text() == "edited by hand\n"
    assert main([*exported, "--overwrite"]) == 0
    assert tokens.read_text() != "edited by hand\n"
    assert not list((out / run_id).glob(".*.tmp"))
