"""The explorer's first reads of a run (the run, its instances' stored notes, the runs related
to it) are kept by the database's state, as its rows are: read once per state, read again
after any write, each caller given dicts of its own."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchmarks.benchdata import build_bench_db
from haf_tui.methods.registry import methods
from haf_tui.store import open_store
from haf_tui.store.annotations import save_note
from haf_tui.tui.instance_reader import kept_run_context
from haf_tui.tui.method_parts import explorer_parts
from haf_tui.tui.run_cache import VALUES_CACHE, database_state
from tests.support.store_copy import AN_HOUR


@pytest.fixture
def db(tmp_path: Path) -> tuple[Path, str, str]:
    """A small store, written an hour ago (what is read from it is kept): its path, its run
    and the run's first instance."""
    path = tmp_path / "haf.duckdb"
    (run_id,) = build_bench_db(path, n_instances=4, n_runs=1, seed=3)
    with open_store(path, read_only=True) as store:
        (first,) = store.connection.execute(
            "SELECT instance_id FROM instance_results WHERE run_id = ? ORDER BY 1 LIMIT 1",
            [run_id],
        ).fetchone() or ("",)
    _settle(path)
    VALUES_CACHE.clear()
    return path, run_id, str(first)


def _settle(path: Path) -> None:
    """The file and its log as if written an hour before they were (their state can be
    trusted; a write still tells, by its own time)."""
    hour = AN_HOUR * 1_000_000_000
    for part in (path, path.with_name(path.name + ".wal")):
        if part.exists():
            stat = part.stat()
            os.utime(part, ns=(stat.st_atime_ns - hour, stat.st_mtime_ns - hour))


def test_one_state_is_read_once_and_each_caller_gets_its_own_dicts(
    db: tuple[Path, str, str],
) -> None:
    path, run_id, _ = db
    parts, _ = explorer_parts(methods().values())
    state = database_state(path)
    assert state is not None
    with open_store(path, read_only=True) as store:
        run, notes, related = kept_run_context(store, run_id[:8], parts, state)
    assert run.run_id == run_id  # (a prefix resolved)
    notes["x"] = notes.get("x")  # type: ignore[assignment]  # (the explorer adds to its dicts)
    related["x"] = ()
    computed = VALUES_CACHE.computed
    with open_store(path, read_only=True) as store:
        store.close()  # (a read now would fail: the kept values are given, not read)
        again, notes_again, related_again = kept_run_context(store, run_id[:8], parts, state)
    assert VALUES_CACHE.computed == computed
    assert again == run and "x" not in notes_again and "x" not in related_again


def test_a_note_written_is_read_under_the_new_state(db: tuple[Path, str, str]) -> None:
    path, run_id, first = db
    parts, _ = explorer_parts(methods().values())
    before = database_state(path)
    with open_store(path, read_only=True) as store:
        _, notes, _ = kept_run_context(store, run_id, parts, before)
    assert first not in notes
    with open_store(path) as store:
        save_note(store, run_id, first, "look again")
    _settle(path)
    after = database_state(path)
    assert after is not None and after != before
    with open_store(path, read_only=True) as store:
        _, notes, _ = kept_run_context(store, run_id, parts, after)
    assert notes[first].note == "look again"


def test_without_a_state_nothing_is_kept(db: tuple[Path, str, str]) -> None:
    path, run_id, _ = db
    parts, _ = explorer_parts(methods().values())
    with open_store(path, read_only=True) as store:
        kept_run_context(store, run_id, parts, None)
        kept_run_context(store, run_id, parts, None)
    assert VALUES_CACHE.computed == 0  # (nothing computed to be kept)
