"""The app's warm-up steps aside for a screen's first reads (issue 44 §2): its first steps (what
the first key on the runs list needs) are taken at once, each later one once no key has come for
a moment and the store has gone unread for a quiet spell."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from benchmarks.benchdata import build_bench_db
from haf_tui.tui import app as app_module
from haf_tui.tui import create_app
from haf_tui.tui.screens import home as home_screen
from haf_tui.tui.store_reader import StoreReader
from tests.support import until
from tests.test_tui_first_key import LONG, NEVER

ROOT = Path(__file__).resolve().parents[1]

SPELL = 1.5
"""A quiet spell a read begun a moment after its start falls in, however loaded the machine."""


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("warm-up") / "haf.duckdb"
    build_bench_db(path, n_instances=8, n_runs=1, seed=5)
    return path


@contextmanager
def _held(reader: StoreReader) -> Iterator[threading.Event]:
    """A read held open in another thread until the event yielded is set."""
    release, holding = threading.Event(), threading.Event()

    def hold() -> None:
        with reader.reading():
            holding.set()
            release.wait(LONG)

    thread = threading.Thread(target=hold)
    thread.start()
    assert holding.wait(LONG)
    try:
        yield release
    finally:
        release.set()
        thread.join(LONG)


def _in_thread(call: Callable[[], object]) -> tuple[threading.Thread, list[object]]:
    result: list[object] = []
    thread = threading.Thread(target=lambda: result.append(call()))
    thread.start()
    return thread, result


def test_waiting_for_the_store_to_go_quiet(db: Path) -> None:
    reader = StoreReader(db)
    try:
        assert reader.wait_quiet(0.01, LONG)  # (no one reads)
        assert not reader.wait_quiet(0.5, 0.1)  # (its deadline before a whole quiet spell)
        with _held(reader) as release:
            thread, result = _in_thread(lambda: reader.wait_quiet(0.01, LONG))
            thread.join(0.3)
            assert thread.is_alive() and not result  # (a read under way: still waiting)
            release.set()
            thread.join(LONG)
            assert result == [True]
        with _held(reader):
            assert not reader.wait_quiet(0.01, 0.1)  # (still read at the deadline)
        thread, result = _in_thread(lambda: reader.wait_quiet(SPELL, LONG))
        time.sleep(0.1)  # (in its spell; before it, the read is waited for too)
        with reader.reading():  # (begun before the spell or in it: no quiet while it lasts)
            thread.join(2 * SPELL)  # (past the spell: a read it missed would have let it go)
            assert thread.is_alive() and not result
        thread.join(LONG)
        assert result == [True]
    finally:
        reader.close()


async def test_the_warm_up_takes_its_first_steps_at_once_and_waits_for_reads_after(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    taken: list[int] = []
    steps = [lambda number=number: taken.append(number) for number in range(5)]
    monkeypatch.setattr(app_module, "_warm_steps", lambda: steps)
    monkeypatch.setattr(app_module, "FIRST_KEY_STEPS", 2)
    monkeypatch.setattr(app_module, "WARM_YIELD_SECONDS", LONG)
    monkeypatch.setattr(home_screen, "REST_SECONDS", NEVER)
    app = create_app(db)
    with _held(app.reader) as release:
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: taken == [0, 1])
            await pilot.pause(0.3)
            assert taken == [0, 1]  # (a read under way: the third step waits)
            release.set()
            await until(pilot, lambda: taken == [0, 1, 2, 3, 4])


def test_the_warm_up_waits_for_a_key_to_be_a_moment_old(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = create_app(db)
    try:
        app._last_key = time.monotonic()
        start = time.monotonic()
        app._wait_for_quiet(start + LONG)
        assert time.monotonic() - app._last_key >= app_module.KEY_QUIET_SECONDS
        monkeypatch.setattr(app_module, "KEY_QUIET_SECONDS", LONG)  # (only "never" is late)
        app._last_key = time.monotonic()
        start = time.monotonic()
        app._wait_for_quiet(start + 0.05)  # (its deadline first)
        assert time.monotonic() - start < LONG / 2
    finally:
        app.reader.close()


WARM_UP_PROBE = """
import asyncio, json, sys, threading
from haf_tui.reports import bootstrap
from haf_tui.tui import create_app
from haf_tui.tui.screens_ahead import kinds_ahead
from tests.support import settle, until


class Seen:
    on_main = []  # (each import of scipy.stats: whether on the main thread)

    def find_spec(self, name, path=None, target=None):
        if name == "scipy.stats":
            self.on_main.append(threading.current_thread() is threading.main_thread())
        return None


sys.meta_path.insert(0, Seen())


async def probe():
    app = create_app({db!r})
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: len(app.ahead.kept()) == len(kinds_ahead()))
        await settle(pilot)  # (the warm-up done: the screens ahead come after it)
        idle = "scipy.stats" in sys.modules
        versions = bootstrap.library_version.cache_info().currsize
        await pilot.press("c")
        screen = app.screen
        await until(pilot, lambda: bool(screen.stats) and not any(
            getattr(found, "computing", False) for found in screen.stats))
        text = str(screen.query_one("#cmp-stats-view").text())
        return {{"idle": idle, "versions": versions, "compared": "scipy.stats" in sys.modules,
                 "interval": "[" in text, "on_main": Seen.on_main}}

print("\\nWARM " + json.dumps(asyncio.run(probe())))
"""


def test_the_idle_app_imports_no_scipy_and_a_comparison_imports_it_where_it_computes(
    tmp_path: Path,
) -> None:
    """A key can come during any of the warm-up's steps and cannot stop one: no step is
    scipy's statistics (0.75–1 s of the interpreter in one import; a key 1.0–1.4 s after the
    runs list appeared opened its screen in 250–980 ms beside it). The warm-up reads numpy's
    and scipy's versions (the comparison's kept intervals are keyed by them); the comparison
    imports scipy itself where it computes its first interval, in its worker (on the main
    thread the import would freeze the screen for as long). A fresh interpreter: scipy
    imported by another test would hide the import here."""
    db = tmp_path / "haf.duckdb"
    build_bench_db(db, n_instances=8, n_runs=2, seed=5)
    env = os.environ | {"HAF_HOME": str(tmp_path / "home"), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", WARM_UP_PROBE.format(db=str(db))],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.rsplit("\nWARM ", 1)[-1].splitlines()[0])
    assert found == {
        "idle": False,
        "versions": 2,
        "compared": True,
        "interval": True,
        "on_main": [False],
    }
