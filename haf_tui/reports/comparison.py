"""Statistics for comparing runs: each metric's mean over instances with a bootstrap confidence
interval, and for two runs on the same instances the paired difference with its paired
bootstrap interval and Wilcoxon's signed-rank test (scipy's, not hand-written).

Pure: numbers in, numbers out (no I/O, no store, no textual). The unit resampled is the
instance: a run's value of a metric is the mean of its instances' values (the "instance mean"
rule of Table 1); instances where the metric is undefined (None or NaN) are left out and
counted apart. Intervals are percentile intervals from a seeded generator, so the same values
give the same interval (:mod:`haf_tui.reports.bootstrap`: scipy's percentile bootstrap, the
samples of one size computed together, :func:`mean_intervals` and
:func:`paired_differences`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, cast

from haf_tui.reports.bootstrap import percentile_intervals

if TYPE_CHECKING:
    from numpy.typing import NDArray

CONFIDENCE: Final = 0.95
"""The confidence level of every interval."""
N_RESAMPLES: Final = 999
"""Bootstrap resamples: enough for a 95 % percentile interval, fast at 20k instances."""
SEED: Final = 18
"""The bootstrap generator's seed (issue 18): the same values give the same interval."""
WILCOXON_MIN_PAIRS: Final = 6
"""The fewest pairs Wilcoxon's signed-rank test is given for: on n pairs its smallest
two-sided p is 2 / 2**n, so with 5 pairs or fewer no difference could ever reach p < 0.05
(one pair gives p = 1 whatever the difference)."""
WILCOXON_TOO_FEW: Final = (
    f"— with fewer than {WILCOXON_MIN_PAIRS} pairs: on n pairs the smallest p is 2/2ⁿ, "
    "so fewer could never reach p < 0.05"
)
"""Why a Wilcoxon p is "—" for too few pairs (the reports' legends and captions say it)."""

Values = Mapping[str, float | None]
"""Instance id → a metric's value in one run (None or NaN: undefined there)."""


@dataclass(frozen=True)
class MeanInterval:
    """A run's mean of a metric over the instances where it is defined, with its bootstrap
    interval (None when fewer than two values: no interval; no values: no mean either)."""

    n: int
    mean: float | None
    low: float | None
    high: float | None


@dataclass(frozen=True)
class PairedDifference:
    """``second − first`` over the instances where both runs define the metric: n pairs, the
    mean difference with its paired bootstrap interval, Wilcoxon's signed-rank statistic and
    two-sided p (None when every difference is zero or there are fewer than
    :data:`WILCOXON_MIN_PAIRS` pairs), and the instances where only one of the runs defines
    it."""

    n: int
    mean: float | None
    low: float | None
    high: float | None
    statistic: float | None
    p_value: float | None
    only_first: tuple[str, ...]
    only_second: tuple[str, ...]


@dataclass(frozen=True)
class Overlap:
    """Which instances two runs both have (finished), and which only one of them has."""

    both: tuple[str, ...]
    only_first: tuple[str, ...]
    only_second: tuple[str, ...]


def defined(values: Values) -> dict[str, float]:
    """The values that are defined (not None, not NaN), in their order."""
    return {k: float(v) for k, v in values.items() if v is not None and not math.isnan(v)}


def overlap(first: Iterable[str], second: Iterable[str]) -> Overlap:
    """The instances of ``first`` and ``second`` split into both / only one (input order)."""
    first_ids, second_ids = list(dict.fromkeys(first)), list(dict.fromkeys(second))
    in_first, in_second = set(first_ids), set(second_ids)
    return Overlap(
        tuple(i for i in first_ids if i in in_second),
        tuple(i for i in first_ids if i not in in_second),
        tuple(i for i in second_ids if i not in in_first),
    )


def mean_interval(
    values: Sequence[float] | Values,
    *,
    confidence: float = CONFIDENCE,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
) -> MeanInterval:
    """The mean of the defined ``values`` with its percentile bootstrap interval."""
    found = mean_intervals([values], confidence=confidence, n_resamples=n_resamples, seed=seed)
    return found[0]


def mean_intervals(
    samples: Sequence[Sequence[float] | Values],
    *,
    confidence: float = CONFIDENCE,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
) -> list[MeanInterval]:
    """:func:`mean_interval` of each of ``samples``, computed together (those of one size share
    their resamples' indices, as each alone would draw them: the same numbers, faster)."""
    kept = [_defined_list(values) for values in samples]
    resampled = [found for found in kept if len(found) >= 2]
    intervals = iter(
        percentile_intervals(resampled, confidence=confidence, n_resamples=n_resamples, seed=seed)
    )
    out: list[MeanInterval] = []
    for found in kept:
        without = _mean_of(found)
        if len(found) < 2:
            out.append(without)
            continue
        low, high = next(intervals)
        out.append(MeanInterval(len(found), without.mean, low, high))
    return out


