"""llama.cpp backend (llama-cpp-python) with fast raw log-probabilities.

``logits_all=True`` makes llama-cpp-python copy every position's full-vocabulary logits
(measured here: 2 tokens/s against 35 for plain generation on a 262k-vocabulary model).
Instead, after each sampled token this backend reads the raw logits row the sampler just
used (``llama_get_logits_ith(ctx, -1)``, a zero-copy view), takes the log-softmax of the
sampled token and the top-k alternatives, and keeps only those numbers.

Token pieces are computed with ``llama_token_to_piece`` and a buffer that grows as needed:
llama-cpp-python's own helpers drop pieces longer than 32 bytes.
"""

from __future__ import annotations

import ctypes
import math
import time
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from haf_tui.config import DecodingSettings
from haf_tui.defaults import available_cpus
from haf_tui.inference.backend import Backend
from haf_tui.inference.base import (
    GeneratedToken,
    Generation,
    GenerationRequest,
    InferenceError,
    ListSource,
    TokenCallback,
    TokenTextAssembler,
)
from haf_tui.inference.batched import BatchedLlamaEngine
from haf_tui.inference.chat import RenderedPrompt, render_named, render_template
from haf_tui.inference.context_size import check_context_size
from haf_tui.inference.gguf import GGUFInfo, read_gguf_info
from haf_tui.inference.threads import ThreadTuner, thread_ladder
from haf_tui.messages import ChatMessage


def default_chat_format(info: GGUFInfo) -> str:
    """The named format for a GGUF without a chat template, by architecture."""
    if info.architecture.startswith("gemma"):
        return "gemma"
    if info.architecture == "llama":
        return "llama-3"
    return "chatml"


_LLAMA_LOG: deque[str] = deque(maxlen=50)
_LOG_CALLBACK: Any = None


def _quiet_llama_logs(llama_cpp: Any) -> None:
    """Keep llama.cpp's log lines (warnings and errors) in memory instead of on stderr."""
    global _LOG_CALLBACK
    if _LOG_CALLBACK is not None:
        return

    @llama_cpp.llama_log_callback  # type: ignore[untyped-decorator]
    def _collect(level: int, text: bytes, user_data: Any) -> None:
        if level in (2, 3):  # GGML_LOG_LEVEL_WARN, GGML_LOG_LEVEL_ERROR
            _LLAMA_LOG.append(text.decode("utf-8", errors="replace").strip())

    _LOG_CALLBACK = _collect  # keep a reference: llama.cpp calls it later
    llama_cpp.llama_log_set(_collect, ctypes.c_void_p(0))


def recent_llama_log() -> list[str]:
    """llama.cpp's latest warning and error lines (for diagnostics)."""
    return list(_LLAMA_LOG)


@contextmanager
def extra_buffer_types(enabled: bool) -> Iterator[None]:
    """Models loaded inside the block have llama.cpp's ``use_extra_bufts`` set to ``enabled``.

    Extra buffer types (weight repacking, AMX) crashed llama.cpp's first decode with a
    segmentation fault on this project's Xeon VMs (AMX present); they are off unless asked for.
    ``Llama`` does not expose the parameter, so its default-params call is wrapped meanwhile.
    """
    import llama_cpp

    c_api = llama_cpp.llama_cpp
    original = c_api.llama_model_default_params

    def patched() -> Any:
        params = original()
        params.use_extra_bufts = enabled
        return params

    c_api.llama_model_default_params = patched
    try:
        yield
    finally:
        c_api.llama_model_default_params = original


def load_error(
    exc: BaseException, info: GGUFInfo, n_ctx: int, log: Sequence[str]
) -> InferenceError:
    """One line for llama-cpp-python failing to open a model: a context it could not make
    (llama.cpp cannot allocate its memory) says what to lower; anything else gives
    llama.cpp's last warning or error line."""
    if "llama_context" in str(exc):
        trained = (
            f" (the model was trained with {info.context_length})" if info.context_length else ""
        )
        return InferenceError(
            f"the context of {n_ctx} tokens does not fit in memory: lower --n-ctx{trained}"
        )
    detail = next((line for line in reversed(log) if line), str(exc))
    return InferenceError(f"llama.cpp could not load {info.path}: {detail}")


def open_llama(model_path: str | Path, *, extra_buffers: bool = False, **kwargs: Any) -> Any:
    """``llama_cpp.Llama(model_path, **kwargs)`` with llama.cpp's ``use_extra_bufts`` set
    (off unless asked for: :func:`extra_buffer_types`)."""
    import llama_cpp

    _quiet_llama_logs(llama_cpp.llama_cpp)
    with extra_buffer_types(extra_buffers):
        return llama_cpp.Llama(model_path=str(model_path), **kwargs)


def gpu_offload_supported() -> bool:
    """Whether the installed llama.cpp was built with GPU offload (no model loaded)."""
    import llama_cpp

    return bool(llama_cpp.llama_supports_gpu_offload())


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


class LlamaCppBackend(Backend):
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
                verbose=False,
            )
        except (ValueError, RuntimeError, OSError) as exc:
            raise load_error(exc, self.info, n_ctx, recent_llama_log()) from exc
        self.n_ctx = self.llm.n_ctx()
        self._vocab = self._c.llama_model_get_vocab(self.llm.model)
        self.n_vocab = int(self._c.llama_vocab_n_tokens(self._vocab))
        self.logprob_reader = RawLogprobReader(self.n_vocab)
        self._piece_cache: dict[int, bytes] = {}
        self._engines: dict[int, BatchedLlamaEngine] = {}
        self._thread_tuners: dict[str, ThreadTuner] = {}
        self._prompt_threads = self.thread_tuner("single-prompt")
        self._step_threads = self.thread_tuner("single-step")
        self._threads = threads
        self.reuse_prefix = False
        """Reuse the KV cache of a shared prompt prefix (faster; off: every prompt is evaluated
        from scratch, so a generation does not depend on what ran before it)."""

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
                if self._c.llama_vocab_is_eog(self._vocab, token_id):
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

    def forced_tokens(self, text: str) -> list[int]:
        """The tokens of a reply's text (no BOS, no special tokens)."""
        return list(self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))

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
