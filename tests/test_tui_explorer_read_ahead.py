"""The instances the explorer opens on, read ahead (issue 44 §2): the runs list reads them after
the run's rows, while it is shown or for an explorer that says it is opening, and an explorer
that finds them kept shows them with its list, without reading them; one read elsewhere, or
none at all, is read by the explorer itself and kept for its next opening. What is kept is
what a read gives."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import duckdb
import pytest

from benchmarks.benchdata import build_bench_db
from haf_tui.config import RunConfig
from haf_tui.methods.registry import methods, methods_of
from haf_tui.reports import instance_rows
from haf_tui.store import StoreError
from haf_tui.tui import create_app, instance_reader, metrics_data, read_ahead
from haf_tui.tui.method_parts import attached_readers, explorer_parts, related_runs
from haf_tui.tui.run_cache import VALUES_CACHE, database_state
from haf_tui.tui.screens import explorer as explorer_screen
from haf_tui.tui.screens import explorer_detail
from haf_tui.tui.screens import home as home_screen
from haf_tui.tui.screens.explorer import ExplorerScreen
from haf_tui.tui.screens.home import HomeScreen
from haf_tui.tui.store_reader import StoreReader
from tests.support import settle, until
from tests.support.store_copy import store_copy

NEVER = 10_000.0
"""A rest the runs list's cursor never reaches in a test."""
LONG = 30.0
"""How long a test waits for what must come (it only catches "never")."""


@pytest.fixture(scope="module")
def template_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("explorer-read-ahead") / "template.duckdb"
    build_bench_db(path, n_instances=20, n_runs=2, seed=13)
    return path


@pytest.fixture
def db(template_db: Path, tmp_path: Path) -> Path:
    """A copy of the store, written an hour ago (what is read from it is kept)."""
    return store_copy(template_db, tmp_path)


def _instance_reads(monkeypatch: pytest.MonkeyPatch) -> list[tuple[tuple[str, ...], int]]:
    """Every instance read (its ids, the thread that made it), the read ahead's and the
    explorer's."""
    reads: list[tuple[tuple[str, ...], int]] = []
    real = instance_reader.read_instances

    def counted(store: Any, run_id: str, ids: list[str], *args: Any, **kwargs: Any) -> Any:
        reads.append((tuple(ids), threading.get_ident()))
        return real(store, run_id, ids, *args, **kwargs)

    monkeypatch.setattr(instance_reader, "read_instances", counted)
    monkeypatch.setattr(explorer_detail, "read_instances", counted)
    return reads


def _rows_reads(monkeypatch: pytest.MonkeyPatch, held: threading.Event) -> list[int]:
    """The threads of the explorer's row reads; the first waits for ``held``."""
    threads: list[int] = []
    real = instance_rows

    def holding(store: Any, run_id: str) -> Any:
        threads.append(threading.get_ident())
        if len(threads) == 1:
            assert held.wait(LONG)
        return real(store, run_id)

    monkeypatch.setattr(instance_reader, "instance_rows", holding)
    return threads


def _shown_first(explorer: ExplorerScreen) -> bool:
    """Whether the explorer shows its first instance (read, under the cursor)."""
    return explorer.current is not None and explorer.current in explorer.cache


async def test_an_explorer_opened_after_the_read_ahead_shows_its_first_instance_unread(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = _instance_reads(monkeypatch)
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, HomeScreen)
        await until(pilot, lambda: bool(reads) and not read_ahead._ahead_under_way)
        assert len(reads) == 1  # (the read ahead's: the first with reasons and its neighbours)
        await pilot.press("e")
        await settle(pilot)
        explorer = app.screen
        assert isinstance(explorer, ExplorerScreen) and _shown_first(explorer)
        assert explorer.current == reads[0][0][0]
        assert len(reads) == 1  # (shown as read ahead, not read again)


