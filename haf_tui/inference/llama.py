"""llama.cpp backend (llama-cpp-python) with fast raw log-probabilities: one sequence at a
time through ``Llama.generate`` (sampling), a one-sequence batched context (teacher-forced
scores), and a batched engine (:mod:`haf_tui.inference.batched`) for several at once. The
model, its prompts and its tokens' raw logprobs are
:class:`~haf_tui.inference.llama_model.LlamaModel`'s.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from haf_tui.config import DecodingSettings
from haf_tui.inference.backend import Backend
from haf_tui.inference.base import (
    GeneratedToken,
    Generation,
    GenerationRequest,
    ListSource,
    TokenCallback,
    TokenTextAssembler,
)
from haf_tui.inference.batched import BatchedLlamaEngine
from haf_tui.inference.llama_model import LlamaModel
from haf_tui.messages import ChatMessage


class LlamaCppBackend(LlamaModel, Backend):
    """Generate with a local GGUF through llama.cpp, recording per-token raw logprobs."""

    def __init__(
        self,
        model_path: str | Path,
        *,
        chat_format: str | None = None,
        n_ctx: int = 4096,
        n_gpu_layers: int = -1,
        n_threads: int | None = None,
        n_batch: int = 512,
        extra_buffers: bool = False,
        vocab_only: bool = False,
    ):
        """``vocab_only``: the tokenizer and chat template without the weights (a server
        backend renders and maps tokens with it; it cannot generate)."""
        super().__init__(
            model_path,
            chat_format=chat_format,
            n_ctx=n_ctx,
            n_gpu_layers=n_gpu_layers,
            n_threads=n_threads,
            n_batch=n_batch,
            extra_buffers=extra_buffers,
            vocab_only=vocab_only,
        )
        self._engines: dict[int, BatchedLlamaEngine] = {}
        self._prompt_threads = self.thread_tuner("single-prompt")
        self._step_threads = self.thread_tuner("single-step")
        self._threads = self.n_threads
        self.reuse_prefix = False
        """Reuse the KV cache of a shared prompt prefix (faster; off: every prompt is evaluated
        from scratch, so a generation does not depend on what ran before it)."""

    def concurrent(self, n_parallel: int) -> BatchedLlamaEngine:
        """A batched engine serving ``n_parallel`` sequences at once on this model (made once
        per size, then reused)."""
        engine = self._engines.get(n_parallel)
        if engine is None:
            engine = self._engines[n_parallel] = BatchedLlamaEngine(self, n_parallel)
        return engine

    def close(self) -> None:
        """Free the model and its contexts now (instead of when garbage-collected)."""
        for engine in self._engines.values():
            engine.close()
        self._engines.clear()
        close = getattr(self.llm, "close", None)
        if callable(close):
            close()

    def sample_ids(
        self, prompt_tokens: list[int], settings: DecodingSettings, max_new: int
    ) -> Iterator[int]:
        """Sampled token ids, until an end-of-generation token or ``max_new`` of them.

        While the caller holds an id (before asking for the next), the raw logits it was
        sampled from are ``llama_get_logits_ith(ctx, -1)``. Unless :attr:`reuse_prefix`, the
        prompt is evaluated from scratch, so the result does not depend on earlier calls.
        """
        if not self.reuse_prefix:
            self.llm.reset()
        self.llm.set_seed(settings.seed)
        stream = self.llm.generate(
            prompt_tokens,
            top_k=settings.top_k,
            top_p=settings.top_p,
            min_p=0.0,
            typical_p=1.0,
            temp=settings.temperature,
            repeat_penalty=1.0,
        )
        count = 0
        try:
            while True:
                # the first step evaluates the prompt, each later one the token before
                tuner = self._step_threads if count else self._prompt_threads
                threads = tuner.choose(1 if count else len(prompt_tokens))
                if threads != self._threads:
                    self._c.llama_set_n_threads(self.llm.ctx, threads, threads)
                    self._threads = threads
                started = time.perf_counter()
                token_id = next(stream, None)
                if token_id is None:  # llama-cpp-python's stream ends only by itself
                    return
                tuner.record(
                    threads, time.perf_counter() - started, 1 if count else len(prompt_tokens)
                )
                count += 1
                if self.ends_generation(token_id):
                    return
                yield token_id
                if count >= max_new:
                    return
        finally:
            stream.close()

    def score(
        self,
        messages: Sequence[ChatMessage],
        forced: str,
        settings: DecodingSettings,
        *,
        on_token: TokenCallback | None = None,
        reply_prefix: str = "",
    ) -> Generation:
        """The raw logprobs of ``forced`` teacher-forced as the start of the reply, after
        ``reply_prefix`` (on a one-sequence batched context: the same rows as the batched
        path)."""
        request = GenerationRequest(
            messages, settings, tag=0, on_token=on_token, forced=forced, reply_prefix=reply_prefix
        )
        source = ListSource([request])
        self.concurrent(1).serve(source)
        return source.results[0]

    def generate(
        self,
        messages: Sequence[ChatMessage],
        settings: DecodingSettings,
        *,
        on_token: TokenCallback | None = None,
    ) -> Generation:
        """Sample a reply with ``settings``; the same seed gives the same reply.

        ``on_token`` is called with each token as it is generated (an exception it raises
        ends the generation and propagates)."""
        prompt, prompt_tokens = self.prepare_prompt(messages)
        max_new = min(settings.max_new_tokens, self.n_ctx - len(prompt_tokens))
        assembler = TokenTextAssembler()
        tokens: list[GeneratedToken] = []
        ctx = self.llm.ctx
        prompt_seconds = 0.0
        started = time.perf_counter()
        for token_id in self.sample_ids(prompt_tokens, settings, max_new):
            if not prompt_seconds:
                prompt_seconds = time.perf_counter() - started
            row = np.ctypeslib.as_array(
                self._c.llama_get_logits_ith(ctx, -1), shape=(self.n_vocab,)
            )
            tokens.append(self.captured_token(row, token_id, assembler, settings.top_logprobs))
            if on_token is not None:
                on_token(tokens[-1])
        finish_reason = "length" if len(tokens) >= max_new else "stop"
        seconds = time.perf_counter() - started
        return Generation(
            prompt_text=prompt.text,
            prompt_token_count=len(prompt_tokens),
            text=assembler.finish(),
            tokens=tokens,
            finish_reason=finish_reason,
            seconds=seconds,
            chat_format=prompt.chat_format,
            prompt_seconds=prompt_seconds,
            extra={"folded_system": prompt.folded_system},
        )