def mean_without_interval(values: Sequence[float] | Values | NDArray[Any]) -> MeanInterval:
    """:func:`mean_interval`'s n and mean (the same numbers) without its interval (low and
    high None): what a view shows at once while the interval is computed."""
    if _is_array(values):  # (a float array: n and the mean without a Python float each)
        import numpy as np

        found = np.asarray(values, dtype=float)
        found = found[~np.isnan(found)]
        if not len(found):
            return MeanInterval(0, None, None, None)
        return MeanInterval(len(found), float(found.mean()), None, None)
    return _mean_of(_defined_list(cast("Sequence[float] | Values", values)))


def _is_array(values: object) -> bool:
    """Whether ``values`` is a numpy array (told without importing numpy)."""
    return type(values).__name__ == "ndarray" and hasattr(values, "dtype")


def _defined_list(values: Sequence[float] | Values) -> list[float]:
    found = list(defined(values).values()) if isinstance(values, Mapping) else list(values)
    return [v for v in found if not math.isnan(v)]


def _mean_of(found: list[float]) -> MeanInterval:
    """n and the mean of ``found`` (defined values), no interval."""
    import numpy as np  # numpy here, not at the top: ``haf --help`` stays light

    if not found:
        return MeanInterval(0, None, None, None)
    return MeanInterval(len(found), float(np.asarray(found, dtype=float).mean()), None, None)


def paired_difference(
    first: Values,
    second: Values,
    *,
    confidence: float = CONFIDENCE,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
) -> PairedDifference:
    """``second − first`` on the instances where both define the metric (see the class)."""
    found = paired_differences(
        [(first, second)], confidence=confidence, n_resamples=n_resamples, seed=seed
    )
    return found[0]


def paired_differences(
    pairs: Sequence[tuple[Values, Values]],
    *,
    confidence: float = CONFIDENCE,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
) -> list[PairedDifference]:
    """:func:`paired_difference` of each pair, computed together (as :func:`mean_intervals`):
    the paired bootstrap of ``second − first`` is the bootstrap of the differences."""
    import numpy as np
    from scipy import stats

    splits = [_paired(first, second) for first, second in pairs]
    resampled = [y - x for split, (x, y) in splits if len(split.both) >= 2]
    intervals = iter(
        percentile_intervals(resampled, confidence=confidence, n_resamples=n_resamples, seed=seed)
    )
    out: list[PairedDifference] = []
    for split, (x, y) in splits:
        if not split.both:
            out.append(
                PairedDifference(
                    0, None, None, None, None, None, split.only_first, split.only_second
                )
            )
            continue
        mean = _difference_mean(x, y)
        low = high = None
        if len(split.both) >= 2:
            low, high = next(intervals)
        statistic = p_value = None
        if len(split.both) >= WILCOXON_MIN_PAIRS and np.any(y - x != 0):
            with warnings.catch_warnings():  # (a tie correction's note on small samples)
                warnings.simplefilter("ignore", RuntimeWarning)
                test = stats.wilcoxon(y, x)
            statistic, p_value = float(test.statistic), float(test.pvalue)
        out.append(
            PairedDifference(
                len(split.both), mean, low, high, statistic, p_value, split.only_first,
                split.only_second,
            )
        )  # fmt: skip
    return out


def difference_without_interval(first: Values, second: Values) -> PairedDifference:
    """:func:`paired_difference`'s n, mean difference and instances only one run defines (the
    same numbers) without its interval and Wilcoxon's test (None): what a view shows at once
    while they are computed."""
    split, (x, y) = _paired(first, second)
    mean = _difference_mean(x, y) if split.both else None
    return PairedDifference(
        len(split.both), mean, None, None, None, None, split.only_first, split.only_second
    )


def _paired(first: Values, second: Values) -> tuple[Overlap, tuple[Any, Any]]:
    """Which instances both define, and both runs' values of them (arrays, that order)."""
    import numpy as np

    a, b = defined(first), defined(second)
    split = overlap(a, b)
    x = np.asarray([a[i] for i in split.both], dtype=float)
    y = np.asarray([b[i] for i in split.both], dtype=float)
    return split, (x, y)


def _difference_mean(x: Any, y: Any) -> float:
    import numpy as np

    return float(np.mean(y - x))
