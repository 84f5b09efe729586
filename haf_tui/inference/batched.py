"""Continuous batched decoding on llama.cpp's low-level API, with shared-prefix reuse.

llama-cpp-python's ``Llama`` decodes one sequence at a time. :class:`BatchedLlamaEngine`
keeps up to ``n_parallel`` sequences in one context (``n_seq_max = n_parallel``, a unified
KV cache) and advances all of them with one ``llama_decode`` per step: one token per
sequence in one ``llama_batch``. A sequence that ends frees its slot, and the next request
is admitted at once (continuous batching), so short answers never wait for long ones.

Every sequence has its own sampler chain, built like ``Llama.generate``'s (top-k, typical
1.0, top-p, min-p 0, temperature, then ``dist`` seeded with the request's seed), so a request
samples what the single-sequence path samples from the same logits. The raw logprob of
each sampled token and its top-k come from that sequence's logits row, as in
:class:`~haf_tui.inference.llama.LlamaCppBackend`.

Prefix reuse: a new prompt that shares a token prefix with a sequence already in the KV cache
(a live sequence, or another prompt admitted in the same round) gets that prefix by
``llama_memory_seq_cp`` instead of evaluating it again: the UPHOLD-STANCE sub-prompts of one
instance share the system message and the TEXT, and every prompt shares the system message.
Forced replies after one prompt (a text's label spellings) share more: one evaluates the
prompt, its last position's logits give every reply's first token, and only the replies
with more tokens get sequences of their own (:meth:`BatchedLlamaEngine._share_forced_prompts`).

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

import ctypes
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from haf_tui.inference.base import (
    GeneratedToken,
    Generation,
    GenerationRequest,
    InferenceError,
    RequestSource,
    TokenTextAssembler,
)
from haf_tui.inference.chat import PromptSegment, RenderedPrompt
from haf_tui.inference.threads import ThreadTuner

if TYPE_CHECKING:
    from haf_tui.inference.llama import LlamaCppBackend

START_SEQ_CTX = 512
"""Cells per KV stream an engine starts with (see the module's docstring, "Stream size")."""

MIN_SHARED_PREFIX = 32
"""Shorter common prefixes are evaluated again: a copy moves the whole KV stream of the source."""


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


@dataclass(eq=False)
class _Sequence:
    """One request in flight: its slot (none for a rider, see
    :meth:`BatchedLlamaEngine._share_forced_prompts`), tokens in the KV cache and output so
    far."""

    seq_id: int
    request: GenerationRequest
    prompt: RenderedPrompt
    prompt_tokens: list[int]
    max_new: int
    sampler: Any
    started: float
    kv_tokens: list[int] = field(default_factory=list)
    tokens: list[GeneratedToken] = field(default_factory=list)
    assembler: TokenTextAssembler = field(default_factory=TokenTextAssembler)
    pending: int = -1
    prompt_seconds: float = 0.0
    reused: int = 0
    source: int = -1
    forced_from: int = -1  # a forced reply: where its tokens start in prompt_tokens (-1: none)
    siblings: list[_Sequence] = field(default_factory=list)
    """Forced replies after the same prompt whose first token is read from this sequence's
    logits (see :meth:`BatchedLlamaEngine._share_forced_prompts`)."""
    first_read: bool = False  # its first forced token was read from a sibling's logits

    @property
    def first_output(self) -> int:
        """The first position whose logits are read: the last prompt token (sampling), or the
        one before a forced reply's first token (the first token itself when that one was
        read from a sibling's logits)."""
        if self.forced_from >= 0:
            return self.forced_from - (0 if self.first_read else 1)
        return len(self.prompt_tokens) - 1

    @property
    def evaluated_end(self) -> int:
        """Where evaluation stops: the whole prompt (sampling), all but a forced reply's last
        token (nothing follows it)."""
        return len(self.prompt_tokens) - (1 if self.forced_from >= 0 else 0)


def common_prefix_length(a: list[int], b: list[int]) -> int:
    """How many leading tokens ``a`` and ``b`` share."""
    limit = min(len(a), len(b))
    if a[:limit] == b[:limit]:
        return limit
    low, high = 0, limit  # a[:low] == b[:low] and a[:high] != b[:high]
    while high - low > 1:
        middle = (low + high) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle
    return low


def batched_context_params(
    backend: LlamaCppBackend, n_sequences: int, seq_ctx: int | None = None
) -> Any:
    """The ``llama_context_params`` of a context that decodes ``n_sequences`` sequences of
    ``seq_ctx`` tokens (None: ``backend.n_ctx``) together (the engine's; the benchmark's raw
    ceiling uses them too, so both decode on the same kind of context)."""
    c = backend.c_api
    params = c.llama_context_default_params()
    params.n_ctx = (seq_ctx or backend.n_ctx) * n_sequences
    params.n_batch = max(backend.n_batch, n_sequences)
    params.n_ubatch = min(params.n_batch, 512)
    params.n_seq_max = n_sequences
    params.n_threads = params.n_threads_batch = backend.n_threads
    params.kv_unified = False  # one KV stream per sequence: see the module's docstring
    params.swa_full = True  # a copied prefix keeps all its cells
    params.flash_attn_type = c.LLAMA_FLASH_ATTN_TYPE_DISABLED
    params.no_perf = True
    return params


class BatchedLlamaEngine:
    """Serves generation requests ``n_parallel`` at a time on one llama.cpp context."""

    def __init__(
        self,
        backend: LlamaCppBackend,
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
        self._active: dict[int, _Sequence] = {}
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
        new: list[_Sequence] = []
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
            seq = _Sequence(
                seq_id=self._free_ids.pop(),
                request=request,
                prompt=prompt,
                prompt_tokens=prompt_tokens,
                max_new=min(request.settings.max_new_tokens, self.seq_ctx - len(prompt_tokens)),
                sampler=self._sampler_chain(request),
                started=time.perf_counter(),
                forced_from=forced_from,
            )
            self._active[seq.seq_id] = seq
            new.append(seq)
            self.stats.requests += 1
            self.stats.prompt_tokens += len(prompt_tokens)
        branches = self._share_forced_prompts(new)
        self.stats.busiest = max(self.stats.busiest, len(self._active))
        levels = self._plan_prefixes([seq for seq in new if seq not in branches])
        for root_level, group in enumerate(list(levels)):  # a branch copies its root's prompt
            for root in group:
                for branch in root.siblings:
                    if branch in branches:
                        branch.reused, branch.source = branch.forced_from - 1, root.seq_id
                        while len(levels) <= root_level + 1:
                            levels.append([])
                        levels[root_level + 1].append(branch)
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

    def _share_forced_prompts(self, new: list[_Sequence]) -> list[_Sequence]:
        """Forced replies after one prompt (a text's label spellings) share it: the one with
        the most tokens (the root) evaluates the prompt, and the logits of its last prompt
        position give every reply's first token. A one-token reply then needs nothing more
        (it takes no slot and no KV cell); a longer one (a branch) copies the root's prompt
        and evaluates from the last prompt token on. The branches are returned.

        The four spellings of the classify prompt (``toxic`` one token, ``Toxic`` two,
        ``non-toxic`` and ``Non-toxic`` three with SmolLM2) so evaluate 7 tokens after the
        prompt instead of 11, in three sequences instead of four."""
        by_prompt: dict[tuple[int, ...], list[_Sequence]] = {}
        for seq in new:
            if seq.forced_from >= 1:
                by_prompt.setdefault(tuple(seq.prompt_tokens[: seq.forced_from]), []).append(seq)
        branches: list[_Sequence] = []
        for group in by_prompt.values():
            if len(group) < 2 or not self.reuse_prefix:
                continue
            root = max(group, key=lambda s: (len(s.prompt_tokens), -group.index(s)))
            for seq in group:
                if seq is root:
                    continue
                if len(seq.prompt_tokens) - seq.forced_from > 1:
                    if seq.forced_from - 1 < MIN_SHARED_PREFIX:
                        continue  # too short to copy (a whole stream): planned as any prompt
                    root.siblings.append(seq)
                    seq.first_read = True
                    branches.append(seq)
                    continue
                root.siblings.append(seq)
                seq.first_read = True
                new.remove(seq)  # a rider: read from the root, no slot of its own
                del self._active[seq.seq_id]
                self._free_ids.append(seq.seq_id)
                self._c.llama_sampler_free(seq.sampler)
                seq.seq_id, seq.sampler, seq.reused = -1, None, seq.forced_from
        return branches

    def _copy_prefix(self, source: int, target: int, length: int) -> None:
        """Give ``target`` the first ``length`` cells of ``source``: its stream is copied
        whole (llama.cpp copies the buffers at the next decode) and the rest removed."""
        self._c.llama_memory_seq_cp(self._memory, source, target, -1, -1)
        self._c.llama_memory_seq_rm(self._memory, target, length, -1)

    def _plan_prefixes(self, new: list[_Sequence]) -> list[list[_Sequence]]:
        """Which new sequences copy a prefix, and from whom, in levels evaluated one after the
        other: sequences already in the KV cache first; a prompt may also copy from a prompt
        of this round planned before it (one level later than that one), when that gains more
        than :data:`MIN_SHARED_PREFIX` tokens over the cache. (Forced replies to one prompt
        share it before this: only their root is planned here, see
        :meth:`_share_forced_prompts`.)"""
        in_cache = [s for s in self._active.values() if s.kv_tokens]
        planned: list[tuple[_Sequence, int]] = []  # (sequence, its level)
        levels: list[list[_Sequence]] = []
        for seq in sorted(new, key=lambda s: s.prompt_tokens):
            best, source, level = 0, -1, 0
            if self.reuse_prefix:
                for other in in_cache:
                    shared = common_prefix_length(seq.prompt_tokens, other.kv_tokens)
                    if shared > best:
                        best, source = shared, other.seq_id
                from_cache = best
                for other, other_level in planned:
                    shared = common_prefix_length(seq.prompt_tokens, other.prompt_tokens)
                    if shared > max(best, from_cache + MIN_SHARED_PREFIX):
                        best, source, level = shared, other.seq_id, other_level + 1
            # A forced reply needs the logits from its prompt's last token on. And at least two
            # tokens are evaluated after a copy: llama.cpp 0.3.36 gave a sequence that copied
            # all but its last prompt token and decoded that one alone logprobs up to 0.29
            # nats off (SmolLM2 135M, paper-sample texts; evaluating two: equal to alone).
            best = min(best, seq.first_output - 1)
            if best >= MIN_SHARED_PREFIX:
                seq.reused, seq.source = best, source
            else:
                level = 0
            planned.append((seq, level))
            while len(levels) <= level:
                levels.append([])
            levels[level].append(seq)
        return levels

    def _evaluate_prompts(self, group: list[_Sequence], source: RequestSource) -> None:
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
        self, seq: _Sequence, index: int, token_id: int, source: RequestSource
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

    def _sample(self, seq: _Sequence, index: int, source: RequestSource) -> None:
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

    def _capture(self, seq: _Sequence, index: int, token_id: int) -> None:
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

    def _finish(self, seq: _Sequence, finish_reason: str, source: RequestSource) -> None:
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

    def _release(self, seq: _Sequence) -> None:
        """Free a finished sequence's slot (while admitting, its cells stay until the round's
        copies are made)."""
        if seq.seq_id < 0:  # a rider (see _share_forced_prompts): no slot, no cells
            return
        self._active.pop(seq.seq_id, None)
        self._c.llama_sampler_free(seq.sampler)
        if self._holding:
            self._held.append(seq.seq_id)
            return
        self._c.llama_memory_seq_rm(self._memory, seq.seq_id, -1, -1)
        self._free_ids.append(seq.seq_id)

    def _sampler_chain(self, request: GenerationRequest) -> Any:
        """The sampler ``Llama.generate`` builds for these settings (its penalties stage is
        left out: with the neutral values used here it changes nothing)."""
        c, settings = self._c, request.settings
        chain = c.llama_sampler_chain_init(c.llama_sampler_chain_default_params())
        if settings.temperature == 0.0:
            c.llama_sampler_chain_add(chain, c.llama_sampler_init_greedy())
            return chain
        for stage in (
            c.llama_sampler_init_top_k(settings.top_k),
            c.llama_sampler_init_typical(1.0, 1),
            c.llama_sampler_init_top_p(settings.top_p, 1),
            c.llama_sampler_init_min_p(0.0, 1),
            c.llama_sampler_init_temp(settings.temperature),
            c.llama_sampler_init_dist(ctypes.c_uint32(settings.seed).value),
        ):
            c.llama_sampler_chain_add(chain, stage)
        return chain
