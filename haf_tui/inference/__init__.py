"""Generation backends: chat prompts in, tokens with raw logprobs and offsets out."""

from haf_tui.inference.backend import Backend
from haf_tui.inference.base import (
    GeneratedToken,
    Generation,
    InferenceError,
    tokens_in_span,
)
from haf_tui.inference.gguf import GGUFInfo, read_gguf_info
from haf_tui.inference.registry import BackendFactory, backend_named, register_backend

__all__ = [
    "Backend",
    "BackendFactory",
    "GGUFInfo",
    "GeneratedToken",
    "Generation",
    "InferenceError",
    "backend_named",
    "read_gguf_info",
    "register_backend",
    "tokens_in_span",
]
