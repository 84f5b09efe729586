"""Throughput figures for ``make bench``: batched decoding, prefix reuse, occlusion scoring
(whole runs: :mod:`benchmarks.pipeline_bench`).

All on the embedded model and, when ``../shared`` is there, on the paper's samples (an equal
share of each of the five datasets; else the built-in sample):

- at each batch size B, interleaved: the single-sequence path (``LlamaCppBackend.generate``,
  one prompt after another), the batched engine, and the raw ``llama_decode`` ceiling
  (:class:`RawDecodeCeiling`), generated tokens/s after the prompts, and how the engine's
  generations agree with the single path (identical outputs; logprob differences);
- prompt tokens saved by prefix reuse on UPHOLD-REASON and UPHOLD-STANCE prompts, and the time
  it saves;
- the process's peak RSS after each part.
"""

from __future__ import annotations

import resource
import statistics
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.method import compare
from haf_tui.config import DecodingSettings, RunConfig
from haf_tui.datasets import builtin_sample
from haf_tui.datasets.model import Dataset
from haf_tui.datasets.samples import import_paper_sample, paper_sample_files
from haf_tui.inference.base import GeneratedToken, Generation, GenerationRequest, ListSource
from haf_tui.inference.batch_context import batched_context_params
from haf_tui.inference.batched import BatchedLlamaEngine
from haf_tui.inference.llama import LlamaCppBackend
from haf_tui.inference.threads import ThreadTuner
from haf_tui.methods.haf.core.prompts import justify_messages, reliance_messages, stance_prompts

BATCH_SIZES = (1, 4, 8, 16)
SINGLE_PROMPTS = 4
"""Prompts the single-sequence arm of a decoding comparison generates (its first ones)."""
BENCH_REASONS = (
    "It insults a group of people.",
    "It uses a demeaning stereotype.",
    "It encourages hostility toward them.",
)


