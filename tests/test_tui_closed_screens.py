"""A closed screen is collected: nothing the app or Textual keeps holds it or its widgets'
drawn lines (the metrics screen left ~15k live objects behind at each close). With the metrics,
SQL and wizard screens built ahead: the one shown and closed goes, the one built again after it
goes too once it is shown and closed, and the ones built ahead and never shown stay one each."""

from __future__ import annotations

import asyncio
import contextvars
import gc
import weakref
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.screen import Screen

import haf_tui.tui.app as app_module
from benchmarks.benchdata import build_bench_db
from haf_tui.tui import create_app
from haf_tui.tui.closed_screens import JobContextExecutor, job_context_executor
from haf_tui.tui.screens.base import HafScreen
from haf_tui.tui.screens.compare import CompareScreen
from haf_tui.tui.screens.explorer import ExplorerScreen
from haf_tui.tui.screens.home import HomeScreen
from haf_tui.tui.screens.metrics import MetricsScreen
from haf_tui.tui.screens.sql import SqlScreen
from haf_tui.tui.screens.wizard import WizardScreen
from haf_tui.tui.screens_ahead import kinds_ahead
from tests.support import settle, until

KEYS: dict[str, type[HafScreen[Any]]] = {
    "m": MetricsScreen,
    "s": SqlScreen,
    "n": WizardScreen,
    "e": ExplorerScreen,
    "c": CompareScreen,
}
DEADLINE = 30.0
"""Seconds a wait may take (generous for a loaded machine: it only catches "never")."""


@pytest.fixture
def bench_db(tmp_path: Path) -> Path:
    db = tmp_path / "haf.duckdb"
    build_bench_db(db, n_instances=4, n_runs=2, seed=3)
    return db


@pytest.fixture(autouse=True)
def collect_soon(monkeypatch: pytest.MonkeyPatch) -> None:
    """The app's own collection after a close, and the rebuild of a screen built ahead, come at
    once (their delays only spare the keys typed right after a close)."""
    monkeypatch.setattr(app_module, "REFREEZE_DELAY", 0.01)
    monkeypatch.setattr(app_module, "KEYS_QUIET", 0.0)
    monkeypatch.setattr(app_module, "REBUILD_DELAY", 0.01)


def full_collection() -> None:
    """What the app froze back to the collector, a full pass, frozen again as the app does."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()


async def built_ahead(pilot: Pilot[Any]) -> dict[type[HafScreen[Any]], HafScreen[Any]]:
    """The screens built ahead, once one of each kind is kept and mounted."""

    def ready() -> bool:
        kept = pilot.app.ahead.kept()  # type: ignore[attr-defined]
        return len(kept) == len(kinds_ahead()) and all(screen.is_mounted for screen in kept)

    await until(pilot, ready, DEADLINE)
    return {type(screen): screen for screen in pilot.app.ahead.kept()}  # type: ignore[attr-defined]


async def collected(pilot: Pilot[Any], refs: list[weakref.ref[Any]], what: str) -> None:
    """Every one of ``refs`` collected, after full collections to a deadline."""

    def gone() -> bool:
        full_collection()
        return all(ref() is None for ref in refs)

    await until(pilot, gone, DEADLINE)


def live(kind: type[Screen[Any]]) -> weakref.WeakSet[Screen[Any]]:
    """The screens of ``kind`` alive after a full collection (frozen ones too)."""
    gc.unfreeze()
    gc.collect()
    found: weakref.WeakSet[Screen[Any]] = weakref.WeakSet(
        thing for thing in gc.get_objects() if type(thing) is kind
    )
    gc.freeze()
    return found


async def open_and_close(
    pilot: Pilot[Any], key: str, kind: type[HafScreen[Any]], built: HafScreen[Any] | None
) -> list[weakref.ref[Any]]:
    """Open the screen of ``key`` (``built``: the one built ahead it shows) and close it: weak
    references to it, its widgets and their drawn lines (each widget's styles cache)."""
    expected = None if built is None else weakref.ref(built)
    del built
    await pilot.press(key)
    await until(pilot, lambda: isinstance(pilot.app.screen, kind), DEADLINE)
    await pilot.app.workers.wait_for_complete()
    await settle(pilot)
    screen = pilot.app.screen
    assert expected is None or screen is expected()
    widgets = list(screen.query("*"))
    assert widgets
    refs: list[weakref.ref[Any]] = [weakref.ref(screen)]
    refs += [weakref.ref(widget) for widget in widgets]
    refs += [weakref.ref(widget._styles_cache) for widget in widgets]
    del screen, widgets
    await pilot.press("escape")
    await until(pilot, lambda: isinstance(pilot.app.screen, HomeScreen), DEADLINE)
    return refs


@pytest.mark.parametrize(("key", "kind"), list(KEYS.items()), ids=list(KEYS))
async def test_a_closed_screen_and_its_widgets_drawn_lines_are_collected(
    bench_db: Path, key: str, kind: type[HafScreen[Any]]
) -> None:
    earlier = live(kind)  # (an app of an earlier test: a logging handler made during it keeps it)
    async with create_app(bench_db).run_test(size=(200, 50)) as pilot:
        first = await built_ahead(pilot)
        refs = await open_and_close(pilot, key, kind, first.pop(kind, None))
        await collected(pilot, refs, f"the closed {kind.__name__}")
        if kind in kinds_ahead():  # (its screen built again after the close: shown and closed)
            again = (await built_ahead(pilot))[kind]
            refs = await open_and_close(pilot, key, kind, again)
            del again
            await collected(pilot, refs, f"the {kind.__name__} built again")
        now = await built_ahead(pilot)  # (the one built after the last close, mounted)
        for other, screen in first.items():  # (never shown: the very screens built first)
            assert now[other] is screen
        del now, first
        assert len(set(live(kind)) - set(earlier)) == (1 if kind in kinds_ahead() else 0)


async def test_the_thread_pool_runs_each_job_in_a_copy_of_the_caller_s_context() -> None:
    """A job's context variables are set in a copy: the pool's thread keeps none of them (a
    thread worker's ``active_worker`` kept the worker, and its screen, until the next)."""
    seen: contextvars.ContextVar[str] = contextvars.ContextVar("seen")
    seen.set("caller")

    def job() -> tuple[str, str]:
        before = seen.get("none")
        seen.set("job")
        return before, seen.get()

    def after() -> str:
        return seen.get("none")

    with JobContextExecutor(max_workers=1) as pool:
        assert pool.submit(job).result() == ("caller", "job")
        seen.set("caller again")
        assert pool.submit(after).result() == "caller again"
    assert seen.get() == "caller again"


async def test_the_loop_s_thread_pool_is_made_one_that_copies_the_context_once() -> None:
    """A plain default pool there before is shut down (its threads end once its jobs are done);
    a second call keeps the pool it made."""
    loop = asyncio.get_running_loop()
    assert await loop.run_in_executor(None, lambda: 1) == 1  # (the plain default pool made)
    plain = loop._default_executor  # type: ignore[attr-defined]
    assert isinstance(plain, ThreadPoolExecutor) and not isinstance(plain, JobContextExecutor)
    job_context_executor(loop)
    made = loop._default_executor  # type: ignore[attr-defined]
    assert isinstance(made, JobContextExecutor)
    with pytest.raises(RuntimeError):  # (shut down: it takes no more jobs)
        plain.submit(lambda: None)
    job_context_executor(loop)
    assert loop._default_executor is made  # type: ignore[attr-defined]
    assert await loop.run_in_executor(None, lambda: 2) == 2
