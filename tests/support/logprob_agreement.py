"""How closely two decodes of the same tokens must agree across llama.cpp's code paths.

The same weights give the same logprobs on one code path. Two paths (one-token decodes against
a prompt and its reply evaluated in one batch; llama-cpp-python's server against the batched
engine) run matrix products of other shapes, which some CPUs compute with other kernels that
sum in another order: on this project's AMD VMs the paths agree within 1e-5, on its Xeon VMs
they did not, and a token sampled at a temperature may then differ. Paths that run the same
computation (the same batch shapes and thread count) are compared as equal, up to the float32
rounding of a log-softmax (:data:`FLOAT32_LOG_SOFTMAX`). Teacher forcing a reply on
the batched engine against sampling it on the single path differed by up to 0.1 nats from the
fourth reply token on (AMD, a 24-token reply; the first three equal to the bit). So a test of
agreement compares the tokens both paths have (a common prefix, or a reply teacher-forced on
the other path) within a tolerance below what a wrong position, token or field gives.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import pytest

KERNEL_TOLERANCE: Final = 0.15
"""Nats: two code paths' logprobs of one token on one CPU (measured above: up to 0.1)."""
FLOAT32_LOG_SOFTMAX: Final = 1e-6
"""Nats: one computation's logits, their log-softmax taken in float32 (llama-cpp-python's
server) and in float64 (haf): at most 1e-7 apart on the embedded model (a logprob of -2.5),
the float32 rounding of a sum over 49,152 entries; a wrong position or token is off by
tenths."""


def round_trip_prefix(backend: Any, tokens: Sequence[Any]) -> str:
    """The text of the longest prefix of ``tokens`` that tokenizes back to exactly those
    tokens (a sampled reply may end inside what the tokenizer would spell otherwise)."""
    for end in range(len(tokens), 0, -1):
        text = "".join(t.text for t in tokens[:end])
        if backend.forced_tokens(text) == [t.token_id for t in tokens[:end]]:
            return text
    pytest.fail(f"no prefix of the reply tokenizes back to its tokens: {tokens[:3]!r}")


def common_prefix(mine: Sequence[Any], theirs: Sequence[Any]) -> int:
    """How many leading tokens two replies share."""
    shared = 0
    for a, b in zip(mine, theirs, strict=False):
        if a.token_id != b.token_id:
            break
        shared += 1
    return shared


def assert_tokens_agree(
    mine: Sequence[Any], theirs: Sequence[Any], tolerance: float = KERNEL_TOLERANCE
) -> None:
    """The same token ids, offsets and logprobs within ``tolerance``; the top alternatives
    agree wherever their order is not a near tie."""
    assert [t.token_id for t in mine] == [t.token_id for t in theirs]
    assert [(t.char_offset, t.byte_offset) for t in mine] == [
        (t.char_offset, t.byte_offset) for t in theirs
    ]
    assert [t.logprob for t in mine] == pytest.approx([t.logprob for t in theirs], abs=tolerance)
    for a, b in zip(mine, theirs, strict=True):
        assert_top_agree(a.top_ids, a.top_logprobs, b.top_ids, b.top_logprobs, tolerance)


def assert_top_agree(
    ids_a: Sequence[int],
    logprobs_a: Sequence[float],
    ids_b: Sequence[int],
    logprobs_b: Sequence[float],
    tolerance: float = KERNEL_TOLERANCE,
) -> None:
    """Two top-k lists of one position agree: an id in both has the same logprob within
    ``tolerance``; an id in one only sits within ``tolerance`` of the other's last (a near tie
    at the cut); the lists have one length."""
    assert len(ids_a) == len(ids_b) == len(logprobs_a) == len(logprobs_b)
    a, b = dict(zip(ids_a, logprobs_a, strict=True)), dict(zip(ids_b, logprobs_b, strict=True))
    for token_id in a.keys() & b.keys():
        assert a[token_id] == pytest.approx(b[token_id], abs=tolerance), token_id
    for only, other in ((a.keys() - b.keys(), b), (b.keys() - a.keys(), a)):
        cut = min(other.values(), default=0.0)
        for token_id in only:
            value = a.get(token_id, b.get(token_id))
            assert value is not None and value <= cut + tolerance, (token_id, value, cut)
