"""Keypress latency of every TUI screen on a large store (``make bench``; the issue asks for
under 100 ms per keypress on 5,000 instances × 4 runs).

What one measurement is: the wall time from posting the key event to the app until it has
*responded*, i.e.

1. every message the key caused has been handled, including those of the messages they caused
   (the screen and all its widgets have empty queues),
2. every worker the key started (a database read) has finished, and the messages it posted
   (its result) have been handled too, and
3. the resulting screen update has been laid out and rendered (``Screen._on_timer_update``,
   what Textual's refresh timer calls at most 60 times a second, run at once for the final
   frame instead of at the next tick; frames in between come from the app's own timer).

So a key that loads an instance counts until the instance is on screen, and a query run counts
until its rows are shown. Pilot's own ``press`` / ``pause`` are not used for the timed part:
each waits for the *process* to look idle in steps of at least 20 ms of sleep, which would add
40–60 ms of harness time to every key, and ``pause`` posts a callback to every widget. The key
event is posted as Pilot posts it, then :func:`settle` polls the message queues of every
screen's widgets and the workers. Terminal output is not included (the headless driver writes
nothing); timers a key sets for later (the explorer reads the instance under the cursor 0.3 s
after typing pauses) are not waited for.

Each scenario starts a fresh app at ``size`` on the runs list, opens its screen with its
opening keys (measured as that screen's "open" action), then presses its keys one at a time.
Scenarios are data (:data:`SCENARIOS`, in :mod:`benchmarks.tui_scenarios`): a screen added
later is one more entry; an entry whose module is missing is reported as skipped. ``--db FILE``
times them on a database of your own (a campaign's) instead of the synthetic store.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import tempfile
import time
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from textual import events
from textual.keys import REPLACED_KEYS, _character_to_key, _get_unicode_name_from_key
from textual.pilot import Pilot
from textual.widget import Widget
from textual.worker import WorkerCancelled, WorkerFailed, WorkerState

from benchmarks.tui_scenarios import SCENARIOS as SCENARIOS
from benchmarks.tui_scenarios import Scenario as Scenario
from haf_tui.tui import create_app

OPEN_SHOWN = "open: screen shown"
OPEN_LOADED = "open: data loaded"


def _key_event(key: str) -> events.Key:
    """The Key event Pilot's ``press`` would send for ``key``."""
    if len(key) == 1 and not key.isalnum():
        key = _character_to_key(key)
    try:
        char: str | None = unicodedata.lookup(
            _get_unicode_name_from_key(REPLACED_KEYS.get(key, key))
        )
    except KeyError:
        char = key if len(key) == 1 else None
    return events.Key(key, char)


def _busy(pilot: Pilot[Any]) -> bool:
    """A worker runs, or a message waits, or a widget is still being mounted, anywhere in the
    app: the screens on its stack and those it builds before their keys."""
    app = pilot.app
    if any(w.state in (WorkerState.PENDING, WorkerState.RUNNING) for w in app.workers):
        return True
    if any(isinstance(node, Widget) and not node.is_mounted for node in app._registry):
        return True
    return any(node.message_queue_size for node in [app, *app._registry])


async def _wait_for_workers(pilot: Pilot[Any]) -> None:
    """Wait for the running workers (a cancelled or failed one counts as finished: the app
    reports its error itself)."""
    for worker in list(pilot.app.workers):
        if worker.state == WorkerState.PENDING:
            await asyncio.sleep(0)
        elif worker.state == WorkerState.RUNNING:
            with contextlib.suppress(WorkerCancelled, WorkerFailed):
                await worker.wait()


async def settle(pilot: Pilot[Any], timeout: float = 60.0) -> None:
    """Until the app has responded (see the module): queues empty, workers done, rendered.

    Frames in between are left to the app's own refresh timer, as in real use; only the last
    one, which shows the result, is drawn at once instead of at the next tick. The queues are
    polled (``asyncio.sleep(0)`` between looks), not probed with a callback per widget as
    ``Pilot.pause`` does: those callbacks alone cost ~20 ms a key on a screen of 60 widgets."""
    deadline, quiet = time.perf_counter() + timeout, 0
    while time.perf_counter() < deadline:
        await asyncio.sleep(0)
        await _wait_for_workers(pilot)
        quiet = 0 if _busy(pilot) else quiet + 1
        if quiet >= 2:  # empty twice in a row: no handler was still under way
            pilot.app.screen._on_timer_update()
            await asyncio.sleep(0)
            if not _busy(pilot):
                return
            quiet = 0
    raise TimeoutError(f"the app was still busy after {timeout:.0f} s")


async def timed_press(pilot: Pilot[Any], key: str) -> float:
    """Milliseconds from posting ``key`` until the app has responded."""
    event = _key_event(key)
    event.set_sender(pilot.app)
    started = time.perf_counter()
    pilot.app.post_message(event)
    await settle(pilot)
    return (time.perf_counter() - started) * 1000


