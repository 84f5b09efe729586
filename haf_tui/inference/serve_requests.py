"""What ``haf serve`` accepts on ``/v1/completions``: the fields haf's own client sends
(:func:`haf_tui.inference.server.completion_body`, plus ``logit_bias`` for a forced token
and an OpenAI client's ``model``), each of the type and within the bounds haf uses. Anything
else (``grammar``, streams, a list of prompts, thousands of log-probabilities, a token cap
past the context) is refused with one line before the model sees it: llama-cpp-python's
server crashed on a self-referencing grammar and allocated ~16 MB per token for
``logprobs: 49152``."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

MAX_LOGPROBS: Final = 20
"""Top log-probabilities per token (haf keeps at most 20: ``DecodingSettings.top_logprobs``)."""
MAX_LOGIT_BIAS: Final = 16
"""Biased tokens in one request (haf forces one)."""
MAX_MODEL_NAME: Final = 256

_NUMBER_BOUNDS: Final[dict[str, tuple[float, float]]] = {
    "temperature": (0.0, 5.0),
    "top_p": (0.0, 1.0),
    "min_p": (0.0, 1.0),
    "typical_p": (0.0, 1.0),
    "repeat_penalty": (0.0, 10.0),
    "presence_penalty": (-2.0, 2.0),
    "frequency_penalty": (-2.0, 2.0),
}
_INT_BOUNDS: Final[dict[str, tuple[int, int]]] = {
    "top_k": (0, 1 << 31),
    "seed": (-1, (1 << 32) - 1),
    "logprobs": (0, MAX_LOGPROBS),
    "n_probs": (0, MAX_LOGPROBS),
}
_FLAGS: Final = frozenset({"post_sampling_probs", "stream"})
ALLOWED_FIELDS: Final = frozenset(
    {"prompt", "max_tokens", "logit_bias", "model", *_NUMBER_BOUNDS, *_INT_BOUNDS, *_FLAGS}
)


class RefusedRequestError(ValueError):
    """A request ``haf serve`` does not run: ``status`` (400, 401, 404, 405, 413, 415) and a
    one-line message that names no file, path or library."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class Completion:
    """A checked completion request: its prompt and token cap."""

    prompt: str
    max_tokens: int


def _refuse(message: str) -> RefusedRequestError:
    return RefusedRequestError(400, message)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_number(name: str, value: Any) -> None:
    low, high = _NUMBER_BOUNDS[name]
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise _refuse(f"{name} must be a number")
    if not math.isfinite(value) or not low <= value <= high:
        raise _refuse(f"{name} must be between {low:g} and {high:g}")


def _check_int(name: str, value: Any) -> None:
    low, high = _INT_BOUNDS[name]
    if not _is_int(value):
        raise _refuse(f"{name} must be an integer")
    if not low <= value <= high:
        raise _refuse(f"{name} must be between {low} and {high}")


def _check_logit_bias(value: Any, n_vocab: int) -> None:
    if not isinstance(value, Mapping):
        raise _refuse("logit_bias must be an object of token id: bias")
    if len(value) > MAX_LOGIT_BIAS:
        raise _refuse(f"logit_bias: at most {MAX_LOGIT_BIAS} tokens")
    for key, bias in value.items():
        if not (isinstance(key, str) and key.isascii() and key.isdigit() and len(key) <= 9):
            raise _refuse("logit_bias: a key must be a token id")
        if int(key) >= n_vocab:
            raise _refuse(f"logit_bias: token id {key} is past the vocabulary ({n_vocab})")
        if isinstance(bias, bool) or not isinstance(bias, int | float):
            raise _refuse("logit_bias: a bias must be a number")
        if not math.isfinite(bias) or not -100.0 <= bias <= 100.0:
            raise _refuse("logit_bias: a bias must be between -100 and 100")


def check_completion(body: Any, n_ctx: int, n_vocab: int) -> Completion:
    """The request's prompt and token cap once every field is one haf sends, of its type and
    within bounds; a :class:`RefusedRequestError` (400) otherwise. The prompt's length in tokens
    is checked by :func:`check_context` (it needs the tokenizer)."""
    if not isinstance(body, dict):
        raise _refuse("the body must be a JSON object")
    unknown = sorted(str(name)[:40] for name in body if name not in ALLOWED_FIELDS)
    if unknown:
        raise _refuse(f"unsupported field(s): {', '.join(unknown[:5])}")
    prompt = body.get("prompt")
    if not isinstance(prompt, str) or not prompt:
        raise _refuse("prompt must be a non-empty string")
    max_tokens = body.get("max_tokens")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool):
        raise _refuse(f"max_tokens must be an integer from 1 to the context ({n_ctx})")
    if not 1 <= max_tokens <= n_ctx:
        raise _refuse(f"max_tokens must be an integer from 1 to the context ({n_ctx})")
    for name, value in body.items():
        if name in _NUMBER_BOUNDS:
            _check_number(name, value)
        elif name in _INT_BOUNDS:
            _check_int(name, value)
        elif name in _FLAGS and not isinstance(value, bool):
            raise _refuse(f"{name} must be true or false")
    if body.get("stream") is True:
        raise _refuse("stream is not supported")
    if "logit_bias" in body:
        _check_logit_bias(body["logit_bias"], n_vocab)
    model = body.get("model", "")
    if not isinstance(model, str) or len(model) > MAX_MODEL_NAME:
        raise _refuse("model must be a short string")
    return Completion(prompt, max_tokens)


def check_context(request: Completion, n_ctx: int, count_tokens: Callable[[str], int]) -> int:
    """The prompt's tokens; a :class:`RefusedRequestError` (400) when they and ``max_tokens`` do
    not fit the context."""
    tokens = count_tokens(request.prompt)
    if tokens + request.max_tokens > n_ctx:
        raise _refuse(
            f"the prompt ({tokens} tokens) and max_tokens ({request.max_tokens}) exceed the "
            f"context of {n_ctx} tokens"
        )
    return tokens


def max_body_bytes(n_ctx: int) -> int:
    """The largest request body read: room for a full context of long, JSON-escaped tokens
    (32 bytes each) and the other fields; a larger body cannot fit the context."""
    return n_ctx * 32 + 64 * 1024
