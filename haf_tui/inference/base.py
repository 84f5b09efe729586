"""What a generation backend gives the pipeline: tokens with raw log-probabilities and offsets.

A backend turns chat messages into text, one token at a time, and records for every
generated token its id, its bytes, its byte and character offsets in the output, its
log-probability under the model's raw distribution (log-softmax of the logits, before
temperature, top-p or penalties) and the top-k alternatives (spec section 2).
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from haf_tui.config import DecodingSettings
from haf_tui.messages import ChatMessage
from haf_tui.vocabulary import HafError


class InferenceError(HafError, RuntimeError):
    """A model could not be loaded or run; the message is one clear line."""


@dataclass(frozen=True)
class GeneratedToken:
    """One generated token and where its text lies in the output."""

    token_id: int
    piece: bytes
    text: str
    byte_offset: int
    char_offset: int
    logprob: float
    top_ids: tuple[int, ...] = ()
    top_logprobs: tuple[float, ...] = ()
    top_texts: tuple[str, ...] = ()

    @property
    def char_end(self) -> int:
        """End (exclusive) of this token's characters in the output text."""
        return self.char_offset + len(self.text)

    @property
    def nll(self) -> float:
        """Negative log-likelihood, what the reference calls the token's "entropy"."""
        return -self.logprob


@dataclass
class Generation:
    """One finished generation: the exact prompt, the output and its tokens."""

    prompt_text: str
    prompt_token_count: int
    text: str
    tokens: list[GeneratedToken]
    finish_reason: str
    seconds: float
    chat_format: str = ""
    prompt_seconds: float = 0.0
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def tokens_per_second(self) -> float:
        """Generated tokens per second of decoding (after the prompt was evaluated)."""
        decode = self.seconds - self.prompt_seconds
        return (len(self.tokens) - 1) / decode if len(self.tokens) > 1 and decode > 0 else 0.0


TokenCallback = Callable[[GeneratedToken], None]
"""Called with every token as it is generated (streaming); raising from it aborts the
generation with that exception."""


@dataclass
class GenerationRequest:
    """One prompt to generate, with its settings; ``tag`` is the caller's, returned as is.

    With ``forced`` the reply is not sampled: that text is teacher-forced as the start of the
    reply and its tokens come back with their raw logprobs (finish reason ``forced``)."""

    messages: Sequence[ChatMessage]
    settings: DecodingSettings
    tag: object = None
    on_token: TokenCallback | None = None
    forced: str | None = None
    reply_prefix: str = ""
    """The start of the reply, teacher-forced as part of the prompt (its tokens are neither
    sampled nor scored): a forced reply is scored after it."""


class RequestSource(Protocol):
    """Where a concurrent backend takes its work from and hands its results to."""

    def take(self, limit: int, *, wait: bool) -> list[GenerationRequest]:
        """Up to ``limit`` requests ready now; with ``wait`` (nothing in flight), block until
        one is ready. An empty list means: no more work."""
        ...

    def finished(self, request: GenerationRequest, generation: Generation) -> None:
        """A request is done (called on the backend's thread)."""
        ...

    def stop_requested(self) -> bool:
        """Whether the run was asked to stop (a backend whose requests may hang, a server's,
        cancels what is in flight after a grace period)."""
        ...


class ConcurrentBackend(Protocol):
    """A backend that generates several requests at once (batched decoding, a server)."""

    n_parallel: int

    def serve(self, source: RequestSource) -> None:
        """Generate everything ``source`` hands out, until it says there is no more."""
        ...


class ListSource:
    """A fixed list of requests for an engine, at most ``per_take`` at a time; keeps what comes
    back by tag."""

    def __init__(self, requests: list[GenerationRequest], per_take: int = 1 << 30):
        self.waiting = list(requests)
        self.per_take = per_take
        self.results: dict[object, Generation] = {}

    def take(self, limit: int, *, wait: bool) -> list[GenerationRequest]:
        """The next requests, up to ``limit``."""
        count = min(limit, self.per_take)
        taken, self.waiting = self.waiting[:count], self.waiting[count:]
        return taken

    def finished(self, request: GenerationRequest, generation: Generation) -> None:
        """Keep a result."""
        self.results[request.tag] = generation

    def stop_requested(self) -> bool:
        """Never: a fixed list is served whole."""
        return False


class TokenTextAssembler:
    """Turns token byte pieces into text with exact byte and character offsets.

    Pieces are decoded incrementally, so a character split over two tokens is assigned to
    the token that completes it, and invalid bytes become U+FFFD instead of an error.
    """

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.byte_length = 0
        self.parts: list[str] = []
        self.char_length = 0

    def add(self, piece: bytes) -> tuple[str, int, int]:
        """Feed one token's bytes; returns (its text, its byte offset, its char offset)."""
        text = self._decoder.decode(piece)
        offsets = (self.byte_length, self.char_length)
        self.byte_length += len(piece)
        self.char_length += len(text)
        self.parts.append(text)
        return text, offsets[0], offsets[1]

    def finish(self) -> str:
        """Flush what is left (an incomplete final character becomes U+FFFD)."""
        tail = self._decoder.decode(b"", final=True)
        if tail:
            self.parts.append(tail)
            self.char_length += len(tail)
        return "".join(self.parts)


def tokens_in_span(tokens: Sequence[GeneratedToken], start: int, end: int) -> list[int]:
    """Indices of the tokens whose characters overlap the character span [start, end)."""
    return [
        index
        for index, token in enumerate(tokens)
        if token.char_offset < end and token.char_end > start
    ]
