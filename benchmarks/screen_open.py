"""How long a screen takes to show its data on a large store (issue 44 §2: under 300 ms at
5,000 instances × 4 runs): from posting the opening key on the runs list until the screen's
first frame is drawn (mounted, its widgets done with what they were sent), and until its first
data is on screen (compare: the statistics pane, its means and n; then, ``complete``,
with every interval computed; metrics: the shown panel drawn; wizard: the model files listed;
explorer: the instance list and the first instance; sql: the query library), and until
everything it started has finished (:func:`tui_latency.settle`: the other panels read and
drawn, the first instance shown).

Each round is a fresh app in this one process, so round 1 is a first opening and later rounds
find what the first kept (:mod:`haf_tui.tui.run_cache`). ``python -m benchmarks.screen_open
--db FILE compare metrics --rounds 2`` (the store: ``benchmarks.tui_latency``'s, built with
``--out``). The HAF home is a new empty folder unless ``--home DIR`` names one: then what the
screens keep on disk (the comparison's intervals, :mod:`haf_tui.reports.statistics_files`)
stays there, and a second command with the same ``--home`` times a first opening in a new
process that finds what the first kept.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

from textual.css.query import NoMatches

from benchmarks.tui_latency import _key_event, frame_drawn, settle
from haf_tui.tui import create_app

DEADLINE_SECONDS = 300.0


def _compare_filled(screen: Any) -> bool:
    return bool(screen.stats) and "CI" in str(screen.query_one("#cmp-stats-view").text())


def _compare_complete(screen: Any) -> bool:
    """Every interval computed (a tree whose statistics come in one piece: when first shown)."""
    computing = any(getattr(found, "computing", False) for found in screen.stats)
    return _compare_filled(screen) and not computing


def _metrics_filled(screen: Any) -> bool:
    active = screen.query_one("#mx-tabs").active
    return str(screen.query_one(f"#mx-body-{active}").text()).strip() not in ("loading …", "")


def _wizard_filled(screen: Any) -> bool:
    return bool(screen.query_one("DataTable#models").row_count)


def _explorer_filled(screen: Any) -> bool:
    listed = "instances shown" in str(screen.query_one("#ex-shown").render())
    return listed and not str(screen.query_one("#ex-input").render()).startswith("loading")


def _sql_filled(screen: Any) -> bool:
    return bool(screen.query_one("#library").option_count > 0)


SCREENS: dict[str, tuple[str, str, Callable[[Any], bool]]] = {
    "compare": ("c", "CompareScreen", _compare_filled),
    "metrics": ("m", "MetricsScreen", _metrics_filled),
    "wizard": ("n", "WizardScreen", _wizard_filled),
    "explorer": ("e", "ExplorerScreen", _explorer_filled),
    "sql": ("s", "SqlScreen", _sql_filled),
}
"""Screen → (opening key, screen class, whether its first data is shown)."""
COMPLETE: dict[str, Callable[[Any], bool]] = {"compare": _compare_complete}
"""Screen → whether its data is complete, where its first data comes in parts (compare: the
means and n first, then the intervals)."""


def _errors_said(app: Any) -> list[str]:
    """The error notifications ``app`` shows from now on, as they come (a screen whose read
    failed says so, and its data never comes: the timing stops there, not at the deadline)."""
    said: list[str] = []
    notify = app.notify

    def noted(message: str, *args: Any, severity: str = "information", **kwargs: Any) -> Any:
        if severity == "error":
            said.append(str(message))
        return notify(message, *args, severity=severity, **kwargs)

    app.notify = noted
    return said


async def _settled(pilot: Any) -> None:
    """Until the app has settled and built its screens ahead (one at a time, a few hundred ms
    after its warm-up: :func:`settle` can return between two of them)."""
    from haf_tui.tui.screens_ahead import kinds_ahead

    app, started = pilot.app, time.perf_counter()
    await settle(pilot)
    while len(app.ahead.kept()) < len(kinds_ahead()) or app.ahead.building():
        if time.perf_counter() - started > DEADLINE_SECONDS:
            raise TimeoutError(f"the screens ahead were not built in {DEADLINE_SECONDS:.0f} s")
        await asyncio.sleep(0.01)
    await settle(pilot)


async def _runs_listed(app: Any) -> None:
    """Until the runs list shows its rows (the first thing a user sees to press a key on)."""
    started = time.perf_counter()
    while True:
        with contextlib.suppress(NoMatches, AttributeError):
            if app.screen.query_one("#runs").row_count:
                return
        if time.perf_counter() - started > DEADLINE_SECONDS:
            raise TimeoutError(f"the runs list showed no runs in {DEADLINE_SECONDS:.0f} s")
        await asyncio.sleep(0.002)


async def time_open(
    db: str, screen: str, rest: float = 0.0, at_once: bool = False
) -> tuple[float, float, float, float]:
    """(ms until the screen's first frame is drawn, until its data is shown, until it is
    complete, until the app has settled) for one opening, its key ``rest`` seconds after the
    app has settled (what the runs list reads ahead while its cursor rests then done), or
    (``at_once``) as soon as the runs list shows its runs (and ``rest`` seconds), the app's
    warm-up and the screens built ahead still under way."""
    key, class_name, filled = SCREENS[screen]
    app = create_app(db)
    errors = _errors_said(app)
    async with app.run_test(size=(200, 60)) as pilot:
        if at_once:
            await _runs_listed(app)
            await asyncio.sleep(rest)
        else:
            await pilot.pause()
            await _settled(pilot)
        if rest and not at_once:
            await asyncio.sleep(rest)
            await settle(pilot)
        event = _key_event(key)
        event.set_sender(app)
        started = time.perf_counter()
        app.post_message(event)
        frame_ms = None
        while True:
            shown = False
            if type(app.screen).__name__ == class_name:
                if frame_ms is None and frame_drawn(app.screen):
                    frame_ms = (time.perf_counter() - started) * 1000
                with contextlib.suppress(NoMatches):  # (not composed yet)
                    shown = filled(app.screen)
            if shown:
                break
            if errors:
                raise RuntimeError(f"{screen}: {errors[0]}")
            if time.perf_counter() - started > DEADLINE_SECONDS:
                raise TimeoutError(f"{screen} showed no data in {DEADLINE_SECONDS:.0f} s")
            await asyncio.sleep(0.002)
        data_ms = (time.perf_counter() - started) * 1000
        frame_ms = data_ms if frame_ms is None else frame_ms  # (data in its first frame)
        complete = COMPLETE.get(screen)
        while complete is not None and not complete(app.screen):
            if time.perf_counter() - started > DEADLINE_SECONDS:
                raise TimeoutError(f"{screen} was not complete in {DEADLINE_SECONDS:.0f} s")
            await asyncio.sleep(0.002)
        complete_ms = (time.perf_counter() - started) * 1000
        await settle(pilot)
        return frame_ms, data_ms, complete_ms, (time.perf_counter() - started) * 1000


def main(argv: Sequence[str] | None = None) -> None:
    """Print one line per screen and round."""
    from haf_tui.methods.loader import ensure_methods

    ensure_methods()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("screens", nargs="+", choices=sorted(SCREENS))
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--home", help="the HAF home to use and keep (default: a new empty one)")
    parser.add_argument(
        "--rest",
        type=float,
        default=0.0,
        help="seconds on the runs list before the key, after the app has settled or, with "
        "--at-once, after the runs list shows its runs (default 0: the key at once)",
    )
    parser.add_argument(
        "--at-once",
        action="store_true",
        help="the key as soon as the runs list shows its runs (the app still warming up)",
    )
    args = parser.parse_args(argv)
    with contextlib.ExitStack() as stack:
        home = args.home or stack.enter_context(
            tempfile.TemporaryDirectory(prefix="haf-bench-home-")
        )
        os.environ["HAF_HOME"] = home  # (the user's wizard answers and SQL buffers left alone)
        for screen in args.screens:
            for round_ in range(1, args.rounds + 1):
                opened = time_open(args.db, screen, args.rest, args.at_once)
                frame_ms, data_ms, complete_ms, settled_ms = asyncio.run(opened)
                complete = f"complete {complete_ms:.0f} ms, " if screen in COMPLETE else ""
                print(
                    f"{screen} round {round_}: first frame {frame_ms:.0f} ms, "
                    f"data shown {data_ms:.0f} ms, {complete}everything done {settled_ms:.0f} ms",
                    flush=True,
                )


if __name__ == "__main__":
    main()
