"""The rationales suite's cost per HateXplain post, before and after adaptive RANDOM (issue 27
§3), for ``make bench`` (``--only rationales`` runs this part alone).

Each arm drives real :class:`~haf_tui.methods.rationales.suite.plan.RationalePlan` s through
the batched engine as a run does (follow-ups admitted as their answers come in, the four
spellings of a text handed out together), without the store, on a backend of a run's default
context (4,096): "before" asks every RANDOM seed (``random_tolerance=0``, P2's 100) on KV
streams of the whole context (the engine before streams started small), "after" the new
default (a run settles it to
:data:`~haf_tui.methods.rationales.settings.DEFAULT_RANDOM_TOLERANCE`) on the engine's
growable streams. The ceiling is raw
``llama_decode`` on the same prompt tokens: every scored text's prompt (with its forced reply)
packed into full ``n_batch`` chunks over the engine's streams, no Python but the loop; its
tokens/s times the tokens the "after" arm evaluated gives the scored texts/s the engine could
reach at best. Arms interleaved (:func:`benchmarks.method.compare`), median ratios with spread.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.method import compare, load_average
from benchmarks.throughput import fill_batch
from haf_tui.config import DecodingSettings, RunConfig
from haf_tui.datasets.samples import import_paper_sample
from haf_tui.inference.base import Generation, GenerationRequest
from haf_tui.inference.batch_context import batched_context_params
from haf_tui.inference.batched import START_SEQ_CTX, BatchedLlamaEngine
from haf_tui.inference.llama import LlamaCppBackend
from haf_tui.methods.base import Reply, Task
from haf_tui.methods.rationales.settings import DEFAULT_RANDOM_TOLERANCE, RationaleSettings
from haf_tui.methods.rationales.suite.plan import RationalePlan
from haf_tui.store.records import InstanceRecord

P1_TEXT = (
    "those that are for illegal immigration and islamic culture refugees are idiot liberal "
    "progressives and globalists skills"
)
P1_TOKENS = P1_TEXT.split(" ")
P1_MARKED = ({4, 5, 7, 12, 13, 15}, {5, 7, 8, 9, 11, 12, 13, 15}, {4, 5, 7, 13, 15})
"""P1's Table 5 post (17 words) and its annotators' marks
(docs/methods/rationales.md#5-ground-truth)."""
POSTS_1024 = 1024
GPU_PROMPT_TOKENS_PER_S = 20_000.0
"""Assumed prompt tokens/s of the batched engine with the 135M model on one datacentre GPU
(not measured: no GPU was lent to this benchmark's session); the GPU projection scales by it."""


def _post(post_id: str, tokens: list[str], marked: list[set[int]]) -> InstanceRecord:
    masks = [[1 if i in m else 0 for i in range(len(tokens))] for m in marked]
    return InstanceRecord(
        instance_id=post_id,
        position=0,
        text=" ".join(tokens),
        label="hatespeech",
        extra={"post_tokens": tokens, "rationales": masks},
    )


def bench_posts(shared: Path, count: int) -> list[InstanceRecord]:
    """P1's post, then HateXplain posts of the paper sample with 17–25 words; the sample keeps
    no annotator masks, so theirs are synthetic: two annotators marking the same ⌈n/5⌉ words
    (seeded), a HARD of HateXplain's usual share."""
    posts = [_post("p1", P1_TOKENS, list(P1_MARKED))]
    path = shared / "data" / "haf-paper-samples" / "processed_hate_explain.csv"
    if path.exists():
        for instance in import_paper_sample(path).instances:
            if len(posts) >= count:
                break
            tokens = instance.text.split()
            if 17 <= len(tokens) <= 25 and " ".join(tokens) == instance.text:
                picked = set(
                    random.Random(len(posts)).sample(range(len(tokens)), -(-len(tokens) // 5))
                )
                posts.append(_post(instance.instance_id, tokens, [picked, picked]))
    return posts[:count]


class PlanSource:
    """Hands out the plans' tasks as requests and feeds each answer back to its plan (what
    the run's scheduler does, without the store)."""

    def __init__(self, plans: list[RationalePlan], decoding: DecodingSettings):
        self.plans, self.decoding = plans, decoding
        self.waiting: list[GenerationRequest] = []
        self.logprobs: dict[tuple[int, str, int], float] = {}
        self.forced_asked: dict[tuple[int, str, int], tuple[Any, str]] = {}
        for number, plan in enumerate(plans):
            self._add(number, plan.start())

    def _add(self, number: int, tasks: Any) -> None:
        for task in tasks:
            settings = self.decoding
            if task.greedy:
                settings = settings.model_copy(
                    update={"temperature": 0.0, "max_new_tokens": task.max_new_tokens or 64}
                )
            self.waiting.append(
                GenerationRequest(task.messages, settings, tag=(number, task), forced=task.forced)
            )

    def take(self, limit: int, *, wait: bool) -> list[GenerationRequest]:
        """The next requests, up to ``limit``."""
        taken, self.waiting = self.waiting[:limit], self.waiting[limit:]
        return taken

    def finished(self, request: GenerationRequest, generation: Generation) -> None:
        """Record the answer in its plan and queue what it makes possible."""
        tag: tuple[int, Task] = request.tag  # type: ignore[assignment]
        number, task = tag
        reply = Reply.of_generation(generation)
        if task.forced is not None:
            self.logprobs[(number, task.stage, task.sub_index)] = reply.logprob_sum
            self.forced_asked[(number, task.stage, task.sub_index)] = (
                request.messages,
                task.forced,
            )
        more, _ = self.plans[number].advance(task, reply)
        self._add(number, more)

    def stop_requested(self) -> bool:
        """Never."""
        return False


def _settings(tolerance: float) -> RunConfig:
    settings = RationaleSettings(random_tolerance=tolerance).model_dump()
    return RunConfig(suites=("rationales",), settings={"rationales": settings})


def drive(
    backend: LlamaCppBackend,
    posts: list[InstanceRecord],
    config: RunConfig,
    n_parallel: int,
    start_ctx: int = START_SEQ_CTX,
) -> dict[str, Any]:
    """Every post's plan through one batched engine (KV streams of ``start_ctx`` cells at
    first): seconds, texts scored, forced scorings, prompt tokens asked for and evaluated,
    RANDOM seeds, and the forced logprobs."""
    plans = [RationalePlan(post, config) for post in posts]
    source = PlanSource(plans, DecodingSettings(max_new_tokens=64, seed=7))
    engine = BatchedLlamaEngine(backend, n_parallel, start_ctx=start_ctx)
    try:
        started = time.perf_counter()
        engine.serve(source)
        seconds = time.perf_counter() - started
    finally:
        engine.close()
    if any(plan.planned() is None for plan in plans):
        raise RuntimeError("a plan was left unfinished")
    forced = sum(
        count for plan in plans for stage, count in plan.asked.items() if "prompt" not in stage
    )
    return {
        "seconds": seconds,
        "texts": sum(len(plan.scored) for plan in plans),
        "forced": forced,
        "prompt_tokens": engine.stats.prompt_tokens,
        "evaluated": engine.stats.prompt_tokens_evaluated,
        "seeds": [plan.random_asked for plan in plans],
        "asked": [dict(plan.asked) for plan in plans],
        "logprobs": source.logprobs,
        "forced_asked": source.forced_asked,
        "randoms": [plan.random_effects() for plan in plans],
        "texts_by_post": [list(plan.scored) for plan in plans],
    }


def raw_prompt_rate(backend: LlamaCppBackend, prompts: list[list[int]], n_streams: int) -> float:
    """Prompt tokens/s of bare ``llama_decode``: ``n_streams`` prompts at a time, their tokens
    packed into full ``n_batch`` chunks (the last position's logits read), no prefix reuse."""
    c = backend.c_api
    params = batched_context_params(backend, n_streams)
    n_batch = int(params.n_batch)
    ctx = c.llama_init_from_model(backend.llm.model, params)
    batch = c.llama_batch_init(n_batch, 0, 1)
    memory = c.llama_get_memory(ctx)
    tokens_done = 0
    try:
        started = time.perf_counter()
        for first in range(0, len(prompts), n_streams):
            group = prompts[first : first + n_streams]
            for seq_id in range(len(group)):
                c.llama_memory_seq_rm(memory, seq_id, -1, -1)
            entries = [
                (seq_id, position, token, position == len(tokens) - 1)
                for seq_id, tokens in enumerate(group)
                for position, token in enumerate(tokens)
            ]
            for start in range(0, len(entries), n_batch):
                fill_batch(batch, entries[start : start + n_batch])
                c.llama_decode(ctx, batch)
            tokens_done += len(entries)
        return float(tokens_done) / (time.perf_counter() - started)
    finally:
        c.llama_batch_free(batch)
        c.llama_free(ctx)


def _forced_prompts(backend: LlamaCppBackend, texts: list[str]) -> list[list[int]]:
    """Each text's classification prompt with its longest forced spelling, as tokens."""
    from haf_tui.methods.classify.core.labels import classify_messages

    return [
        backend.prepare_prompt(classify_messages(text))[1] + backend.forced_tokens("Non-toxic")
        for text in texts
    ]


def _random_difference(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """How the RANDOM comp and flip means of each post differ between every seed and the
    adaptive seeds (the same first masks)."""
    comp, flip = [], []
    for full, adaptive in zip(before["randoms"], after["randoms"], strict=True):
        if full is None or adaptive is None or not full[0]:
            continue
        comp.append(abs(statistics.fmean(full[0]) - statistics.fmean(adaptive[0])))
        flip.append(abs(statistics.fmean(full[1]) - statistics.fmean(adaptive[1])))
    return {
        "posts": len(comp),
        "comp_mean_abs_diff_max": round(max(comp, default=0.0), 4),
        "flip_mean_abs_diff_max": round(max(flip, default=0.0), 4),
    }


def _logprob_agreement(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """Forced logprobs of the (stage, sub-index) both arms asked: how far apart."""
    shared = set(before["logprobs"]) & set(after["logprobs"])
    gaps = [abs(before["logprobs"][k] - after["logprobs"][k]) for k in shared]
    return {
        "forced_compared": len(shared),
        "logprob_abs_diff_max": float(f"{max(gaps, default=0):.2e}"),
    }


def _single_path_agreement(backend: LlamaCppBackend, after: dict[str, Any]) -> dict[str, Any]:
    """Every forced reply the "after" arm scored, scored again alone (one sequence, its whole
    prompt evaluated at once: the reference): how many logprobs equal it to the bit, and how
    far the others are (llama.cpp's results can depend on how a decode was split into
    micro-batches)."""
    greedy = DecodingSettings(temperature=0.0, max_new_tokens=4)
    gaps = []
    for key, (messages, forced) in after["forced_asked"].items():
        alone = Reply.of_generation(backend.score(messages, forced, greedy)).logprob_sum
        gaps.append(abs(alone - after["logprobs"][key]))
    return {
        "forced_compared": len(gaps),
        "equal": sum(gap == 0.0 for gap in gaps),
        "logprob_abs_diff_max": float(f"{max(gaps, default=0):.2e}"),
    }


def bench_rationales_speed(
    backend: LlamaCppBackend,
    posts: list[InstanceRecord],
    n_parallel: int,
    rounds: int = 3,
    after_parallel: int | None = None,
) -> dict[str, Any]:
    """Before (every RANDOM seed) and after (adaptive RANDOM) on ``posts``, and the raw
    ``llama_decode`` ceiling on the same prompt tokens, interleaved: scored texts/s, forced
    scorings and RANDOM seeds per post, prompt tokens, the projected 1,024-post time."""
    configs = {"before": _settings(0.0), "after": _settings(DEFAULT_RANDOM_TOLERANCE)}
    start_ctx = {"before": backend.n_ctx, "after": START_SEQ_CTX}
    parallel = {"before": n_parallel, "after": after_parallel or n_parallel}
    last: dict[str, dict[str, Any]] = {
        name: drive(backend, posts, config, parallel[name], start_ctx[name])
        for name, config in configs.items()
    }
    prompts = _forced_prompts(
        backend, [t for texts in last["after"]["texts_by_post"] for t in texts]
    )
    seconds: dict[str, list[float]] = {"before": [], "after": []}

    def arm(name: str) -> Callable[[], float]:
        def run() -> float:
            last[name] = figures = drive(
                backend, posts, configs[name], parallel[name], start_ctx[name]
            )
            seconds[name].append(figures["seconds"])
            return float(figures["texts"]) / float(figures["seconds"])

        return run

    def ceiling() -> float:  # the "after" arm's scored texts/s at the raw prompt rate
        rate = raw_prompt_rate(backend, prompts, parallel["after"])
        after = last["after"]
        return float(after["texts"]) / (float(after["evaluated"]) / rate)

    figures = compare(
        {"before": arm("before"), "after": arm("after"), "ceiling": ceiling},
        rounds,
        {"after_over_ceiling": ("after", "ceiling"), "after_over_before": ("after", "before")},
    )
    per_post = {name: statistics.median(values) / len(posts) for name, values in seconds.items()}
    evaluated_per_post = last["after"]["evaluated"] / len(posts)
    return {
        "posts": len(posts),
        "words": [len(p.text.split()) for p in posts],
        "n_parallel": parallel,
        "figure": "scored texts per second",
        **figures,
        "forced_per_post": {
            name: [sum(v for k, v in a.items() if "prompt" not in k) for a in arm_["asked"]]
            for name, arm_ in last.items()
        },
        "random_seeds_after": last["after"]["seeds"],
        "prompt_tokens_per_post": {
            n: round(a["prompt_tokens"] / len(posts)) for n, a in last.items()
        },
        "evaluated_per_post": {n: round(a["evaluated"] / len(posts)) for n, a in last.items()},
        "seconds_per_post": {n: round(v, 2) for n, v in per_post.items()},
        "projected_1024_hours_cpu": {
            n: round(v * POSTS_1024 / 3600, 2) for n, v in per_post.items()
        },
        "projected_1024_hours_gpu_assumed": round(
            evaluated_per_post * POSTS_1024 / GPU_PROMPT_TOKENS_PER_S / 3600, 3
        ),
        "gpu_prompt_tokens_per_s_assumed": GPU_PROMPT_TOKENS_PER_S,
        "random_difference": _random_difference(last["before"], last["after"]),
        "logprob_agreement": _logprob_agreement(last["before"], last["after"]),
        "after_vs_single_path": _single_path_agreement(backend, last["after"]),
        "load_end": load_average(),
    }