def peak_rss_mib() -> float:
    """The process's peak resident memory so far."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def bench_dataset(shared: Path, count: int) -> Dataset:
    """``count`` paper-sample instances, an equal share from each dataset's CSV (the built-in
    sample when ``../shared`` is absent)."""
    files = paper_sample_files(shared / "data" / "haf-paper-samples")
    if not files:
        return builtin_sample()
    per_file = -(-count // len(files))
    instances = []
    for path in files:
        instances += import_paper_sample(path).instances[:per_file]
    instances = [i.model_copy(update={"position": n}) for n, i in enumerate(instances[:count])]
    return Dataset("bench-paper-mix", "paper samples (mixed)", str(shared), instances)


def _justify_requests(texts: list[str], max_new: int) -> list[GenerationRequest]:
    return [
        GenerationRequest(
            justify_messages(text), DecodingSettings(max_new_tokens=max_new, seed=100 + i), tag=i
        )
        for i, text in enumerate(texts)
    ]


def _agreement(
    single: dict[object, Generation], batched: dict[object, Generation]
) -> dict[str, Any]:
    """How batched generations agree with single-path ones of the same seeds."""
    identical, differences = 0, []
    for tag, reference in single.items():
        ours = batched[tag]
        identical += [t.token_id for t in ours.tokens] == [t.token_id for t in reference.tokens]
        for a, b in zip(ours.tokens, reference.tokens, strict=False):
            if a.token_id != b.token_id:
                break
            differences.append(abs(a.logprob - b.logprob))
    differences.sort()
    return {
        "identical_generations": f"{identical}/{len(single)}",
        "logprob_diff_median": float(f"{statistics.median(differences):.2e}"),
        "logprob_diff_p99": float(f"{differences[int(0.99 * (len(differences) - 1))]:.2e}"),
        "logprob_diff_max": float(f"{differences[-1]:.2e}"),
    }


def fill_batch(batch: Any, entries: list[tuple[int, int, int, bool]]) -> None:
    """Put ``(seq_id, position, token, logits wanted)`` entries into a ``llama_batch``."""
    for index, (seq_id, position, token, logits) in enumerate(entries):
        batch.token[index] = token
        batch.pos[index] = position
        batch.n_seq_id[index] = 1
        batch.seq_id[index][0] = seq_id
        batch.logits[index] = logits
    batch.n_tokens = len(entries)


class RawDecodeCeiling:
    """What ``llama_decode`` gives at a batch size with no Python around it but the loop: a
    context made like the batched engine's, the prompts evaluated (not timed), then one
    ``llama_batch`` of every live sequence's token per step, the next tokens the argmax of all
    logits rows in one numpy call. Each sequence runs as many steps as the engine's generation
    of the same request had tokens, so both decode the same shape of batch; the thread count
    is picked by the same :class:`ThreadTuner` as the engine's."""

    def __init__(self, backend: LlamaCppBackend, prompts: list[list[int]]):
        self.backend, self.prompts = backend, prompts
        c = self._c = backend.c_api
        params = batched_context_params(backend, len(prompts))
        self.n_batch = int(params.n_batch)
        self._ctx = c.llama_init_from_model(backend.llm.model, params)
        self._batch = c.llama_batch_init(self.n_batch, 0, 1)
        self._tuner = ThreadTuner(backend.thread_candidates)
        self._threads = backend.n_threads

    def close(self) -> None:
        self._c.llama_batch_free(self._batch)
        self._c.llama_free(self._ctx)

    def _fill(self, entries: list[tuple[int, int, int, bool]]) -> None:
        fill_batch(self._batch, entries)

    def tokens_per_second(self, lengths: list[int]) -> float:
        """Decode tokens/s after the prompts, sequence ``i`` making ``lengths[i]`` tokens."""
        c, ctx = self._c, self._ctx
        c.llama_memory_clear(c.llama_get_memory(ctx), True)
        c.llama_set_n_threads(ctx, self.backend.n_threads, self.backend.n_threads)
        self._threads = self.backend.n_threads
        entries = [
            (seq_id, position, token, position == len(tokens) - 1)
            for seq_id, tokens in enumerate(self.prompts)
            for position, token in enumerate(tokens)
        ]
        for start in range(0, len(entries), self.n_batch):
            self._fill(entries[start : start + self.n_batch])
            c.llama_decode(ctx, self._batch)
        n_vocab = self.backend.n_vocab
        logits = np.ctypeslib.as_array(c.llama_get_logits(ctx), shape=(len(self.prompts), n_vocab))
        tokens = logits.argmax(axis=1)
        positions = [len(p) for p in self.prompts]
        left = [max(n - 1, 0) for n in lengths]  # the first token came with the prompt
        decoded = 0
        started = time.perf_counter()
        while True:
            live = [i for i, n in enumerate(left) if n > 0]
            if not live:
                break
            self._fill([(i, positions[i], int(tokens[i]), True) for i in live])
            threads = self._tuner.choose(len(live))
            if threads != self._threads:
                c.llama_set_n_threads(ctx, threads, threads)
                self._threads = threads
            step_started = time.perf_counter()
            c.llama_decode(ctx, self._batch)
            self._tuner.record(threads, time.perf_counter() - step_started, len(live))
            rows = np.ctypeslib.as_array(c.llama_get_logits(ctx), shape=(len(live), n_vocab))
            for row, i in zip(rows.argmax(axis=1), live, strict=True):
                tokens[i] = row
                positions[i] += 1
                left[i] -= 1
            decoded += len(live)
        return decoded / (time.perf_counter() - started)


def _stamper(times: list[float]) -> Callable[[GeneratedToken], None]:
    """A token callback noting when each token came."""

    def note(_: GeneratedToken) -> None:
        times.append(time.perf_counter())

    return note


def _engine_decode(
    backend: LlamaCppBackend, requests: list[GenerationRequest]
) -> tuple[float, dict[object, Generation]]:
    """The batched engine on ``requests`` (one batch of them): tokens/s after the last
    sequence's first token (the decode phase, as the ceiling's), and the generations."""
    stamps: dict[object, list[float]] = {r.tag: [] for r in requests}
    timed = [replace(r, on_token=_stamper(stamps[r.tag])) for r in requests]
    engine = BatchedLlamaEngine(backend, len(requests))
    try:
        source = ListSource(timed)
        engine.serve(source)
    finally:
        engine.close()
    start = max(times[0] for times in stamps.values() if times)
    end = max(times[-1] for times in stamps.values() if times)
    after = sum(1 for times in stamps.values() for t in times if t > start)
    return after / (end - start) if end > start else 0.0, source.results


