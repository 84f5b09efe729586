"""A GGUF model loaded through llama.cpp (llama-cpp-python), and the token-level work both
the single-sequence backend (:mod:`haf_tui.inference.llama`) and the batched engine
(:mod:`haf_tui.inference.batched`) do with it: chat prompts rendered and tokenized, token
pieces, and raw log-probabilities read from a logits row.

``logits_all=True`` makes llama-cpp-python copy every position's full-vocabulary logits
(measured here: 2 tokens/s against 35 for plain generation on a 262k-vocabulary model).
Instead, after each sampled token the raw logits row the sampler just used is read
(``llama_get_logits_ith(ctx, -1)``, a zero-copy view): :class:`RawLogprobReader` takes the
log-softmax of the sampled token and the top-k alternatives, and only those numbers are kept.

Token pieces are computed with ``llama_token_to_piece`` and a buffer that grows as needed:
llama-cpp-python's own helpers drop pieces longer than 32 bytes.
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from haf_tui.defaults import available_cpus
from haf_tui.inference.base import GeneratedToken, InferenceError, TokenTextAssembler
from haf_tui.inference.chat import RenderedPrompt, render_named, render_template
from haf_tui.inference.context_size import check_context_size
from haf_tui.inference.gguf import GGUFInfo, read_gguf_info
from haf_tui.inference.llama_load import load_error, open_llama, recent_llama_log
from haf_tui.inference.threads import ThreadTuner, thread_ladder
from haf_tui.messages import ChatMessage


def default_chat_format(info: GGUFInfo) -> str:
    """The named format for a GGUF without a chat template, by architecture."""
    if info.architecture.startswith("gemma"):
        return "gemma"
    if info.architecture == "llama":
        return "llama-3"
    return "chatml"


class RawLogprobReader:
    """Log-softmax of one token, and the top-k, from a raw logits row (float32 view).

    About 0.7 ms for a 262k vocabulary: one pass each for the max, exp(x - max) and its sum;
    the top-k come from the few logits within ``TOP_MARGIN`` nats of the max (exact: when
    fewer than k, or very many, are that close, a full partition is used instead).
    """

    TOP_MARGIN = 8.0
    MAX_NEAR = 2048

    def __init__(self, n_vocab: int):
        self._scratch = np.empty(n_vocab, dtype=np.float32)

    def read(
        self, logits: np.ndarray[Any, Any], token_id: int, top_k: int
    ) -> tuple[float, tuple[int, ...], tuple[float, ...]]:
        """(logprob of ``token_id``, top-k ids, top-k logprobs) under the raw distribution."""
        peak = float(logits.max())
        np.subtract(logits, peak, out=self._scratch)
        np.exp(self._scratch, out=self._scratch)
        log_normalizer = peak + math.log(float(self._scratch.sum()))
        logprob = float(logits[token_id]) - log_normalizer
        if top_k <= 0:
            return logprob, (), ()
        near = np.flatnonzero(logits >= peak - self.TOP_MARGIN)
        if near.size < top_k or near.size > self.MAX_NEAR:
            near = np.argpartition(logits, -top_k)[-top_k:]
        top = near[np.argsort(-logits[near], kind="stable")[:top_k]]
        return (
            logprob,
            tuple(int(i) for i in top),
            tuple(float(logits[i]) - log_normalizer for i in top),
        )


class LlamaModel:
    """A GGUF loaded through llama.cpp, and what both ways of decoding it share: prompts
    rendered and tokenized, token pieces, each token's raw logprob and top-k from a logits
    row, the thread tuners (the backend, :class:`~haf_tui.inference.llama.LlamaCppBackend`,
    decodes one sequence; its batched engine many)."""

    name: str
    info: GGUFInfo
    chat_format: str
    n_ctx: int
    offload_supported: bool
    n_gpu_layers: int

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
        self.info = read_gguf_info(model_path)
        check_context_size(n_ctx, self.info)  # (before llama.cpp allocates for it)
        self.name = self.info.path.name
        if chat_format in (None, "auto"):
            self.chat_format = (
                "gguf-template" if self.info.has_chat_template else (default_chat_format(self.info))
            )
        else:
            self.chat_format = chat_format
            if chat_format != "gguf-template":
                render_named([], chat_format)  # validates the name
        try:
            import llama_cpp
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise InferenceError("llama-cpp-python is not installed: run `make install`") from exc
        self._c = llama_cpp.llama_cpp
        self.n_batch = n_batch
        self.offload_supported = bool(self._c.llama_supports_gpu_offload())
        self.n_gpu_layers = n_gpu_layers if self.offload_supported else 0
        threads = self.n_threads = n_threads or available_cpus()
        self.thread_candidates = thread_ladder(threads) if n_threads is None else (threads,)
        """The thread counts decodes may use: every CPU this process may run on and their
        halvings, tried and picked by measured speed (:class:`ThreadTuner`); only the count
        asked for, if any."""
        try:
            self.llm = open_llama(
                self.info.path,
                extra_buffers=extra_buffers,
                n_ctx=n_ctx,
                n_gpu_layers=self.n_gpu_layers,
                n_threads=threads,
                n_threads_batch=threads,
                n_batch=n_batch,
                logits_all=False,
                vocab_only=vocab_only,
            )
        except (ValueError, RuntimeError, OSError) as exc:
            raise load_error(exc, self.info, n_ctx, recent_llama_log()) from exc
        self.n_ctx = self.llm.n_ctx()
        self._vocab = self._c.llama_model_get_vocab(self.llm.model)
        self.n_vocab = int(self._c.llama_vocab_n_tokens(self._vocab))
        self.logprob_reader = RawLogprobReader(self.n_vocab)
        self._piece_cache: dict[int, bytes] = {}
        self._thread_tuners: dict[str, ThreadTuner] = {}

    @property
    def c_api(self) -> Any:
        """llama-cpp-python's low-level bindings (``llama_cpp.llama_cpp``)."""
        return self._c

    @property
    def vocab(self) -> Any:
        """The model's ``llama_vocab`` pointer."""
        return self._vocab

    def thread_tuner(self, kind: str) -> ThreadTuner:
        """The tuner of this model's decodes of one kind (a prompt or a step, single or
        batched), made on first use."""
        tuner = self._thread_tuners.get(kind)
        if tuner is None:
            tuner = self._thread_tuners[kind] = ThreadTuner(self.thread_candidates)
        return tuner

    def token_piece(self, token_id: int, *, special: bool = False) -> bytes:
        """The exact bytes of one token (no 32-byte limit)."""
        key = token_id if not special else -1 - token_id
        cached = self._piece_cache.get(key)
        if cached is not None:
            return cached
        size = 64
        while True:
            buffer = (ctypes.c_char * size)()
            written = self._c.llama_token_to_piece(self._vocab, token_id, buffer, size, 0, special)
            if written >= 0:
                piece = bytes(buffer.raw[:written])
                self._piece_cache[key] = piece
                return piece
            size = -written

    def ends_generation(self, token_id: int) -> bool:
        """Whether ``token_id`` is one of the model's end-of-generation tokens (an answer that
        ends on its own ends with one; it is never stored as part of the answer)."""
        return bool(self._c.llama_vocab_is_eog(self._vocab, token_id))

    def captured_token(
        self, row: np.ndarray[Any, Any], token_id: int, assembler: TokenTextAssembler, top_k: int
    ) -> GeneratedToken:
        """The sampled ``token_id`` with its raw logprob and top-k from its logits ``row``,
        its text and offsets added to ``assembler``."""
        logprob, top_ids, top_logprobs = self.logprob_reader.read(row, token_id, top_k)
        piece = self.token_piece(token_id)
        text, byte_offset, char_offset = assembler.add(piece)
        top_texts = tuple(self.token_piece(i).decode("utf-8", errors="replace") for i in top_ids)
        return GeneratedToken(
            token_id,
            piece,
            text,
            byte_offset,
            char_offset,
            logprob,
            top_ids,
            top_logprobs,
            top_texts,
        )

    def render(self, messages: Sequence[ChatMessage]) -> RenderedPrompt:
        """The prompt text and segments for ``messages`` in this model's chat format."""
        if self.chat_format == "gguf-template":
            template = self.info.chat_template or ""
            bos = self.token_piece(self._c.llama_vocab_bos(self._vocab), special=True)
            eos = self.token_piece(self._c.llama_vocab_eos(self._vocab), special=True)
            return render_template(
                messages,
                template,
                bos=bos.decode(errors="replace"),
                eos=eos.decode(errors="replace"),
            )
        return render_named(messages, self.chat_format)

    def tokenize_prompt(self, prompt: RenderedPrompt) -> list[int]:
        """Template text may hold special tokens; user content never does."""
        tokens: list[int] = []
        bos_id = self._c.llama_vocab_bos(self._vocab)
        if self._c.llama_vocab_get_add_bos(self._vocab):
            bos_text = self.token_piece(bos_id, special=True).decode(errors="replace")
            if not (bos_text and prompt.text.startswith(bos_text)):
                tokens.append(bos_id)
        for segment in prompt.segments:
            tokens += self.llm.tokenize(
                segment.text.encode("utf-8"), add_bos=False, special=not segment.plain
            )
        return tokens

    def tokens_needed(self, messages: Sequence[ChatMessage], replies: Sequence[str] = ()) -> int:
        """Tokens of the rendered prompt plus the longest of ``replies`` forced after it."""
        reply = max((len(self.forced_tokens(text)) for text in replies), default=0)
        return len(self.tokenize_prompt(self.render(messages))) + reply

    def prepare_prompt(self, messages: Sequence[ChatMessage]) -> tuple[RenderedPrompt, list[int]]:
        """The rendered prompt and its tokens; a one-line error when they leave no room to
        generate in a context of :attr:`n_ctx` tokens."""
        prompt = self.render(messages)
        prompt_tokens = self.tokenize_prompt(prompt)
        if len(prompt_tokens) >= self.n_ctx:
            raise InferenceError(
                f"prompt of {len(prompt_tokens)} tokens does not fit the "
                f"context of {self.n_ctx} tokens: raise --n-ctx"
            )
        return prompt, prompt_tokens

    def forced_tokens(self, text: str) -> list[int]:
        """The tokens of a reply's text (no BOS, no special tokens)."""
        return list(self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))
