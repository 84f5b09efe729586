"""Samples of the built-in sample stored as one dataset, not one per size (issue 34 §9).

A seeded sample of ``n`` draws the first ``n`` of one seeded permutation
(:func:`~haf_tui.datasets.files.sample_indices`: ``RandomState(seed).permutation`` cut to
``n``), so the samples of every size with one seed are the prefixes of one order. A run on a
sample of the built-in sample therefore stores the built-in sample once in its seed's order
(``builtin-sample-s17``: every instance, ``meta['sample']`` holding the seed and the whole
order) and evaluates its first ``n`` instances: its ``limit`` is the sample's size, its
instances the sample's, in draw order. Samples of 2, 4 and 8 with seed 17 share that dataset.

(Other datasets keep one stored dataset per sample: a file or a paper dataset is not stored
whole, and a run evaluates a stored dataset's first instances by position.)
"""

from __future__ import annotations

from haf_tui.datasets.files import sample_indices
from haf_tui.datasets.model import BUILTIN_SAMPLE_ID, Dataset, builtin_sample


def builtin_in_seed_order(seed: int) -> Dataset:
    """Every instance of the built-in sample in the order a sample with ``seed`` draws them
    (positions renumbered): the dataset the samples of that seed share."""
    whole = builtin_sample()
    order = sample_indices(len(whole.instances), len(whole.instances), seed)
    instances = [whole.instances[i].model_copy(update={"position": k}) for k, i in enumerate(order)]
    sample = {"seed": seed, "n": len(order), "population": len(order), "indices": order}
    return Dataset(
        f"{BUILTIN_SAMPLE_ID}-s{seed}",
        f"{whole.name}, seed {seed}",
        whole.source,
        instances,
        whole.skipped,
        {**whole.meta, "sample": sample},
    )


def _sample_of_builtin(dataset: Dataset) -> tuple[int, int] | None:
    """(seed, n) when ``dataset`` is a sample of the built-in sample, else None."""
    sample = dataset.meta.get("sample")
    if dataset.meta.get("kind") != "builtin" or not isinstance(sample, dict):
        return None
    seed, n = sample.get("seed"), sample.get("n")
    if not isinstance(seed, int) or not isinstance(n, int):
        return None
    if dataset.dataset_id != f"{BUILTIN_SAMPLE_ID}-n{n}-s{seed}":
        return None
    return seed, n


def stored_form(dataset: Dataset) -> tuple[Dataset, int | None]:
    """The dataset a run stores for ``dataset``, and the most instances the run evaluates:
    a sample of ``n`` of the built-in sample becomes the built-in sample in its seed's order
    with ``n``, when its first ``n`` instances are the sample's own (the same ids and texts,
    in the same order; otherwise, as for every other dataset, ``dataset`` itself and None)."""
    found = _sample_of_builtin(dataset)
    if found is None:
        return dataset, None
    seed, n = found
    shared = builtin_in_seed_order(seed)
    first = [(i.instance_id, i.text, i.label) for i in shared.instances[:n]]
    if first != [(i.instance_id, i.text, i.label) for i in dataset.instances]:
        return dataset, None
    return shared, n
