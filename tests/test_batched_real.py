"""Batched decoding on the real embedded GGUF against the single-sequence path.

One sequence at a time through the batched engine gives the single path's tokens and
logprobs bit for bit. Several sequences at once sample the same tokens from logits that
differ by floating-point noise: llama.cpp's CPU kernels compute a batch of several token
columns with another summation order than a single column (the same ~0.1 nats this quantized
model shows between a batched and a one-by-one replay, see ``test_llama_real``).
"""

from __future__ import annotations

from typing import Any

import pytest

from haf_tui.config import DecodingSettings
from haf_tui.inference.base import Generation, GenerationRequest, InferenceError, ListSource
from haf_tui.inference.batched import BatchedLlamaEngine
from haf_tui.methods.haf.core.prompts import justify_messages, stance_prompts

pytestmark = pytest.mark.real_model

TEXTS = (
    "You are a stupid idiot and everyone hates you.",
    "Have a lovely day at the beach!",
    "People like you should not be allowed to vote.",
    "The meeting moved to Thursday at noon.",
)
REASONS = ("It insults the reader.", "It calls the reader stupid.", "It says everyone hates them.")
LOGPROB_TOLERANCE = 0.3
"""Largest |batched - single| logprob on a shared token we accept (measured max: 0.16)."""


def _requests(max_new: int = 20) -> list[GenerationRequest]:
    """JUSTIFY prompts and one instance's UPHOLD-STANCE sub-prompts (which share a prefix)."""
    messages = [justify_messages(text) for text in TEXTS]
    messages += [p.messages for p in stance_prompts(TEXTS[0], REASONS, "toxic")]
    return [
        GenerationRequest(m, DecodingSettings(max_new_tokens=max_new, seed=40 + i), tag=i)
        for i, m in enumerate(messages)
    ]


@pytest.fixture(scope="module")
def single_results(embedded_backend: Any) -> dict[object, Generation]:
    return {r.tag: embedded_backend.generate(r.messages, r.settings) for r in _requests()}


def test_one_at_a_time_in_the_engine_is_the_single_path_exactly(
    embedded_backend: Any, single_results: dict[object, Generation]
) -> None:
    engine = BatchedLlamaEngine(embedded_backend, 2)
    try:
        source = ListSource(_requests()[:3], per_take=1)
        engine.serve(source)
    finally:
        engine.close()
    for tag, generation in source.results.items():
        single = single_results[tag]
        assert [t.token_id for t in generation.tokens] == [t.token_id for t in single.tokens]
        assert [t.logprob for t in generation.tokens] == [t.logprob for t in single.tokens]
        assert generation.text == single.text and generation.finish_reason == single.finish_reason


def test_batched_generations_match_the_single_path(
    embedded_backend: Any, single_results: dict[object, Generation]
) -> None:
    engine = embedded_backend.concurrent(4)
    source = ListSource(_requests())
    engine.serve(source)
    assert set(source.results) == set(single_results)
    assert engine.stats.busiest == 4 and engine.stats.prompt_tokens_saved > 0
    identical = 0
    for tag, generation in source.results.items():
        single = single_results[tag]
        assert generation.prompt_text == single.prompt_text
        assert generation.prompt_token_count == single.prompt_token_count
        batched_ids = [t.token_id for t in generation.tokens]
        single_ids = [t.token_id for t in single.tokens]
        identical += batched_ids == single_ids
        shared = 0
        while shared < min(len(batched_ids), len(single_ids)):
            if batched_ids[shared] != single_ids[shared]:
                break
            shared += 1
        assert shared >= 1, f"request {tag}: the first token differs"
        for ours, theirs in zip(generation.tokens[:shared], single.tokens[:shared], strict=True):
            assert abs(ours.logprob - theirs.logprob) <= LOGPROB_TOLERANCE
            assert ours.text == theirs.text and ours.char_offset == theirs.char_offset
        if batched_ids == single_ids:
            assert generation.text == single.text
    assert identical >= len(single_results) // 2


