"""Generation backends: chat prompts in, tokens with raw logprobs and offsets out."""

from haf_tui.inference.base import (
    GeneratedToken,
    Generation,
    GenerationBackend,
    InferenceError,
    tokens_in_span,
)
from haf_tui.inference.gguf import GGUFInfo, read_gguf_info

__all__ = [
    "GGUFInfo",
    "GeneratedToken",
    "Generation",
    "GenerationBackend",
    "InferenceError",
    "read_gguf_info",
    "tokens_in_span",
]