def frame_drawn(screen: Any) -> bool:
    """Whether ``screen`` is mounted and its widgets have handled what they were sent; then its
    first frame is drawn at once (not at the refresh timer's next tick)."""
    nodes = list(screen.walk_children(with_self=True))
    if not screen.is_mounted or any(node.message_queue_size for node in nodes):
        return False
    screen._on_timer_update()
    return True


async def timed_open(
    pilot: Pilot[Any], key: str, screen_class: str | None, timeout: float = 60.0
) -> tuple[float, float]:
    """Milliseconds from posting ``key`` until (1) the new screen is mounted and its first
    frame drawn (what it reads from the database may still be loading, as the screen says),
    and (2) the app has responded in full (:func:`settle`: its reads shown too)."""
    event = _key_event(key)
    event.set_sender(pilot.app)
    started = time.perf_counter()
    pilot.app.post_message(event)
    deadline, shown = started + timeout, None
    while shown is None and time.perf_counter() < deadline:
        await asyncio.sleep(0)
        screen = pilot.app.screen
        if screen_class is not None and type(screen).__name__ != screen_class:
            continue
        if frame_drawn(screen):
            shown = (time.perf_counter() - started) * 1000
    await settle(pilot)
    loaded = (time.perf_counter() - started) * 1000
    return shown if shown is not None else loaded, loaded


def summary(timings: Sequence[float]) -> dict[str, Any]:
    """n, median, p95 and max in ms."""
    if not timings:
        return {"n": 0}
    values = np.asarray(timings)
    return {
        "n": len(values),
        "median_ms": round(float(np.median(values)), 1),
        "p95_ms": round(float(np.percentile(values, 95)), 1),
        "max_ms": round(float(values.max()), 1),
    }


async def _run_scenario(
    db_path: Path, scenario: Scenario, size: tuple[int, int]
) -> dict[str, list[float]]:
    timings: dict[str, list[float]] = {}
    app = create_app(db_path)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await settle(pilot)
        for key in scenario.open_keys:
            shown, loaded = await timed_open(pilot, key, scenario.screen_class)
            timings.setdefault(OPEN_SHOWN, []).append(shown)
            timings.setdefault(OPEN_LOADED, []).append(loaded)
        name = type(app.screen).__name__
        if scenario.screen_class and name != scenario.screen_class:
            raise RuntimeError(f"expected {scenario.screen_class} after opening, got {name}")
        for action, keys in scenario.actions:
            timings[action] = [await timed_press(pilot, key) for key in keys]
    return timings


def _in_fresh_home(
    db_path: Path, scenario: Scenario, size: tuple[int, int]
) -> dict[str, list[float]]:
    """:func:`_run_scenario` with a HAF home of its own: what screens keep between sessions
    (the SQL editor's text and history) starts empty, and the user's is left alone."""
    previous = os.environ.get("HAF_HOME")
    with tempfile.TemporaryDirectory(prefix="haf-bench-home-") as home:
        os.environ["HAF_HOME"] = home
        try:
            return asyncio.run(_run_scenario(db_path, scenario, size))
        finally:
            if previous is None:
                os.environ.pop("HAF_HOME", None)
            else:
                os.environ["HAF_HOME"] = previous


def _available(module: str | None) -> bool:
    if module is None:
        return True
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def measure_keypress_latency(
    db_path: str | Path,
    scenarios: Sequence[Scenario] | None = None,
    *,
    size: tuple[int, int] = (200, 60),
    rounds: int = 1,
) -> dict[str, Any]:
    """Time every scenario's keys (``rounds`` times) on the database at ``db_path``.

    Returns ``{"screens": {screen: summary}, "actions": {"screen: action": summary},
    "skipped": {screen: why}, "budget_ms": 100, "over_budget": [screen, ...]}``; a summary
    is n, median, p95 and max in ms (see :func:`summary`).
    """
    path = Path(db_path)
    screens: dict[str, Any] = {}
    actions: dict[str, Any] = {}
    skipped: dict[str, str] = {}
    for scenario in SCENARIOS if scenarios is None else scenarios:
        if not _available(scenario.module):
            skipped[scenario.screen] = f"module {scenario.module} not found"
            continue
        collected: dict[str, list[float]] = {}
        try:
            for _ in range(rounds):
                for action, values in _in_fresh_home(path, scenario, size).items():
                    collected.setdefault(action, []).extend(values)
        except Exception as exc:  # a screen under construction must not stop the others
            skipped[scenario.screen] = f"failed: {type(exc).__name__}: {str(exc)[:200]}"
            continue
        # per screen: every keypress once (an opening key as "screen shown"; its reads
        # finishing is its own row)
        screens[scenario.screen] = summary(
            [v for action, vs in collected.items() if action != OPEN_LOADED for v in vs]
        )
        for action, values in collected.items():
            actions[f"{scenario.screen}: {action}"] = summary(values)
    over = [name for name, s in screens.items() if s.get("p95_ms", 0) > 100]
    return {
        "screens": screens,
        "actions": actions,
        "skipped": skipped,
        "budget_ms": 100,
        "over_budget": over,
        "size": list(size),
    }