def test_prefix_reuse_changes_no_token(embedded_backend: Any) -> None:
    """The UPHOLD-STANCE sub-prompts with and without copying the shared prefix."""
    requests = _requests()[len(TEXTS) :]
    results = []
    for reuse in (True, False):
        engine = BatchedLlamaEngine(embedded_backend, 4, reuse_prefix=reuse)
        try:
            source = ListSource(requests)
            engine.serve(source)
            results.append((source.results, engine.stats.prompt_tokens_saved))
        finally:
            engine.close()
    (with_reuse, saved), (without, none_saved) = results
    assert saved > 0 and none_saved == 0
    reused = [g for g in with_reuse.values() if g.extra["prompt_tokens_reused"]]
    assert len(reused) == len(requests) - 1  # all but the first copy the shared prefix
    for tag, generation in with_reuse.items():
        other = without[tag]
        assert [t.token_id for t in generation.tokens] == [t.token_id for t in other.tokens]


def test_a_callback_error_ends_the_batch_and_frees_every_slot(embedded_backend: Any) -> None:
    engine = embedded_backend.concurrent(4)

    def explode(token: Any) -> None:
        raise KeyboardInterrupt

    requests = _requests(max_new=8)
    requests[2].on_token = explode
    with pytest.raises(KeyboardInterrupt):
        engine.serve(ListSource(requests))
    source = ListSource(_requests(max_new=4)[:4])
    engine.serve(source)  # the engine is usable again: all slots and cells were freed
    assert len(source.results) == 4


def test_streams_grow_when_a_request_needs_more_and_nothing_changes(embedded_backend: Any) -> None:
    """Streams of 128 cells take the short forced replies; a long generation behind them waits
    until they finish, then the streams grow to the backend's context; every result equals an
    engine that had whole-context streams from the start."""
    from haf_tui.methods.classify.core.labels import SPELLINGS, classify_messages

    forced = [
        GenerationRequest(
            classify_messages(text), DecodingSettings(max_new_tokens=4), tag=(text, s), forced=s
        )
        for text in TEXTS[:2]
        for s, _ in SPELLINGS
    ]
    long = GenerationRequest(
        justify_messages(TEXTS[2]), DecodingSettings(max_new_tokens=160, seed=5), tag="long"
    )
    results = []
    for start_ctx in (128, embedded_backend.n_ctx):
        engine = BatchedLlamaEngine(embedded_backend, 4, start_ctx=start_ctx)
        try:
            source = ListSource([*forced, long])
            engine.serve(source)
        finally:
            engine.close()
        assert engine.seq_ctx == embedded_backend.n_ctx  # grown (or whole from the start)
        results.append(source.results)
    small, whole = results
    assert set(small) == set(whole)
    for tag, generation in small.items():
        assert [t.token_id for t in generation.tokens] == [t.token_id for t in whole[tag].tokens]
        assert [t.logprob for t in generation.tokens] == [t.logprob for t in whole[tag].tokens]


def test_streams_that_cannot_grow_stop_in_one_line_and_the_engine_stays_usable(
    embedded_backend: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """llama.cpp refusing the longer context (too little memory for n_parallel × n_ctx) is an
    InferenceError, and the engine keeps its short streams, whole: the short requests run."""
    c_api = embedded_backend.c_api
    engine = BatchedLlamaEngine(embedded_backend, 4, start_ctx=128)
    try:
        real_init = c_api.llama_init_from_model
        monkeypatch.setattr(c_api, "llama_init_from_model", lambda model, params: None)
        long = GenerationRequest(
            justify_messages(TEXTS[2]), DecodingSettings(max_new_tokens=160, seed=5), tag="long"
        )
        with pytest.raises(InferenceError, match="could not make a context"):
            engine.serve(ListSource([long]))
        assert engine.seq_ctx == 128
        monkeypatch.setattr(c_api, "llama_init_from_model", real_init)
        source = ListSource(_requests(max_new=4)[:4])
        engine.serve(source)
        assert len(source.results) == 4
    finally:
        engine.close()
