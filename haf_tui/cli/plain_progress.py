"""Progress as plain lines, for ``haf run``, ``haf rescore`` and ``haf campaign run`` (a
cell's lines start with its label) when their output is no terminal (a log file, a job
scheduler's): rich's bars draw nothing there until the end, so a line is printed every
:data:`EVERY_INSTANCES` instances finished or every :data:`EVERY_SECONDS` seconds, whichever
comes first, and one at the end.

A line: ``progress: 12/40 instances · JUSTIFY 13/40 · 38.2 tok/s · ETA about 6 min ·
elapsed 3 min 12 s``. Pure but for the clock it is handed (tests hand their own)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Final

from haf_tui.pipeline.progress_text import rate_text, stage_total

if TYPE_CHECKING:
    from rich.console import Console

    from haf_tui.pipeline.events import ProgressEvent

# (the durations' formatting is imported when a line is written: ``haf run --help`` reads
# this module's numbers and stays light)

EVERY_INSTANCES = 10
"""A progress line after this many more instances finished ..."""
EVERY_SECONDS = 60.0
"""... or this many seconds after the last line, whichever comes first."""
HELP_NOTE: Final = (
    f"When the output is no terminal (a log file, a job scheduler), a plain progress line is "
    f"printed every {EVERY_INSTANCES} instances or every {EVERY_SECONDS:.0f} s, whichever comes "
    "first."
)


class PlainProgress:
    """Prints a progress line when :data:`EVERY_INSTANCES` more instances finished since the
    last line or :data:`EVERY_SECONDS` passed, and the last state on :meth:`close`."""

    def __init__(
        self,
        print_line: Callable[[str], None],
        *,
        what: str = "instances",
        every: int | None = None,
        seconds: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.print_line = print_line
        self.what = what
        self.every = EVERY_INSTANCES if every is None else every
        self.seconds = EVERY_SECONDS if seconds is None else seconds
        self.clock = clock
        self.started = clock()
        self._last_time = self.started
        self._last_done: int | None = None
        self._pending: str | None = None

    def note(self, done: int, total: int, details: Sequence[str] = ()) -> None:
        """Where the work stands: a line when it is time for one."""
        now = self.clock()
        line = self._line(done, total, details, now)
        last = self._last_done if self._last_done is not None else done
        if self._last_done is None:
            self._last_done = done
        if done - last >= self.every or now - self._last_time >= self.seconds:
            self._emit(line, done, now)
        else:
            self._pending = line

    def close(self) -> None:
        """The last state, when not printed yet."""
        if self._pending is not None:
            self.print_line(self._pending)
            self._pending = None

    def _emit(self, line: str, done: int, now: float) -> None:
        self.print_line(line)
        self._pending = None
        self._last_done, self._last_time = done, now

    def _line(self, done: int, total: int, details: Sequence[str], now: float) -> str:
        from haf_tui.pipeline.planning import format_duration

        parts = [f"progress: {done}/{total or '?'} {self.what}", *details]
        parts.append(f"elapsed {format_duration(now - self.started)}")
        return " · ".join(part for part in parts if part)


def run_details(
    event: ProgressEvent, titles: Mapping[str, str], stages: Sequence[str]
) -> list[str]:
    """A run's event as a progress line's parts: each stage's done/total (``≥``: may grow,
    ``≈``: estimated), the rates and the ETA once measured."""
    from haf_tui.pipeline.estimate import rough_duration

    parts = []
    for stage in stages:
        total = stage_total(
            stage, event.generations_planned, event.growing, event.generations_expected
        )
        parts.append(
            f"{titles.get(stage, stage)} {total.count(event.generations_done.get(stage, 0))}"
        )
    parts.append(rate_text(event.rates) or "measuring…")
    if event.eta_seconds is not None and event.instances_done < event.instances_total:
        parts.append(f"ETA about {rough_duration(event.eta_seconds)}")
    return parts


class RunLines:
    """A run's progress events as plain lines (a listener for the runner): the ETA of the
    last finished instance is kept for the lines between instances."""

    def __init__(
        self, printer: PlainProgress, titles: Mapping[str, str], stages: Sequence[str]
    ) -> None:
        self.printer = printer
        self.titles = dict(titles)
        self.stages = tuple(stages)
        self._eta: tuple[float, float] | None = None
        """The last finished instance's ETA and when it came."""

    def __call__(self, event: ProgressEvent) -> None:
        """Take one event (tokens are not progress)."""
        if event.kind == "token":
            return
        now = self.printer.clock()
        if event.kind == "instance" and event.eta_seconds is not None:
            self._eta = (event.eta_seconds, now)
        eta = None if self._eta is None else max(self._eta[0] - (now - self._eta[1]), 0.0)
        shown = replace(event, eta_seconds=eta)
        self.printer.note(
            event.instances_done,
            event.instances_total,
            run_details(shown, self.titles, self.stages),
        )
        if event.kind == "run-finished":  # (the last state, when not printed yet)
            self.printer.close()


def plain_lines(
    console: Console, titles: Mapping[str, str], stages: Sequence[str], prefix: str = ""
) -> RunLines | None:
    """A run's plain progress lines on ``console`` when it is no terminal (a log file: rich's
    bars would show nothing there until the end), else None. ``prefix`` starts each line
    (a campaign's cell label, so that side-by-side cells' lines tell apart)."""
    if console.is_terminal:
        return None
    printer = PlainProgress(
        lambda line: console.print(prefix + line, highlight=False, markup=False, soft_wrap=True)
    )
    return RunLines(printer, titles, stages)
