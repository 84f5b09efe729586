"""A run on inference servers (issue 16): the tool stays the client, the scheduler and the
store. The chat template is rendered here, by the same renderer as the in-process path (a
vocabulary-only load of the same GGUF), so the stored prompt is what the model saw; the text
goes to each server's OpenAI-compatible ``/v1/completions`` with the generation's seed,
temperature, top-p, top-k, token cap and ``logprobs``; the returned tokens are mapped to text
offsets by the same assembler as in process (:mod:`.server_reading`).

Several endpoints serve at once (``URL#N``: N requests in flight there, default 4) from one
asyncio loop (:class:`~haf_tui.inference.server_pool.ServerPool`: retries, dropped
endpoints, teacher forcing by ``logit_bias``, stopping). Here: the backend itself, which
identifies and probes the servers when a run starts and answers the :class:`Backend`
interface with the local GGUF's template and tokenizer."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Final

from haf_tui.config import DecodingSettings
from haf_tui.inference.backend import Backend
from haf_tui.inference.base import Generation, GenerationRequest, ListSource, TokenCallback
from haf_tui.inference.chat import RenderedPrompt
from haf_tui.inference.llama import LlamaCppBackend
from haf_tui.inference.server import (
    Endpoint,
    ServerError,
    ServerInfo,
    check_raw_logprobs,
    identify_server,
    same_model,
)
from haf_tui.inference.server_pool import Live, ServerPool
from haf_tui.inference.server_reading import AnswerReading
from haf_tui.messages import ChatMessage

TIMEOUT_SECONDS: Final = 600.0
"""httpx's timeout of each read; the whole request has its own deadline (:mod:`.server_http`)."""


class ServerBackend(AnswerReading, Backend):
    """Generation on OpenAI-compatible servers, with the local GGUF's template and tokenizer
    (no layers on a GPU here: the servers decide their own)."""

    def __init__(
        self,
        model_path: str | Path,
        endpoints: Sequence[Endpoint],
        *,
        chat_format: str | None = None,
        n_ctx: int = 4096,
        timeout: float = TIMEOUT_SECONDS,
        check: bool = True,
        deadline: float | None = None,
        max_answer_bytes: int | None = None,
    ):
        if not endpoints:
            raise ServerError("no server given")
        self.local = LlamaCppBackend(model_path, chat_format=chat_format, n_ctx=n_ctx,
                                     vocab_only=True)  # fmt: skip
        try:
            self._meet(endpoints, n_ctx, timeout, check, deadline, max_answer_bytes)
        except BaseException:  # (a server refused: the vocabulary is freed now)
            self.local.close()
            raise

    def _meet(
        self,
        endpoints: Sequence[Endpoint],
        n_ctx: int,
        timeout: float,
        check: bool,
        deadline: float | None,
        max_answer_bytes: int | None,
    ) -> None:
        """Identify the servers (one model, raw log-probabilities) and keep the bounds."""
        self.info = self.local.info
        self.chat_format = self.local.chat_format
        self.n_ctx = n_ctx
        self.timeout = timeout
        self.deadline, self.max_answer_bytes = deadline, max_answer_bytes
        """Each request's bounds (None: sized from the request, :mod:`.server_http`)."""
        infos = [identify_server(e.url) for e in endpoints]
        for info in infos[1:]:
            if not same_model(info.model, infos[0].model):
                raise ServerError(
                    f"the servers serve different models: {infos[0].url} {infos[0].model!r}, "
                    f"{info.url} {info.model!r}"
                )
        if check:
            for info in infos:
                check_raw_logprobs(info)
        self.endpoints = [Live(e, i) for e, i in zip(endpoints, infos, strict=True)]
        self.name = f"{self.info.path.name} on {len(endpoints)} server(s)"

    def servers(self) -> list[ServerInfo]:
        """Who serves the run."""
        return [live.info for live in self.endpoints]

    def render(self, messages: Sequence[ChatMessage]) -> RenderedPrompt:
        """The prompt, rendered as in process."""
        return self.local.render(messages)

    def tokenize_prompt(self, prompt: RenderedPrompt) -> list[int]:
        """The prompt's tokens, as in process."""
        return self.local.tokenize_prompt(prompt)

    def forced_tokens(self, text: str) -> list[int]:
        """The tokens of a reply's text, as in process."""
        return self.local.forced_tokens(text)

    def tokens_needed(self, messages: Sequence[ChatMessage], replies: Sequence[str] = ()) -> int:
        """The prompt's and the longest forced reply's tokens, as in process."""
        return self.local.tokens_needed(messages, replies)

    def close(self) -> None:
        """Free the local vocabulary."""
        self.local.close()

    def concurrent(self, n_parallel: int) -> ServerPool:
        """Serve with every endpoint's own concurrency (``n_parallel`` is not used: each
        endpoint says how many requests it takes)."""
        return ServerPool(self)

    def generate(
        self,
        messages: Sequence[ChatMessage],
        settings: DecodingSettings,
        *,
        on_token: TokenCallback | None = None,
    ) -> Generation:
        """One generation on the least busy endpoint."""
        return self._one_request(GenerationRequest(messages, settings, tag=0, on_token=on_token))

    def score(
        self,
        messages: Sequence[ChatMessage],
        forced: str,
        settings: DecodingSettings,
        *,
        on_token: TokenCallback | None = None,
        reply_prefix: str = "",
    ) -> Generation:
        """The raw logprobs of ``forced`` after ``reply_prefix``, on the least busy endpoint
        (one token at a time, each forced by ``logit_bias``)."""
        return self._one_request(
            GenerationRequest(
                messages,
                settings,
                tag=0,
                on_token=on_token,
                forced=forced,
                reply_prefix=reply_prefix,
            )
        )

    def _one_request(self, request: GenerationRequest) -> Generation:
        source = ListSource([request])
        ServerPool(self).serve(source)
        return source.results[0]
