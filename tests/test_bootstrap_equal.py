"""The comparison's bootstrap (:mod:`haf_tui.reports.bootstrap`: samples of one size resampled
with the indices drawn once) gives exactly what scipy's own call gives on each sample alone,
and what :func:`mean_interval` / :func:`paired_difference` give one at a time, so the
workbench, its kept intervals and ``haf report --report compare-ci`` show the same numbers as
the call the intervals were first computed with."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from haf_tui.reports.bootstrap import BATCH, percentile_intervals
from haf_tui.reports.comparison import (
    CONFIDENCE,
    N_RESAMPLES,
    SEED,
    mean_interval,
    mean_intervals,
    paired_difference,
    paired_differences,
)


def _scipy_interval(
    sample: np.ndarray, seed: int = SEED, n_resamples: int = N_RESAMPLES
) -> tuple[float, float]:
    """scipy's call on one sample, as the comparison made it before (the reference)."""
    result = stats.bootstrap(
        (sample,),
        np.mean,
        confidence_level=CONFIDENCE,
        n_resamples=n_resamples,
        method="percentile",
        vectorized=True,
        batch=BATCH,
        rng=np.random.default_rng(seed),
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def _scipy_paired(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    result = stats.bootstrap(
        (x, y),
        lambda a, b, axis=-1: np.mean(b - a, axis=axis),
        confidence_level=CONFIDENCE,
        n_resamples=N_RESAMPLES,
        method="percentile",
        paired=True,
        vectorized=True,
        batch=BATCH,
        rng=np.random.default_rng(SEED),
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


@pytest.mark.parametrize("seed", [SEED, 3])
def test_many_samples_at_once_equal_scipy_on_each_alone(seed: int) -> None:
    generator = np.random.default_rng(41)
    samples = [
        generator.random(500),
        generator.random(500),  # (same size: the same indices)
        np.round(generator.random(37), 1),  # (ties)
        np.array([0.0, 1.0]),
        generator.normal(size=500),
        np.full(9, 0.25),  # (all equal)
        generator.random(1001),  # (not a whole number of batches)
    ]
    found = percentile_intervals(samples, confidence=CONFIDENCE, n_resamples=N_RESAMPLES, seed=seed)
    assert found == [_scipy_interval(sample, seed) for sample in samples]


def test_a_resample_count_that_ends_in_a_part_batch_equals_scipy() -> None:
    sample = np.random.default_rng(5).random(64)
    found = percentile_intervals([sample], confidence=CONFIDENCE, n_resamples=250, seed=SEED)
    assert found == [_scipy_interval(sample, n_resamples=250)]


def test_a_sample_of_fewer_than_two_values_is_refused() -> None:
    with pytest.raises(ValueError, match="at least two"):
        percentile_intervals([[1.0]], confidence=CONFIDENCE, n_resamples=9, seed=SEED)


def test_means_and_paired_differences_together_equal_one_at_a_time_and_scipy() -> None:
    generator = np.random.default_rng(8)
    ids = [f"i{k}" for k in range(300)]
    first = {i: float(v) for i, v in zip(ids, generator.random(300), strict=True)}
    second: dict[str, float | None] = {
        i: (None if k % 7 == 0 else float(v))
        for k, (i, v) in enumerate(zip(ids, generator.random(300), strict=True))
    }
    third = {i: float(v) for i, v in zip(ids[:250], generator.random(250), strict=True)}
    runs: list[dict[str, float | None]] = [dict(first), second, dict(third), {}, {"x": 1.0}]
    together = mean_intervals(runs)
    assert together == [mean_interval(values) for values in runs]
    shown = together[1]
    kept = np.asarray([v for v in second.values() if v is not None])
    assert (shown.low, shown.high) == _scipy_interval(kept)
    pairs: list[tuple[dict[str, float | None], dict[str, float | None]]] = [
        (dict(first), second),
        (dict(first), dict(third)),
        (dict(first), {}),
    ]
    paired = paired_differences(pairs)
    assert paired == [paired_difference(a, b) for a, b in pairs]
    both = [i for i in ids if second.get(i) is not None]
    x = np.asarray([first[i] for i in both])
    y = np.asarray([second[i] for i in both], dtype=float)
    assert (paired[0].low, paired[0].high) == _scipy_paired(x, y)
    assert paired[0].n == len(both) and paired[2].n == 0 and paired[2].low is None
