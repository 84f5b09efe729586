"""Continuous batched decoding on llama.cpp's low-level API, with shared-prefix reuse.

llama-cpp-python's ``Llama`` decodes one sequence at a time. :class:`BatchedLlamaEngine`
keeps up to ``n_parallel`` sequences in one context (``n_seq_max = n_parallel``, a unified
KV cache) and advances all of them with one ``llama_decode`` per step: one token per
sequence in one ``llama_batch``. A sequence that ends frees its slot, and the next request
is admitted at once (continuous batching), so short answers never wait for long ones.

Every sequence has its own sampler chain, built like ``Llama.generate``'s
(:mod:`haf_tui.inference.batch_context`), so a request samples what the single-sequence path
samples from the same logits; its tokens' raw logprobs are read from its logits row by the
model (:class:`~haf_tui.inference.llama_model.LlamaModel`), as on that path.

Prefix reuse: a new prompt that shares a token prefix with a sequence already in the KV cache
gets it by ``llama_memory_seq_cp`` instead of evaluating it again, and forced replies after one
prompt share it (planned by :mod:`haf_tui.inference.batch_plan`).

Each sequence has its own KV stream (``kv_unified = False``). With one unified cache, llama.cpp
0.3.36 gave a prompt evaluated after another sequence's cells logprobs up to 0.8 nats away
from the same prompt evaluated alone (measured on Gemma 3 270M); with a stream per
sequence the results equal the single-sequence path's bit for bit in our tests, but for
rare ones where a decode was split into micro-batches differently (2 of 432 rationales
scorings at 32 in flight, within 0.0062 nats; none at 8: docs/suites.md, rationales). Copying a
prefix between streams copies the stream's buffers (a few milliseconds), then drops the cells
past the prefix.

Stream size: copying a prefix copies the source's whole KV stream, so its cost grows with the
stream's cells, not with the prefix. An engine starts with streams of :data:`START_SEQ_CTX`
cells (the backend's context when smaller) and grows them to the backend's context the first
time a request needs more (prompt, forced reply, ``max_new_tokens``): at once when nothing is
in flight, else once what is in flight has finished. Short requests (the rationales suite's
forced label scores) so copy a fraction of what a 4,096-cell stream costs; the stream size
changes no logprob (equal bit for bit at 512 and 4,096 cells on the rationales suite's texts).

Threads: every decode goes through a :class:`ThreadTuner`, which picks llama.cpp's thread
count from the decode times it measures (see there): on a shared machine a decode on every
core waits on whichever of its threads the OS has descheduled.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from haf_tui.inference.base import (
    Generation,
    GenerationRequest,
    InferenceError,
    RequestSource,
)
from haf_tui.inference.batch_context import batched_context_params, sampler_chain
from haf_tui.inference.batch_plan import (
    BatchSequence,
    place_branches,
    plan_prefixes,
    share_forced_prompts,
)
from haf_tui.inference.chat import PromptSegment
from haf_tui.inference.threads import ThreadTuner

if TYPE_CHECKING:
    from haf_tui.inference.llama_model import LlamaModel

START_SEQ_CTX = 512
"""Cells per KV stream an engine starts with (see the module's docstring, "Stream size")."""


@dataclass
class BatchStats:
    """What a batched engine did: prompt tokens asked for and evaluated, tokens generated."""

    prompt_tokens: int = 0
    prompt_tokens_evaluated: int = 0
    generated_tokens: int = 0
    decode_steps: int = 0
    busiest: int = 0
    requests: int = 0
    decodes_by_threads: Counter[int] = field(default_factory=Counter)

    @property
    def prompt_tokens_saved(self) -> int:
        """Prompt tokens taken from the KV cache of another sequence instead of evaluated."""
        return self.prompt_tokens - self.prompt_tokens_evaluated


class BatchedLlamaEngine:
    """Serves generation requests ``n_parallel`` at a time on one llama.cpp context."""

    def __init__(
        self,
        backend: LlamaModel,
        n_parallel: int,
        *,
        reuse_prefix: bool = True,
        start_ctx: int = START_SEQ_CTX,
    ) -> None:
        if n_parallel < 1:
            raise ValueError("n_parallel must be at least 1")
        self.backend = backend
        self.n_parallel = n_parallel
        self.reuse_prefix = reuse_prefix
        self.stats = BatchStats()
        self._c = backend.c_api
        self._ctx: Any = None
        self._make_context(min(start_ctx, backend.n_ctx))
        self._batch = self._c.llama_batch_init(self.n_batch, 0, 1)
        self._deferred: list[GenerationRequest] = []
        self._free_ids = self._all_slots()
        self._active: dict[int, BatchSequence] = {}
        self._holding = False  # while admitting: a finished sequence's cells may be copied yet
        self._held: list[int] = []
        # the backend's, so what one engine learnt holds for the next
        self._prompt_threads = backend.thread_tuner("batched-prompt")
        self._step_threads = backend.thread_tuner("batched-step")
        self._threads = backend.n_threads

    def _make_context(self, seq_ctx: int) -> None:
        """A context of ``n_parallel`` streams of ``seq_ctx`` cells; the old one is freed
        once the new one is made (when it cannot be, the old one stays, whole and usable)."""
        params = batched_context_params(self.backend, self.n_parallel, seq_ctx)
        made = self._c.llama_init_from_model(self.backend.llm.model, params)
        if not made:
            raise InferenceError(
                f"llama.cpp could not make a context for {self.n_parallel} sequences of "
                f"{seq_ctx} tokens: lower --parallel or --n-ctx"
            )
        if self._ctx:
            self._c.llama_free(self._ctx)
        self._ctx, self.seq_ctx, self.n_batch = made, seq_ctx, int(params.n_batch)
        self._memory = self._c.llama_get_memory(self._ctx)
        self._threads = self.backend.n_threads  # (a new context decodes at the backend's)

    def _needs_more(self, requests: list[GenerationRequest]) -> bool:
        """Whether one of ``requests`` needs longer streams than the engine has now (and the
        backend's context allows them)."""
        if self.seq_ctx >= self.backend.n_ctx:
            return False
        for request in requests:
            need = self.backend.tokens_needed(
                request.messages, [request.reply_prefix + (request.forced or "")]
            )
            if request.forced is None:
                need += request.settings.max_new_tokens
            if need >= self.seq_ctx:
                return True
        return False

    def close(self) -> None:
        """Free the context and the batch (the model stays with its backend)."""
        if self._ctx:
            self._c.llama_batch_free(self._batch)
            self._c.llama_free(self._ctx)
            self._ctx = None

    def serve(self, source: RequestSource) -> None:
        """Generate every request ``source`` hands out, until it has none left and none is in
        flight; each finished generation goes back through ``source.finished``.

        An exception (from a token callback or ``source``) ends the call: the requests in
        flight are dropped and their slots freed."""
        try:
            while True:
                requests: list[GenerationRequest] = []
                if self._deferred and not self._active:  # longer streams, now none is in use
                    self._make_context(self.backend.n_ctx)
                    requests, self._deferred = self._deferred, []
                    self._admit(requests, source)
                elif self._free_ids and not self._deferred:
                    requests = source.take(len(self._free_ids), wait=not self._active)
                    if requests and self._needs_more(requests):
                        self._deferred = requests  # admitted once the streams are longer
                    elif requests:
                        self._admit(requests, source)
                if self._active:
                    self._step(source)
                elif not requests:
                    return
        finally:
            for seq in list(self._active.values()):
                self._c.llama_sampler_free(seq.sampler)
            self._active.clear()
            self._holding, self._held = False, []
            self._deferred = []
            self._c.llama_memory_clear(self._memory, True)
            self._free_ids = self._all_slots()

    def _all_slots(self) -> list[int]:
        """Every sequence id, the lowest last (handed out first)."""
        return list(range(self.n_parallel - 1, -1, -1))

    # admission: render, plan prefix copies, evaluate prompts, sample first tokens

    def _admit(self, requests: list[GenerationRequest], source: RequestSource) -> None:
        new: list[BatchSequence] = []
        for request in requests:
            prompt, prompt_tokens = self.backend.prepare_prompt(request.messages)
            if request.reply_prefix:  # the reply's given start goes in with the prompt
                prompt_tokens = prompt_tokens + self.backend.forced_tokens(request.reply_prefix)
                tail = PromptSegment(request.reply_prefix, plain=True)
                prompt = replace(prompt, segments=(*prompt.segments, tail))
            forced_from = -1
            if request.forced is not None:  # the reply's tokens go in with the prompt
                forced_from = len(prompt_tokens)
                prompt_tokens = prompt_tokens + self.backend.forced_tokens(request.forced)
                if len(prompt_tokens) > self.seq_ctx or forced_from == len(prompt_tokens):
                    raise InferenceError(
                        f"a forced reply of {len(prompt_tokens) - forced_from} tokens does not "
                        f"fit after its prompt in {self.seq_ctx} tokens"
                    )
            seq = BatchSequence(
                seq_id=self._free_ids.pop(),
                request=request,
                prompt=prompt,
                prompt_tokens=prompt_tokens,
                max_new=min(request.settings.max_new_tokens, self.seq_ctx - len(prompt_tokens)),
                sampler=sampler_chain(self._c, request.settings),
                started=time.perf_counter(),
                forced_from=forced_from,
            )
            self._active[seq.seq_id] = seq
            new.append(seq)
            self.stats.requests += 1
            self.stats.prompt_tokens += len(prompt_tokens)
        branches, riders = share_forced_prompts(new, self.reuse_prefix)
        for seq in riders:  # read from their root's logits: no slot, no cells
            del self._active[seq.seq_id]
            self._free_ids.append(seq.seq_id)
            self._c.llama_sampler_free(seq.sampler)
            seq.seq_id, seq.sampler, seq.reused = -1, None, seq.forced_from
        self.stats.busiest = max(self.stats.busiest, len(self._active))
        in_cache = [s for s in self._active.values() if s.kv_tokens]
        levels = plan_prefixes(
            [seq for seq in new if seq not in branches], in_cache, self.reuse_prefix
        )
        place_branches(levels, branches)
        self._holding = True
        try:
            for group in levels:
                for seq in group:
                    if seq.reused:
                        self._copy_prefix(seq.source, seq.seq_id, seq.reused)
                        seq.kv_tokens = seq.prompt_tokens[: seq.reused]
                self._evaluate_prompts(group, source)
        finally:
            self._holding = False
            for seq_id in self._held:
                self._c.llama_memory_seq_rm(self._memory, seq_id, -1, -1)
                self._free_ids.append(seq_id)
            self._held = []

    def _copy_prefix(self, source: int, target: int, length: int) -> None:
        """Give ``target`` the first ``length`` cells of ``source``: its stream is copied
        whole (llama.cpp copies the buffers at the next decode) and the rest removed."""
        self._c.llama_memory_seq_cp(self._memory, source, target, -1, -1)
        self._c.llama_memory_seq_rm(self._memory, target, length, -1)

    def _evaluate_prompts(self, group: list[BatchSequence], source: RequestSource) -> None:
        """Evaluate what each prompt of ``group`` lacks, in chunks of ``n_batch`` tokens, and
        sample each one's first token from its last prompt position."""
        entries = [
            (seq, position, seq.prompt_tokens[position])
            for seq in group
            for position in range(seq.reused, seq.evaluated_end)
        ]
        self.stats.prompt_tokens_evaluated += len(entries)
        for start in range(0, len(entries), self.n_batch):
            chunk = entries[start : start + self.n_batch]
            outputs = [
                index
                for index, (seq, position, _) in enumerate(chunk)
                if position >= seq.first_output
            ]
            self._decode(
                [(seq.seq_id, position, token) for seq, position, token in chunk],
                outputs,
                self._prompt_threads,
            )
            for seq, _, token in chunk:
                seq.kv_tokens.append(token)
            for index in outputs:
                seq, position, _ = chunk[index]
                if not seq.prompt_seconds:
                    seq.prompt_seconds = time.perf_counter() - seq.started
                if seq.forced_from >= 0:
                    if position + 1 == seq.forced_from:
                        for sibling in seq.siblings:
                            sibling.prompt_seconds = seq.prompt_seconds
                            self._read_forced(
                                sibling, index, sibling.prompt_tokens[sibling.forced_from], source
                            )
                    self._read_forced(seq, index, seq.prompt_tokens[position + 1], source)
                else:
                    self._sample(seq, index, source)

    def _read_forced(
        self, seq: BatchSequence, index: int, token_id: int, source: RequestSource
    ) -> None:
        """The raw logprob of the next forced token, from the logits row at ``index``; the
        sequence ends with its last forced token."""
        self._capture(seq, index, token_id)
        if len(seq.tokens) == len(seq.prompt_tokens) - seq.forced_from:
            self._finish(seq, "forced", source)

    # decoding

    def _step(self, source: RequestSource) -> None:
        """One token for every sequence in flight, in one decode."""
        running = list(self._active.values())
        self._decode(
            [(seq.seq_id, len(seq.kv_tokens), seq.pending) for seq in running],
            list(range(len(running))),
            self._step_threads,
        )
        self.stats.decode_steps += 1
        for index, seq in enumerate(running):
            seq.kv_tokens.append(seq.pending)
            self._sample(seq, index, source)

    def _decode(
        self, entries: list[tuple[int, int, int]], outputs: list[int], tuner: ThreadTuner
    ) -> None:
        batch = self._batch
        wanted = set(outputs)
        for index, (seq_id, position, token) in enumerate(entries):
            batch.token[index] = token
            batch.pos[index] = position
            batch.n_seq_id[index] = 1
            batch.seq_id[index][0] = seq_id
            batch.logits[index] = index in wanted
        batch.n_tokens = len(entries)
        threads = tuner.choose(len(entries))
        if threads != self._threads:
            self._c.llama_set_n_threads(self._ctx, threads, threads)
            self._threads = threads
        started = time.perf_counter()
        status = self._c.llama_decode(self._ctx, batch)
        tuner.record(threads, time.perf_counter() - started, len(entries))
        self.stats.decodes_by_threads[threads] += 1
        if status != 0:
            detail = "no room left in the KV cache" if status == 1 else f"status {status}"
            raise InferenceError(f"llama.cpp batched decode failed: {detail}")

    def _sample(self, seq: BatchSequence, index: int, source: RequestSource) -> None:
        c, backend = self._c, self.backend
        token_id = int(c.llama_sampler_sample(seq.sampler, self._ctx, index))
        if c.llama_vocab_is_eog(backend.vocab, token_id):
            self._finish(seq, "stop", source)
            return
        self._capture(seq, index, token_id)
        self.stats.generated_tokens += 1
        if len(seq.tokens) >= seq.max_new:
            self._finish(seq, "length", source)
        else:
            seq.pending = token_id

    def _capture(self, seq: BatchSequence, index: int, token_id: int) -> None:
        """Add ``token_id`` to the sequence's output with its raw logprob and top-k from the
        logits row at ``index``, and show it to the request's token callback."""
        row = np.ctypeslib.as_array(
            self._c.llama_get_logits_ith(self._ctx, index), shape=(self.backend.n_vocab,)
        )
        token = self.backend.captured_token(
            row, token_id, seq.assembler, seq.request.settings.top_logprobs
        )
        seq.tokens.append(token)
        if seq.request.on_token is not None:
            seq.request.on_token(token)

    def _finish(self, seq: BatchSequence, finish_reason: str, source: RequestSource) -> None:
        prompt_count = seq.forced_from if seq.forced_from >= 0 else len(seq.prompt_tokens)
        generation = Generation(
            prompt_text=seq.prompt.text,
            prompt_token_count=prompt_count,
            text=seq.assembler.finish(),
            tokens=seq.tokens,
            finish_reason=finish_reason,
            seconds=time.perf_counter() - seq.started,
            chat_format=seq.prompt.chat_format,
            prompt_seconds=seq.prompt_seconds,
            extra={"folded_system": seq.prompt.folded_system, "prompt_tokens_reused": seq.reused},
        )
        self._release(seq)
        source.finished(seq.request, generation)

    def _release(self, seq: BatchSequence) -> None:
        """Free a finished sequence's slot (while admitting, its cells stay until the round's
        copies are made)."""
        if seq.seq_id < 0:  # a rider (see share_forced_prompts): no slot, no cells
            return
        self._active.pop(seq.seq_id, None)
        self._c.llama_sampler_free(seq.sampler)
        if self._holding:
            self._held.append(seq.seq_id)
            return
        self._c.llama_memory_seq_rm(self._memory, seq.seq_id, -1, -1)
        self._free_ids.append(seq.seq_id)