async def test_an_explorer_with_nothing_read_ahead_keeps_its_first_instances(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(home_screen, "FIRST_REST_SECONDS", NEVER)
    monkeypatch.setattr(home_screen, "REST_SECONDS", NEVER)
    reads = _instance_reads(monkeypatch)
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
        explorer = app.screen
        assert isinstance(explorer, ExplorerScreen) and _shown_first(explorer)
        assert len(reads) == 1  # (the explorer's own read)
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
        again = app.screen
        assert isinstance(again, ExplorerScreen) and again is not explorer
        assert _shown_first(again) and again.current == explorer.current
        assert len(reads) == 1  # (kept by the database's state: not read a second time)


async def test_an_explorer_opening_as_the_rows_are_read_ahead_has_its_instances_read_there(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The explorer says it is opening before its own first reads: the read ahead, its rows
    done before the explorer waits for them and the list no longer shown, still reads the
    instances the explorer opens on, once, in its own thread."""
    monkeypatch.setattr(home_screen, "REST_SECONDS", NEVER)
    reads = _instance_reads(monkeypatch)
    wanted = threading.Event()
    rows_threads = _rows_reads(monkeypatch, held=wanted)
    real_want, real_wait = read_ahead.want_rows, read_ahead.wait_for_rows

    def want(reader: StoreReader, run_id: str) -> None:
        real_want(reader, run_id)
        wanted.set()  # (the read ahead's rows go on now)

    def wait_after_the_read_ahead(reader: StoreReader, run_id: str) -> bool:
        deadline = time.monotonic() + LONG
        while read_ahead._rows_under_way and time.monotonic() < deadline:
            time.sleep(0.01)  # (the read ahead has passed the point where it asks)
        return real_wait(reader, run_id)

    monkeypatch.setattr(explorer_screen, "want_rows", want)
    monkeypatch.setattr(explorer_screen, "wait_for_rows", wait_after_the_read_ahead)
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: bool(rows_threads))  # (the read ahead under way, held)
        await pilot.press("e")
        await settle(pilot)
        explorer = app.screen
        assert isinstance(explorer, ExplorerScreen) and _shown_first(explorer)
        assert [thread for _, thread in reads] == [rows_threads[0]]


async def test_an_explorer_waiting_for_the_rows_gets_its_instances_with_them(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rows being read ahead are let go only with the instances the explorer opens on: an
    explorer waiting for the rows while those instances are still being read ahead does not
    read them a second time beside them."""
    monkeypatch.setattr(home_screen, "REST_SECONDS", NEVER)
    reads: list[int] = []
    real_read = instance_reader.read_instances
    explorer_waits = threading.Event()

    def held(store: Any, run_id: str, ids: list[str], *args: Any, **kwargs: Any) -> Any:
        reads.append(threading.get_ident())
        if len(reads) == 1:  # (the read ahead's: until the explorer waits for the rows)
            assert explorer_waits.wait(LONG)
        return real_read(store, run_id, ids, *args, **kwargs)

    monkeypatch.setattr(instance_reader, "read_instances", held)
    monkeypatch.setattr(explorer_detail, "read_instances", held)
    real_wait = read_ahead.wait_for_rows

    def waiting(reader: StoreReader, run_id: str) -> bool:
        explorer_waits.set()
        return real_wait(reader, run_id)

    monkeypatch.setattr(explorer_screen, "wait_for_rows", waiting)
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: bool(reads))  # (the list shown, its instances being read)
        await pilot.press("e")
        await settle(pilot)
        explorer = app.screen
        assert isinstance(explorer, ExplorerScreen) and _shown_first(explorer)
        assert len(reads) == 1


async def test_the_first_instance_read_ahead_is_what_the_explorer_reads(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read ahead with the explorer's metrics and related runs' items: the same as the
    explorer's own read of it."""
    reads = _instance_reads(monkeypatch)
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await until(pilot, lambda: bool(reads) and not read_ahead._ahead_under_way)
        await pilot.press("e")
        await settle(pilot)
        explorer = app.screen
        assert isinstance(explorer, ExplorerScreen) and _shown_first(explorer)
        assert len(reads) == 1 and explorer.current is not None
        shown = explorer.cache[explorer.current]
        assert shown.metrics  # (the run's instance metrics came with it)
        with app.reader.reading() as store:
            fresh = instance_reader.read_instances(
                store,
                explorer.run_id,
                [explorer.current],
                explorer._attached(),
                instance_reader.metric_names(explorer.methods),
            )
        assert fresh == [shown]


async def test_a_sort_chosen_before_the_list_comes_orders_it(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("FIRST_REST_SECONDS", "REST_SECONDS"):  # (the explorer reads its rows itself)
        monkeypatch.setattr(home_screen, name, NEVER)
    released = threading.Event()
    _rows_reads(monkeypatch, held=released)
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("e")
        explorer = app.screen
        assert isinstance(explorer, ExplorerScreen) and not explorer.instances
        await pilot.press("O")  # (reversed, before the rows have come)
        released.set()
        await settle(pilot)
        listed = [str(row["instance_id"]) for row in explorer.instance_list.rows]
        every = [str(row["instance_id"]) for row in explorer.instances]
        assert len(listed) == len(every) > 1 and listed == every[::-1]


async def test_nothing_is_read_ahead_for_an_explorer_no_one_opens(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The list left for another screen as its rows are read ahead: the instances the
    explorer would open on are not read beside that screen's reads."""
    monkeypatch.setattr(home_screen, "REST_SECONDS", NEVER)
    reads = _instance_reads(monkeypatch)
    left = threading.Event()
    rows_threads = _rows_reads(monkeypatch, held=left)
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: bool(rows_threads))
        await pilot.press("s")  # (the SQL screen: it reads nothing of the run)
        await until(pilot, lambda: not isinstance(app.screen, HomeScreen))
        left.set()
        await until(pilot, lambda: not read_ahead._ahead_under_way)
        await settle(pilot)
        assert reads == []


def test_what_is_kept_is_what_a_read_gives(db: Path) -> None:
    """Kept by the database's state and the ids (another state or other ids: read again);
    with no state (a database being written), read and not kept."""
    reader = StoreReader(db)
    try:
        state = database_state(db)
        assert state is not None
        with reader.reading() as store:
            run_id = str(store.list_runs()[0]["run_id"])
            suites = RunConfig.model_validate_json(store.get_run(run_id).config_json).suites
            parts, _ = explorer_parts(methods().values())
            attached = attached_readers(parts, related_runs(store, run_id, suites, parts))
            shown = instance_reader.metric_names(methods_of(RunConfig(suites=suites)))
            ids = instance_reader.opening_ids(instance_rows(store, run_id))
            assert len(ids) > 1

            def kept(which: tuple[str, ...], at: Any = state) -> list[Any]:
                return instance_reader.kept_opening(store, run_id, which, attached, shown, at)

            computed = VALUES_CACHE.computed
            first = kept(ids)
            fresh = instance_reader.read_instances(store, run_id, list(ids), attached, shown)
            assert first == fresh and [data.instance_id for data in first] == list(ids)
            assert kept(ids) is first and VALUES_CACHE.computed == computed + 1
            assert kept(ids[1:]) == fresh[1:] and VALUES_CACHE.computed == computed + 2
            other = (state[0], ((1, 2, 3), None))  # (the file as it was before a write)
            assert kept(ids, other) == fresh and VALUES_CACHE.computed == computed + 3
            assert kept(ids[:1], None) == fresh[:1] and VALUES_CACHE.computed == computed + 3
            assert kept(ids[:1]) == fresh[:1] and VALUES_CACHE.computed == computed + 4
    finally:
        reader.close()


@pytest.mark.parametrize(
    "error", [StoreError("a torn page"), duckdb.IOException("a torn page"), KeyError("a part")]
)
def test_a_read_ahead_whose_instances_fail_leaves_them_to_the_explorer(
    db: Path, monkeypatch: pytest.MonkeyPatch, error: Exception
) -> None:
    """The instances' read failing (the explorer reads them and says why), the read ahead goes
    on to the metrics panel and ends without an error."""
    reports: list[str] = []
    real_report = metrics_data.run_report

    def counted(store: Any, name: str, *args: Any) -> Any:
        reports.append(name)
        return real_report(store, name, *args)

    def failing(*_: Any, **__: Any) -> Any:
        raise error

    monkeypatch.setattr(metrics_data, "run_report", counted)
    monkeypatch.setattr(instance_reader, "read_instances", failing)
    reader = StoreReader(db)
    try:
        with reader.reading() as store:
            run_id = str(store.list_runs()[0]["run_id"])
        assert read_ahead.read_ahead(reader, run_id)
    finally:
        reader.close()
    assert reports  # (the metrics screen's first panel, read ahead all the same)