def _single_decode(
    backend: LlamaCppBackend, requests: list[GenerationRequest]
) -> tuple[float, dict[object, Generation]]:
    """The single-sequence path on ``requests`` one after another: tokens/s after each
    prompt (its first token), and the generations."""
    results = {r.tag: backend.generate(r.messages, r.settings) for r in requests}
    tokens = sum(max(len(g.tokens) - 1, 0) for g in results.values())
    seconds = sum(g.seconds - g.prompt_seconds for g in results.values())
    return tokens / seconds if seconds > 0 else 0.0, results


def _decode_comparison(
    backend: LlamaCppBackend, texts: list[str], max_new: int, size: int, rounds: int, busy: bool
) -> dict[str, Any]:
    """One batch size of :func:`bench_decoding`."""
    requests = _justify_requests(texts[:size], max_new)
    _, warm = _engine_decode(backend, requests)  # the lengths the ceiling replays
    lengths = [len(warm[r.tag].tokens) for r in requests]
    prompts = [backend.prepare_prompt(r.messages)[1] for r in requests]
    ceiling = RawDecodeCeiling(backend, prompts)
    last: dict[str, dict[object, Generation]] = {}

    def engine_arm() -> float:
        rate, last["engine"] = _engine_decode(backend, requests)
        return rate

    def single_arm() -> float:  # its rate does not depend on how many: a few suffice
        rate, last["single"] = _single_decode(backend, requests[:SINGLE_PROMPTS])
        return rate

    try:
        row = compare(
            {
                "single": single_arm,
                "engine": engine_arm,
                "ceiling": lambda: ceiling.tokens_per_second(lengths),
            },
            rounds,
            {
                "engine_over_ceiling": ("engine", "ceiling"),
                "engine_over_single": ("engine", "single"),
            },
            busy=busy,
        )
    finally:
        ceiling.close()
    row["generated_tokens"] = sum(lengths)
    row.update(_agreement(last["single"], last["engine"]))
    return row


def bench_decoding(
    backend: LlamaCppBackend,
    texts: list[str],
    max_new: int,
    *,
    rounds: int = 3,
    busy: bool = False,
    sizes: tuple[int, ...] = BATCH_SIZES,
) -> dict[str, Any]:
    """At each batch size B, on B JUSTIFY prompts, interleaved for ``rounds`` rounds: the
    single-sequence path (one prompt after another), the batched engine, and the raw
    ``llama_decode`` ceiling (:class:`RawDecodeCeiling`), each as generated tokens/s after the
    prompts; the median ratios engine/ceiling and engine/single with their spread, the load
    average, and how the engine's generations agree with the single path's."""
    figures: dict[str, Any] = {"max_new_tokens": max_new, "condition": "busy" if busy else "idle"}
    for size in sizes:
        figures[f"batch_{size}"] = _decode_comparison(backend, texts, max_new, size, rounds, busy)
    figures["peak_rss_mib"] = peak_rss_mib()
    return figures


def bench_prefix_reuse(
    backend: LlamaCppBackend, texts: list[str], n_parallel: int, rounds: int = 3
) -> dict[str, Any]:
    """UPHOLD-REASON and UPHOLD-STANCE prompts of a few instances with and without prefix
    reuse, interleaved: prompt tokens evaluated, seconds, the median speedup and its spread
    (8 new tokens each, so prompts dominate)."""
    settings = DecodingSettings(max_new_tokens=8, seed=7)
    messages = []
    for text in texts:
        for kind in ("internal", "external"):
            messages.append(reliance_messages(text, BENCH_REASONS, "toxic", kind))
        messages += [p.messages for p in stance_prompts(text, BENCH_REASONS, "toxic")]
    requests = [GenerationRequest(m, settings, tag=i) for i, m in enumerate(messages)]
    figures, prompt_tokens, evaluated = _reuse_comparison(
        backend, requests, n_parallel, rounds, "speedup"
    )
    saved = evaluated["without_reuse"] - evaluated["with_reuse"]
    return {
        "prompts": len(requests),
        "n_parallel": n_parallel,
        "figure": "seconds",
        **figures,
        "prompt_tokens": prompt_tokens,
        "prompt_tokens_evaluated": evaluated,
        "prompt_tokens_saved": saved,
        "saved_share": round(saved / max(prompt_tokens, 1), 3),
    }


