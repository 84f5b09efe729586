"""The demo's texts (issue 44 §3): ``haf run --demo`` takes its own list of texts in order,
apart from the built-in sample (``--dataset sample`` keeps its 16), the texts that went on
under every CPU kernel kind measured first (docs/demo.md); and what ``haf run`` says each HAF
number rests on. Without a model: which texts go on is the CPU's say."""

from __future__ import annotations

import math

from haf_tui.datasets import BUILTIN_SAMPLE_ID, DEMO_TEXTS_ID, builtin_sample, demo_texts
from haf_tui.defaults import (
    DEMO_MAX_TEXTS,
    DEMO_SPARE_TEXTS,
    DEMO_TEXTS_GOING_ON,
    DEMO_TEXTS_STOPPING,
    DEMO_UNTIL_COMPLETE,
)
from haf_tui.pipeline.runs import DEMO_CHOICE, DatasetChoice, resolve_dataset
from haf_tui.reports import defined_counts


def test_the_demo_takes_its_own_texts_and_the_sample_keeps_its_own() -> None:
    demo = resolve_dataset(DEMO_CHOICE, None)
    sample = resolve_dataset(DatasetChoice("builtin", "sample"), None)
    assert (demo.dataset_id, sample.dataset_id) == (DEMO_TEXTS_ID, BUILTIN_SAMPLE_ID)
    assert len(sample.instances) == 16  # (--dataset sample, tests and snapshots count on it)
    assert [i.instance_id for i in demo.instances] == [
        i.instance_id for i in demo_texts().instances
    ]


def test_the_demo_texts_start_with_those_that_went_on_under_every_kernel_kind() -> None:
    texts = demo_texts().instances
    ids = [i.instance_id for i in texts]
    assert len(ids) == len(set(ids)) == DEMO_MAX_TEXTS  # (the demo may reach every text)
    assert [i.position for i in texts] == list(range(len(texts)))  # taken in this order
    going_on, stopping = len(DEMO_TEXTS_GOING_ON), len(DEMO_TEXTS_STOPPING)
    assert going_on == DEMO_UNTIL_COMPLETE
    assert tuple(ids[:going_on]) == DEMO_TEXTS_GOING_ON
    assert tuple(ids[going_on : going_on + stopping]) == DEMO_TEXTS_STOPPING
    spares = ids[going_on + stopping : going_on + stopping + len(DEMO_SPARE_TEXTS)]
    assert tuple(spares) == DEMO_SPARE_TEXTS
    assert len(DEMO_SPARE_TEXTS) >= DEMO_UNTIL_COMPLETE  # (a margin: docs/demo.md)
    assert {i.label for i in texts} == {"toxic", "non-toxic", "ambiguous"}
    assert all(i.text.strip() and len(i.text) < 200 for i in texts)


def test_a_text_of_both_lists_has_one_id_and_one_text() -> None:
    """An id means one text in either list (a run's store and reports key texts by id)."""
    sample = {i.instance_id: i for i in builtin_sample().instances}
    by_text = {i.text: i.instance_id for i in sample.values()}
    for text in demo_texts().instances:
        if text.instance_id in sample:
            assert (text.text, text.label) == (
                sample[text.instance_id].text,
                sample[text.instance_id].label,
            )
        assert by_text.get(text.text, text.instance_id) == text.instance_id


def test_defined_counts_count_finite_values_only() -> None:
    rows: list[dict[str, float | None]] = [
        {"sos": 0.5, "dis": 0.1, "uii": None, "uei": math.nan, "rs": 0.2, "rn": None},
        {"sos": 0.0, "dis": None, "uii": 0.7, "uei": 0.6, "rs": None, "rn": 1.0},
        {"sos": None, "dis": None, "uii": None, "uei": None, "rs": None, "rn": None},
    ]
    counts = defined_counts(rows)
    assert counts == {"SoS": 2, "DiS": 1, "UII": 1, "UEI": 1, "RS": 1, "RN": 1}
    assert list(counts) == ["SoS", "DiS", "UII", "UEI", "RS", "RN"]  # the reports' order
    assert defined_counts([]) == dict.fromkeys(counts, 0)
