"""What the batched engine (:mod:`haf_tui.inference.batched`) asks of llama.cpp's bindings
to start: the parameters of a context that decodes several sequences together, and each
sequence's sampler chain, built like ``Llama.generate``'s (top-k, typical 1.0, top-p, min-p 0,
temperature, then ``dist`` seeded with the request's seed)."""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING, Any

from haf_tui.config import DecodingSettings

if TYPE_CHECKING:
    from haf_tui.inference.llama_model import LlamaModel


def batched_context_params(
    backend: LlamaModel, n_sequences: int, seq_ctx: int | None = None
) -> Any:
    """The ``llama_context_params`` of a context that decodes ``n_sequences`` sequences of
    ``seq_ctx`` tokens (None: ``backend.n_ctx``) together (the engine's; the benchmark's raw
    ceiling uses them too, so both decode on the same kind of context)."""
    c = backend.c_api
    params = c.llama_context_default_params()
    params.n_ctx = (seq_ctx or backend.n_ctx) * n_sequences
    params.n_batch = max(backend.n_batch, n_sequences)
    params.n_ubatch = min(params.n_batch, 512)
    params.n_seq_max = n_sequences
    params.n_threads = params.n_threads_batch = backend.n_threads
    params.kv_unified = False  # one KV stream per sequence: see the module's docstring
    params.swa_full = True  # a copied prefix keeps all its cells
    params.flash_attn_type = c.LLAMA_FLASH_ATTN_TYPE_DISABLED
    params.no_perf = True
    return params


def sampler_chain(c: Any, settings: DecodingSettings) -> Any:
    """The sampler ``Llama.generate`` builds for these settings, made with llama.cpp's
    bindings ``c`` (its penalties stage is
    left out: with the neutral values used here it changes nothing)."""
    chain = c.llama_sampler_chain_init(c.llama_sampler_chain_default_params())
    if settings.temperature == 0.0:
        c.llama_sampler_chain_add(chain, c.llama_sampler_init_greedy())
        return chain
    for stage in (
        c.llama_sampler_init_top_k(settings.top_k),
        c.llama_sampler_init_typical(1.0, 1),
        c.llama_sampler_init_top_p(settings.top_p, 1),
        c.llama_sampler_init_min_p(0.0, 1),
        c.llama_sampler_init_temp(settings.temperature),
        c.llama_sampler_init_dist(ctypes.c_uint32(settings.seed).value),
    ):
        c.llama_sampler_chain_add(chain, stage)
    return chain