def _reuse_comparison(
    backend: LlamaCppBackend,
    requests: list[GenerationRequest],
    n_parallel: int,
    rounds: int,
    ratio_name: str,
) -> tuple[dict[str, Any], int, dict[str, int]]:
    """The batched engine on ``requests`` with and without prefix reuse, interleaved: the
    comparison (seconds per arm, ``ratio_name`` = without ÷ with), the prompt tokens and the
    prompt tokens each arm evaluated."""
    evaluated: dict[str, int] = {}
    prompt_tokens = 0

    def arm(reuse: bool) -> Callable[[], float]:
        def run() -> float:
            nonlocal prompt_tokens
            engine = BatchedLlamaEngine(backend, n_parallel, reuse_prefix=reuse)
            try:
                started = time.perf_counter()
                engine.serve(ListSource(list(requests)))
                took = time.perf_counter() - started
            finally:
                engine.close()
            evaluated["with_reuse" if reuse else "without_reuse"] = (
                engine.stats.prompt_tokens_evaluated
            )
            prompt_tokens = engine.stats.prompt_tokens
            return took

        return run

    figures = compare(
        {"without_reuse": arm(False), "with_reuse": arm(True)},
        rounds,
        {ratio_name: ("without_reuse", "with_reuse")},
    )
    return figures, prompt_tokens, evaluated


OCCLUSION_WORDS = 16
"""Words kept of each text in the occlusion benchmark (its arm without prefix reuse evaluates
every prompt in full: 4 (n + 1) prompts per text)."""


def _occlusion_requests(texts: list[str]) -> list[GenerationRequest]:
    """The forced label spellings of each text (its first :data:`OCCLUSION_WORDS` words) and
    of every leave-one-out text of it, as the rationales suite asks for them (its plan's
    classify and occlusion tasks)."""
    from haf_tui.methods.rationales.suite.plan import CLASSIFY, OCCLUSION, RationalePlan
    from haf_tui.store.records import InstanceRecord

    config = RunConfig(suites=("rationales",))
    settings = DecodingSettings(max_new_tokens=4, seed=7)
    requests = []
    for number, text in enumerate(texts):
        plan = RationalePlan(
            InstanceRecord(instance_id=str(number), position=number, text=text), config
        )
        for task in plan.start():
            if task.stage in (CLASSIFY, OCCLUSION):
                tag = (number, task.stage, task.sub_index)
                requests.append(
                    GenerationRequest(task.messages, settings, tag=tag, forced=task.forced)
                )
    return requests


def bench_occlusion(
    backend: LlamaCppBackend, texts: list[str], n_parallel: int, rounds: int = 3
) -> dict[str, Any]:
    """The rationales suite's leave-one-out scoring (n + 1 texts per instance, four forced
    spellings each) batched with and without prefix reuse, interleaved (A B A B ...)
    ``rounds`` times: scored texts per second, prompt tokens saved, median ratio and spread."""
    requests = _occlusion_requests(texts)
    texts_scored = len(requests) // 4
    figures, prompt_tokens, evaluated = _reuse_comparison(
        backend, requests, n_parallel, rounds, "reuse_speedup"
    )
    saved = evaluated["without_reuse"] - evaluated["with_reuse"]
    return {
        "instances": len(texts),
        "scored_texts": texts_scored,
        "forced_replies": len(requests),
        "n_parallel": n_parallel,
        "figure": "seconds",
        **figures,
        "scored_texts_per_second": round(texts_scored / figures["median"]["with_reuse"], 2),
        "scored_texts_per_second_without_reuse": round(
            texts_scored / figures["median"]["without_reuse"], 2
        ),
        "prompt_tokens": prompt_tokens,
        "prompt_tokens_evaluated": evaluated,
        "prompt_tokens_saved": saved,
        "saved_share": round(saved / max(prompt_tokens, 1), 3),
    }
