"""A re-score scores ahead: every distinct sentence of a batch of instances embedded once, in
one encoder call, and the values those embeddings give are the run's own (with an encoder
whose embedding of a text does not depend on its batch, exactly)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from haf_tui.pipeline.rescore import rescore_run
from haf_tui.similarity import BiEncoderSimilarity, CachedSimilarity
from haf_tui.store import Store, open_store
from tests.support.rescore_runs import save_tiny_dataset, scripted_run
from tests.test_rescore import _assert_same

LETTERS = "abcdefghijklmnopqrstuvwxyz.,"


class CountingEncoder:
    """sentence-transformers' ``encode`` as a bi-encoder needs it: a text's letter counts,
    normalized (a text's vector never depends on the others in its call); every call and
    every text encoded written down."""

    def __init__(self) -> None:
        self.calls: list[int] = []
        self.encoded: Counter[str] = Counter()

    def encode(self, sentences: Sequence[str], **_: Any) -> Any:
        self.calls.append(len(sentences))
        self.encoded.update(sentences)
        vectors = np.array(
            [[text.lower().count(c) + 0.5 for c in LETTERS] for text in sentences], "float32"
        )
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def counting_g(encoder: CountingEncoder, name: str = "counting-g") -> CachedSimilarity:
    inner = BiEncoderSimilarity(name, encoder=encoder)
    return CachedSimilarity(inner, symmetric=True)


@pytest.fixture
def stored(tmp_path: Path) -> Store:
    store = open_store(tmp_path / "haf.duckdb")
    save_tiny_dataset(store)
    scripted_run(store, "parent", counting_g(CountingEncoder()))
    return store


def test_a_rescore_embeds_each_distinct_sentence_once_in_one_call(stored: Store) -> None:
    encoder = CountingEncoder()
    summary = rescore_run(stored, "parent", counting_g(encoder))
    assert summary.status == "finished" and summary.instances_done == 4
    assert encoder.encoded and max(encoder.encoded.values()) == 1
    # the four instances' sentences in one call (their pairs g's probe: no pair of its own)
    assert encoder.calls == [len(encoder.encoded)] and len(encoder.encoded) > 50


def test_scored_ahead_the_values_are_the_runs_own(stored: Store) -> None:
    summary = rescore_run(stored, "parent", counting_g(CountingEncoder()))
    _assert_same(stored, summary.run_id, "parent", 0.0)


def test_scored_ahead_in_batches_of_instances(stored: Store) -> None:
    encoder = CountingEncoder()
    rescore_run(stored, "parent", counting_g(encoder), score_ahead=2)
    assert len(encoder.calls) == 2 and max(encoder.encoded.values()) == 1
    as_asked = CountingEncoder()
    rescore_run(stored, "parent", counting_g(as_asked, "counting-g-2"), score_ahead=0)
    assert len(as_asked.calls) > 10  # (each follow-up's decision and span asked on its own)
