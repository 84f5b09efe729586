"""Percentile bootstrap intervals of means, many at once, equal to the last bit to
``scipy.stats.bootstrap(..., method="percentile", vectorized=True, batch=BATCH,
rng=default_rng(seed))`` on each sample alone.

Why not scipy's own call per sample: its resamples are drawn from a generator seeded afresh
for every interval, so two samples of the same size are resampled with the very same indices.
Here the indices of a size are drawn once, batch by batch exactly as scipy draws them
(``Generator.integers(0, n, (batch, n))``), and every sample of that size is resampled with
them; each resample's mean is ``numpy.mean`` over the same (batch, n) block scipy averages, and
the interval is ``scipy.stats.quantile`` of the same distribution, so the numbers are the same
as scipy's (``tests/test_bootstrap_equal.py`` compares them with scipy's call). A comparison
of 4 runs × 7 metrics at 5,000 instances draws its indices a few times instead of 49.

A paired difference's bootstrap (scipy's ``paired=True``) resamples the pairs' indices and
takes ``mean(second[i] - first[i])``, which is the mean of ``(second - first)[i]``: the same
one-sample bootstrap of the differences.

Pure: numbers in, numbers out (numpy and scipy imported when called: ``haf --help`` stays
light).
"""

from __future__ import annotations

import functools
import importlib.metadata
from collections.abc import Sequence
from typing import Any, Final

BATCH: Final = 100
"""Resamples drawn at once: bounds the memory (and is ~10× faster at 20k than all at once)."""

Interval = tuple[float, float]
"""An interval's low and high."""


def method_versions() -> tuple[str, ...]:
    """What decides the intervals besides the values, seed, resamples and confidence: the
    :data:`BATCH` the draws are shaped by, and numpy's (the generator, the means) and scipy's
    (the quantiles, Wilcoxon's test) versions; what is kept of the intervals is keyed by it, so
    an upgrade computes them anew (as ``haf report --report compare-ci`` does)."""
    return (
        f"batch {BATCH}",
        f"numpy {library_version('numpy')}",
        f"scipy {library_version('scipy')}",
    )


@functools.cache
def library_version(name: str) -> str:
    """The installed version of the package ``name`` (read from its metadata: nothing is
    imported), ``unknown`` when it has none."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def percentile_intervals(
    samples: Sequence[Any],
    *,
    confidence: float,
    n_resamples: int,
    seed: int,
    batch: int = BATCH,
) -> list[Interval]:
    """The percentile bootstrap interval of the mean of each of ``samples`` (sequences or
    arrays of floats, each at least two values, none NaN), in their order; the
    generator seeded with ``seed`` for every size."""
    import numpy as np  # (here, not at the top: ``haf --help`` imports no numpy)
    from scipy import stats

    for sample in samples:
        if len(sample) < 2:
            raise ValueError(f"a bootstrap needs at least two values, not {len(sample)}")
    arrays = [np.asarray(sample, dtype=float) for sample in samples]
    by_size: dict[int, list[int]] = {}
    for at, array in enumerate(arrays):
        by_size.setdefault(array.shape[-1], []).append(at)
    found: list[Interval | None] = [None] * len(arrays)
    for size, members in by_size.items():
        rng = np.random.default_rng(seed)
        resampled: dict[int, list[Any]] = {at: [] for at in members}
        for done in range(0, n_resamples, batch):
            drawn = min(batch, n_resamples - done)
            indices = rng.integers(0, size, (drawn, size), dtype="int64", endpoint=False)
            for at in members:
                resampled[at].append(np.mean(arrays[at][..., indices], axis=-1))
        for at in members:
            distribution = np.concatenate(resampled[at], axis=-1)
            alpha = np.asarray((1 - confidence) / 2, dtype=distribution.dtype)
            interval = np.stack((alpha, 1 - alpha), axis=-1)
            bounds = stats.quantile(distribution, interval, axis=-1)
            found[at] = (float(bounds[..., 0]), float(bounds[..., 1]))
    shown = [interval for interval in found if interval is not None]
    assert len(shown) == len(arrays)  # (every sample is in one size's group)
    return shown
