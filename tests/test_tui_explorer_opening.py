"""The explorer's opening (issue 44 §2: the list and the first instance under 300 ms at 5,000
instances): the worker that reads the list reads the instance the list opens on too, with its
neighbours, so no second read waits for the list to be shown first; what it shows is what a
key's read shows."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from benchmarks.benchdata import build_bench_db
from benchmarks.tui_latency import settle
from haf_tui.reports import first_with_reasons, instance_rows, queries
from haf_tui.store import Store, StoreError, open_store
from haf_tui.store.instance_readers import run_answers
from haf_tui.tui import create_app, instance_reader
from haf_tui.tui.instance_reader import opening_ids, read_instances
from haf_tui.tui.run_cache import VALUES_CACHE
from haf_tui.tui.screens import explorer_detail
from haf_tui.tui.screens import home as home_screen
from haf_tui.tui.screens.explorer import ExplorerScreen
from haf_tui.tui.screens.explorer_detail import DetailScreen
from haf_tui.tui.widgets.stance_tree import StanceTree

Row = dict[str, Any]


def row(instance_id: str, *, reasons: int = 2, stopped: str | None = None) -> Row:
    return {"instance_id": instance_id, "n_reasons": reasons, "stopped": stopped}


def test_the_opening_ids_are_the_first_with_reasons_and_the_rows_around_it() -> None:
    rows = [row("a", stopped="no reasons", reasons=0), row("b"), row("c"), row("d"), row("e")]
    assert opening_ids(rows, (2, 1)) == ("b", "c", "d", "a")
    assert opening_ids(rows, (3, 1)) == ("b", "c", "d", "e", "a")
    assert opening_ids(rows[:2], (3, 1)) == ("b", "a")  # (none after it)
    assert opening_ids([row("x")], (3, 1)) == ("x",)
    assert opening_ids([row("a", stopped="no reasons")], (3, 1)) == ()
    assert opening_ids([], (3, 1)) == ()


@pytest.fixture(scope="module")
def synth(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    path = tmp_path_factory.mktemp("opening") / "haf.duckdb"
    run_id, _ = build_bench_db(path, n_instances=40, n_runs=2, seed=11)
    return path, run_id


async def test_the_list_worker_reads_the_opening_instance_and_no_key_read_repeats_it(
    synth: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db, run_id = synth
    asked: list[list[str]] = []
    real_batch = DetailScreen.load_batch

    def counted(self: DetailScreen, ids: list[str]) -> Any:
        asked.append(list(ids))
        return real_batch(self, ids)

    monkeypatch.setattr(DetailScreen, "load_batch", counted)
    with open_store(db, read_only=True) as store:
        rows = instance_rows(store, run_id)
        first = first_with_reasons(rows)
        assert first is not None
        expected = read_instances(store, run_id, [first])[0]
    async with create_app(db).run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        pilot.app.push_screen(ExplorerScreen(run_id))
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, ExplorerScreen)
        assert screen.current == first and first in screen.cache
        assert first in str(screen.query_one("#ex-input", Static).render())
        assert screen.query_one("#ex-tree", StanceTree).root.children  # (its tree drawn)
        assert asked == []  # the opening instance: read once, by the list's worker
        assert not screen.reading
        assert screen.cache[first].detail == expected.detail
        assert screen.cache[first].tokens == expected.tokens
        # a key still reads what is not cached
        screen.instance_list.move_cursor(30)
        await settle(pilot)
        assert asked and screen.current in screen.cache


def _aged(path: Path, at: float) -> None:
    os.utime(path, (at, at))


async def _open(db: Path, run_id: str) -> tuple[list[str], str]:
    """The list's ids and its first row's SoS as the explorer opens (what the screen adds to
    its rows stays its own: never in the next opening's)."""
    async with create_app(db).run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        pilot.app.push_screen(ExplorerScreen(run_id))
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, ExplorerScreen)
        first = screen.instance_list.rows[0]
        assert "added here" not in first
        first["added here"] = True  # (as the notes and the answers are added to the rows)
        return screen.instance_list.row_ids, repr(first.get("sos"))


async def test_opened_again_the_list_is_not_read_until_the_database_is_written(
    synth: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "haf.duckdb"
    shutil.copyfile(synth[0], db)
    run_id = synth[1]
    at_rest = time.time() - 600.0
    _aged(db, at_rest)
    read: list[str] = []
    answered: list[str] = []

    def counted_rows(store: Store, run: str) -> list[dict[str, Any]]:
        read.append(run)
        return instance_rows(store, run)

    def counted_answers(store: Store, run: str) -> dict[str, str]:
        answered.append(run)
        return run_answers(store, run)

    monkeypatch.setattr(instance_reader, "instance_rows", counted_rows)
    monkeypatch.setattr(instance_reader, "run_answers", counted_answers)
    for rest in ("FIRST_REST_SECONDS", "REST_SECONDS"):  # (the runs list reads none ahead)
        monkeypatch.setattr(home_screen, rest, 10_000.0)
    first = await _open(db, run_id)
    assert read == [run_id] and answered == [run_id]
    assert await _open(db, run_id) == first  # the same list, kept: nothing read
    assert read == [run_id] and answered == [run_id]
    with open_store(db) as store:  # the first instance's SoS re-scored
        store.connection.execute(
            "UPDATE instance_metrics SET value = 0.987654 WHERE run_id = ? AND metric = 'sos' "
            "AND instance_id = ?",
            [run_id, first[0][0]],
        )
    _aged(db, at_rest + 1.0)
    again = await _open(db, run_id)
    assert read == [run_id, run_id] and answered == [run_id, run_id]  # read anew
    assert again == (first[0], "0.987654")


async def test_the_app_reads_the_named_queries_in_the_background_at_start(
    synth: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """So that a screen's first report only looks at the query files (issue 44 §2)."""
    monkeypatch.setattr(queries, "_READ", {})
    async with create_app(synth[0]).run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.app.workers.wait_for_complete()
        read = set(queries._READ)
    assert read and read >= set(queries.queries_dir().glob("*.sql"))


async def test_a_failed_opening_read_leaves_the_list_searchable_by_the_answers(
    synth: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db, run_id = synth

    def failing(*_: Any, **__: Any) -> Any:
        raise StoreError("the instance could not be read")

    for rest in ("FIRST_REST_SECONDS", "REST_SECONDS"):  # (the runs list reads none ahead)
        monkeypatch.setattr(home_screen, rest, 10_000.0)
    VALUES_CACHE.clear()  # (none kept by an earlier test)
    monkeypatch.setattr(explorer_detail, "read_instances", failing)
    monkeypatch.setattr(instance_reader, "read_instances", failing)  # (the first instances')
    with open_store(db, read_only=True) as store:
        answers = run_answers(store, run_id)
    async with create_app(db).run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        pilot.app.push_screen(ExplorerScreen(run_id))
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, ExplorerScreen)
        assert not screen.reading  # (the failed read said what it no longer brings)
        said = str(screen.query_one("#ex-input", Static).render())
        assert said.startswith("could not read") and "the instance could not be read" in said
        row = next(r for r in screen.instances if answers.get(str(r["instance_id"])))
        assert answers[str(row["instance_id"])].lower() in row["_haystack"]
