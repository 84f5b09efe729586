"""The context size a model is opened with, checked before llama.cpp (or llama-cpp-python,
whose token buffer alone is 4 bytes a token) allocates anything for it: at most
:data:`~haf_tui.config.MAX_N_CTX`, and no larger than the context the model was trained with
(its GGUF's ``<arch>.context_length``) unless that is below the default size."""

from __future__ import annotations

from haf_tui.config import MAX_N_CTX, ModelSettings
from haf_tui.inference.base import InferenceError
from haf_tui.inference.gguf import GGUFInfo

DEFAULT_N_CTX = int(ModelSettings.model_fields["n_ctx"].default)
"""The default context size: always allowed (a model trained with less ran at it before)."""


def largest_context(info: GGUFInfo) -> int:
    """The largest ``--n-ctx`` this model is opened with."""
    trained = info.context_length
    if isinstance(trained, int) and not isinstance(trained, bool) and trained > 0:
        return min(max(trained, DEFAULT_N_CTX), MAX_N_CTX)
    return MAX_N_CTX


def check_context_size(n_ctx: int, info: GGUFInfo) -> None:
    """InferenceError (one line) for a context size out of range, before any allocation."""
    if n_ctx < 1:
        raise InferenceError(f"--n-ctx {n_ctx}: a context holds at least one token")
    largest = largest_context(info)
    if n_ctx > largest:
        why = (
            f"{info.path.name} was trained with {info.context_length:,} tokens"
            if largest < MAX_N_CTX
            else f"a run's context is at most {MAX_N_CTX:,} tokens"
        )
        raise InferenceError(f"--n-ctx {n_ctx:,} is too large: {why}; give at most {largest:,}")