def markdown(result: dict[str, Any]) -> str:
    """The figures as a Markdown table (per screen, then per action)."""
    lines = []
    if db := result.get("database"):
        built = "reused" if db["build_seconds"] is None else f"built in {db['build_seconds']} s"
        held = f"{db['instances']} instances × {db['runs']} runs ({db['megabytes']} MB, {built})"
        if db.get("given"):
            held = (
                f"{db['path']} ({db['instances']} instance results in {db['runs']} runs, "
                f"{db['megabytes']} MB)"
            )
        lines += [
            f"TUI keypress latency (ms, press to rendered response; budget "
            f"{result['budget_ms']} ms) on {held}, "
            f"terminal {result['size'][0]}×{result['size'][1]}:",
            "",
        ]
    lines += ["| screen / action | n | median ms | p95 ms | max ms |", "|---|---|---|---|---|"]
    for section in ("screens", "actions"):
        for name, s in result.get(section, {}).items():
            lines.append(
                f"| {'**' + name + '**' if section == 'screens' else name} | {s['n']} "
                f"| {s.get('median_ms', '—')} | {s.get('p95_ms', '—')} | {s.get('max_ms', '—')} |"
            )
    lines += [
        f"| {name}: skipped | {why} | | | |" for name, why in result.get("skipped", {}).items()
    ]
    return "\n".join(lines) + "\n"


def run_benchmark(
    out: str | Path = "bench-results",
    n_instances: int = 5000,
    n_runs: int = 4,
    seed: int = 0,
    rounds: int = 2,
    *,
    scenarios: Sequence[Scenario] | None = None,
) -> dict[str, Any]:
    """Build (or reuse) the synthetic store under ``out`` and time every screen on it (or
    ``scenarios``)."""
    from benchmarks.benchdata import cached_bench_db

    path, run_ids, build_seconds = cached_bench_db(out, n_instances, n_runs, seed)
    result = measure_keypress_latency(path, scenarios, rounds=rounds)
    database = {
        "path": str(path),
        "instances": n_instances,
        "runs": len(run_ids),
        "megabytes": round(path.stat().st_size / 2**20, 1),
        "build_seconds": None if build_seconds is None else round(build_seconds, 1),
    }
    return {"database": database, **result}


def run_on_database(
    db: str | Path, rounds: int = 2, scenarios: Sequence[Scenario] | None = None
) -> dict[str, Any]:
    """Time every screen (or ``scenarios``) on an existing database (a campaign's, say) instead
    of the synthetic store; it is only read."""
    from haf_tui.store import open_store

    path = Path(db)
    wal = path.with_name(path.name + ".wal")  # (what a killed writer left is the database too)
    if not path.is_file():
        raise SystemExit(f"no database at {path}")
    with open_store(path, read_only=True) as store:
        instances = store.query("SELECT count(*) FROM instance_results")[1][0][0]
        runs = store.query("SELECT count(*) FROM runs")[1][0][0]
    result = measure_keypress_latency(path, scenarios, rounds=rounds)
    database = {
        "path": str(path),
        "instances": int(instances),
        "runs": int(runs),
        "megabytes": round(sum(f.stat().st_size for f in (path, wal) if f.is_file()) / 2**20, 1),
        "build_seconds": None,
        "given": True,
    }
    return {"database": database, **result}


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m benchmarks.tui_latency``: the latency figures alone, as Markdown."""
    import argparse
    import json

    from haf_tui.methods.loader import ensure_methods

    ensure_methods()  # the methods, loaded once where the program starts

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="bench-results")
    parser.add_argument("--instances", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=2, help="times each scenario runs")
    parser.add_argument("--write", help="also write the figures as JSON to this file")
    parser.add_argument(
        "--db", help="time the screens on this database (read only) instead of the synthetic one"
    )
    parser.add_argument(
        "--screens",
        nargs="+",
        metavar="SCREEN",
        choices=[scenario.screen for scenario in SCENARIOS],
        help="time only these screens (e.g. 'new-run wizard')",
    )
    args = parser.parse_args(argv)
    chosen = None if args.screens is None else [s for s in SCENARIOS if s.screen in args.screens]
    if args.db:
        result = run_on_database(args.db, args.rounds, chosen)
    else:
        result = run_benchmark(
            args.out, args.instances, args.runs, args.seed, args.rounds, scenarios=chosen
        )
    if args.write:
        Path(args.write).write_text(json.dumps(result, indent=2) + "\n")
    print(markdown(result), end="")


if __name__ == "__main__":
    main()
