"""How ``make bench`` compares: interleaved arms, median ratios with their spread, load.

A comparison runs its arms in rounds, every arm once per round, the order turning each round
(A B C, B C A, C A B, ...), so a change in the machine's load falls on every arm alike. Each
round gives each arm one figure; a ratio of two arms is taken per round and reported as the
median of the rounds with its spread (min-max and the interquartile range). The load average
(``os.getloadavg``) before and after each comparison goes into the JSON with it.

"Busy": a comparison can run beside one busy neighbour, a ``while True: pass`` process that the
benchmark starts and kills itself (and that ends on its own after ``BUSY_LIMIT_S`` at most).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

BUSY_LIMIT_S = 900
"""The longest a busy neighbour lives, should the benchmark die without killing it."""


def rotated_order(names: Sequence[str], round_index: int) -> list[str]:
    """The arms' order in round ``round_index``: ``names`` turned by the round's number."""
    shift = round_index % len(names) if names else 0
    return list(names[shift:]) + list(names[:shift])


def interleave(arms: Mapping[str, Callable[[], float]], rounds: int) -> dict[str, list[float]]:
    """Each arm's figure per round, running every arm once per round in
    :func:`rotated_order`."""
    if rounds < 1:
        raise ValueError("rounds must be at least 1")
    names = list(arms)
    figures: dict[str, list[float]] = {name: [] for name in names}
    for round_index in range(rounds):
        for name in rotated_order(names, round_index):
            figures[name].append(arms[name]())
    return figures


def _quartiles(values: list[float]) -> tuple[float, float]:
    if len(values) < 2:
        return values[0], values[0]
    low, _, high = statistics.quantiles(values, n=4, method="inclusive")
    return low, high


def ratio_summary(
    numerators: Sequence[float], denominators: Sequence[float], digits: int = 3
) -> dict[str, Any]:
    """The per-round ratios ``numerators[i] / denominators[i]`` (rounds with a zero
    denominator left out): their median, min-max spread and interquartile range."""
    if len(numerators) != len(denominators):
        raise ValueError("one figure per round in each arm")
    ratios = [a / b for a, b in zip(numerators, denominators, strict=True) if b != 0]
    if not ratios:
        return {"median": None, "spread": None, "iqr": None, "ratios": []}
    low, high = _quartiles(ratios)
    return {
        "median": round(statistics.median(ratios), digits),
        "spread": [round(min(ratios), digits), round(max(ratios), digits)],
        "iqr": [round(low, digits), round(high, digits)],
        "ratios": [round(r, digits) for r in ratios],
    }


def load_average() -> list[float]:
    """The 1, 5 and 15 minute load averages."""
    return [round(value, 2) for value in os.getloadavg()]


@contextmanager
def busy_neighbour(busy: bool = True) -> Iterator[subprocess.Popen[bytes] | None]:
    """While inside, one other process spins on a core (none when ``busy`` is false); it is
    killed on the way out."""
    if not busy:
        yield None
        return
    code = (
        "import time\n"
        f"end = time.monotonic() + {BUSY_LIMIT_S}\n"
        "while time.monotonic() < end:\n"
        "    pass\n"
    )
    process = subprocess.Popen([sys.executable, "-c", code])
    try:
        yield process
    finally:
        process.kill()
        process.wait()


def compare(
    arms: Mapping[str, Callable[[], float]],
    rounds: int,
    ratios: Mapping[str, tuple[str, str]],
    *,
    busy: bool = False,
    digits: int = 2,
) -> dict[str, Any]:
    """Interleave ``arms`` for ``rounds`` rounds (beside a busy neighbour when ``busy``):
    each arm's figures and median, and each named ratio (numerator arm, denominator arm) as
    :func:`ratio_summary`, with the load average before and after."""
    with busy_neighbour(busy):
        before = load_average()
        figures = interleave(arms, rounds)
        after = load_average()
    return {
        "condition": "busy" if busy else "idle",
        "rounds": rounds,
        "load_before": before,
        "load_after": after,
        "figures": {name: [round(v, digits) for v in values] for name, values in figures.items()},
        "median": {name: round(statistics.median(v), digits) for name, v in figures.items()},
        **{name: ratio_summary(figures[a], figures[b]) for name, (a, b) in ratios.items()},
    }
