"""Throughput figures for ``make bench``: batched decoding, prefix reuse, the pipeline end to end.

All on the embedded model and, when ``../shared`` is there, on the paper's samples (an equal
share of each of the five datasets; else the built-in sample):

- single-sequence (``LlamaCppBackend.generate``, one prompt after another) against the batched
  engine at each batch size: aggregate tokens/s (wall clock, prompts included), and how the
  generations agree with the single path (identical outputs; logprob differences on shared
  tokens);
- prompt tokens saved by prefix reuse on UPHOLD-REASON and UPHOLD-STANCE prompts, and the time
  it saves;
- the whole pipeline (generation, scoring, storing) one at a time against batched:
  instances/hour;
- the process's peak RSS after each part.
"""

from __future__ import annotations

import resource
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from haf_tui.config import DecodingSettings, ModelSettings, RunConfig
from haf_tui.datasets import builtin_sample
from haf_tui.datasets.model import Dataset
from haf_tui.datasets.samples import import_paper_sample, paper_sample_files
from haf_tui.inference.base import Generation, GenerationRequest, ListSource
from haf_tui.inference.batched import BatchedLlamaEngine
from haf_tui.inference.llama import LlamaCppBackend
from haf_tui.prompts import justify_messages, reliance_messages, stance_prompts

BATCH_SIZES = (1, 4, 8, 16)
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


def bench_batched_decoding(
    backend: LlamaCppBackend, texts: list[str], max_new: int
) -> dict[str, Any]:
    """Tokens/s of the single path against the batched engine at every batch size."""
    requests = _justify_requests(texts, max_new)
    backend.generate(requests[0].messages, requests[0].settings.model_copy(update={"seed": 1}))
    started = time.perf_counter()
    single = {r.tag: backend.generate(r.messages, r.settings) for r in requests}
    single_seconds = time.perf_counter() - started
    single_tokens = sum(len(g.tokens) for g in single.values())
    single_rate = single_tokens / single_seconds
    rows: dict[str, Any] = {}
    for size in BATCH_SIZES:
        engine = BatchedLlamaEngine(backend, size)
        try:
            source = ListSource(requests)
            started = time.perf_counter()
            engine.serve(source)
            seconds = time.perf_counter() - started
        finally:
            engine.close()
        rate = engine.stats.generated_tokens / seconds
        rows[f"batch_{size}"] = {
            "tokens_per_s": round(rate, 1),
            "speedup_vs_single": round(rate / single_rate, 2),
            "prompt_tokens_saved": engine.stats.prompt_tokens_saved,
            **_agreement(single, source.results),
        }
    best = max(rows, key=lambda key: rows[key]["tokens_per_s"])
    return {
        "prompts": len(requests),
        "max_new_tokens": max_new,
        "single_tokens_per_s": round(single_rate, 1),
        **rows,
        "best": best,
        "best_speedup": rows[best]["speedup_vs_single"],
        "peak_rss_mib": peak_rss_mib(),
    }


def bench_prefix_reuse(
    backend: LlamaCppBackend, texts: list[str], n_parallel: int
) -> dict[str, Any]:
    """UPHOLD-REASON and UPHOLD-STANCE prompts of a few instances with and without prefix
    reuse: prompt tokens evaluated and seconds (8 new tokens each, so prompts dominate)."""
    settings = DecodingSettings(max_new_tokens=8, seed=7)
    messages = []
    for text in texts:
        for kind in ("internal", "external"):
            messages.append(reliance_messages(text, BENCH_REASONS, "toxic", kind))
        messages += [p.messages for p in stance_prompts(text, BENCH_REASONS, "toxic")]
    requests = [GenerationRequest(m, settings, tag=i) for i, m in enumerate(messages)]
    figures: dict[str, Any] = {"prompts": len(requests), "n_parallel": n_parallel}
    for reuse in (False, True):
        engine = BatchedLlamaEngine(backend, n_parallel, reuse_prefix=reuse)
        try:
            started = time.perf_counter()
            engine.serve(ListSource(requests))
            seconds = time.perf_counter() - started
        finally:
            engine.close()
        label = "with_reuse" if reuse else "without_reuse"
        figures[f"{label}_seconds"] = round(seconds, 2)
        figures[f"{label}_prompt_tokens_evaluated"] = engine.stats.prompt_tokens_evaluated
        figures["prompt_tokens"] = engine.stats.prompt_tokens
    figures["prompt_tokens_saved"] = (
        figures["without_reuse_prompt_tokens_evaluated"]
        - figures["with_reuse_prompt_tokens_evaluated"]
    )
    figures["saved_share"] = round(figures["prompt_tokens_saved"] / figures["prompt_tokens"], 3)
    figures["speedup"] = round(figures["without_reuse_seconds"] / figures["with_reuse_seconds"], 2)
    return figures


def _timed_run(config: RunConfig, dataset: Dataset, models: Any) -> tuple[float, Any, int]:
    """One run into a throwaway database: its seconds, summary and generated tokens."""
    from haf_tui.pipeline.runs import create_run, execute_run
    from haf_tui.store import open_store

    with (
        tempfile.TemporaryDirectory() as folder,
        open_store(Path(folder) / "bench.duckdb") as store,
    ):
        run_id, config = create_run(store, config, dataset, models)
        started = time.perf_counter()
        summary = execute_run(store, run_id, config, models)
        seconds = time.perf_counter() - started
        tokens = store.query("SELECT sum(output_tokens) FROM generations")[1][0][0]
    return seconds, summary, int(tokens or 0)


def bench_pipeline(dataset: Dataset, max_new: int, n_parallel: int) -> dict[str, Any]:
    """The whole pipeline one at a time and batched on ``dataset`` into throwaway databases."""
    from haf_tui.pipeline.models import load_models

    base = RunConfig(
        decoding=DecodingSettings(max_new_tokens=max_new), model=ModelSettings(n_ctx=2048)
    )
    models = load_models(base)
    figures: dict[str, Any] = {"instances": len(dataset.instances), "max_new_tokens": max_new}
    for label, parallel in (("sequential", 1), ("batched", n_parallel)):
        config = base.model_copy(
            update={"model": base.model.model_copy(update={"n_parallel": parallel})}
        )
        seconds, summary, tokens = _timed_run(config, dataset, models)
        figures[label] = {
            "n_parallel": parallel,
            "generations": sum(summary.generations.values()),
            "generated_tokens": tokens,
            "seconds": round(seconds, 1),
            "instances_per_hour": round(summary.instances_done / seconds * 3600, 1),
        }
    figures["speedup"] = round(
        figures["batched"]["instances_per_hour"] / figures["sequential"]["instances_per_hour"], 2
    )
    figures["peak_rss_mib"] = peak_rss_mib()
    models.backend.close()
    return figures


def bench_suites(
    dataset: Dataset, max_new: int, n_parallel: int, rounds: int = 3
) -> dict[str, Any]:
    """What the classify suite adds to a HAF run: the same instances run with ``haf`` and with
    ``haf,classify``, interleaved (A B A B ...) ``rounds`` times; median ratio and spread."""
    from haf_tui.pipeline.models import load_models

    base = RunConfig(
        decoding=DecodingSettings(max_new_tokens=max_new),
        model=ModelSettings(n_ctx=2048, n_parallel=n_parallel),
    )
    models = load_models(base)
    seconds: dict[str, list[float]] = {"haf": [], "haf,classify": []}
    generations: dict[str, int] = {}
    for _ in range(rounds):
        for arm in seconds:
            config = base.model_copy(update={"suites": tuple(arm.split(","))})
            took, summary, _ = _timed_run(config, dataset, models)
            seconds[arm].append(round(took, 2))
            generations[arm] = sum(summary.generations.values())
    ratios = [b / a for a, b in zip(seconds["haf"], seconds["haf,classify"], strict=True)]
    models.backend.close()
    return {
        "instances": len(dataset.instances),
        "max_new_tokens": max_new,
        "n_parallel": n_parallel,
        "seconds": seconds,
        "generations": generations,
        "classify_over_haf_median": round(statistics.median(ratios), 3),
        "classify_over_haf_spread": [round(min(ratios), 3), round(max(ratios), 3)],
    }


OCCLUSION_WORDS = 16
"""Words kept of each text in the occlusion benchmark (its arm without prefix reuse evaluates
every prompt in full: 4 (n + 1) prompts per text)."""


def _occlusion_requests(texts: list[str]) -> list[GenerationRequest]:
    """The forced label spellings of each text (its first :data:`OCCLUSION_WORDS` words) and
    of every leave-one-out text of it, as the rationales suite asks for them (its plan's
    classify and occlusion tasks)."""
    from haf_tui.store.records import InstanceRecord
    from haf_tui.suites.rationales.plan import CLASSIFY, OCCLUSION, RationalePlan

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
    seconds: dict[str, list[float]] = {"without_reuse": [], "with_reuse": []}
    evaluated: dict[str, int] = {}
    prompt_tokens = 0
    for _ in range(rounds):
        for arm in seconds:
            engine = BatchedLlamaEngine(backend, n_parallel, reuse_prefix=arm == "with_reuse")
            try:
                started = time.perf_counter()
                engine.serve(ListSource(list(requests)))
                seconds[arm].append(round(time.perf_counter() - started, 2))
            finally:
                engine.close()
            evaluated[arm] = engine.stats.prompt_tokens_evaluated
            prompt_tokens = engine.stats.prompt_tokens
    ratios = [a / b for a, b in zip(seconds["without_reuse"], seconds["with_reuse"], strict=True)]
    return {
        "instances": len(texts),
        "scored_texts": texts_scored,
        "forced_replies": len(requests),
        "n_parallel": n_parallel,
        "seconds": seconds,
        "scored_texts_per_second": round(
            texts_scored / statistics.median(seconds["with_reuse"]), 2
        ),
        "scored_texts_per_second_without_reuse": round(
            texts_scored / statistics.median(seconds["without_reuse"]), 2
        ),
        "prompt_tokens": prompt_tokens,
        "prompt_tokens_evaluated": evaluated,
        "prompt_tokens_saved": evaluated["without_reuse"] - evaluated["with_reuse"],
        "saved_share": round(
            (evaluated["without_reuse"] - evaluated["with_reuse"]) / max(prompt_tokens, 1), 3
        ),
        "reuse_speedup_median": round(statistics.median(ratios), 3),
        "reuse_speedup_spread": [round(min(ratios), 3), round(max(ratios), 3)],
    }


def bench_rationales_run(dataset: Dataset, n_parallel: int, seeds: int) -> dict[str, Any]:
    """A whole rationales-suite run (prompted, occlusion, perturbations with ``seeds`` RANDOM
    masks) into a throwaway database: instances per hour and generations per stage."""
    from haf_tui.config import RationaleSettings
    from haf_tui.pipeline.models import load_models

    config = RunConfig(
        suites=("rationales",),
        model=ModelSettings(n_ctx=2048, n_parallel=n_parallel),
        rationales=RationaleSettings(random_seeds=seeds),
    )
    models = load_models(config)
    try:
        took, summary, _ = _timed_run(config, dataset, models)
    finally:
        models.backend.close()
    return {
        "instances": len(dataset.instances),
        "random_seeds": seeds,
        "n_parallel": n_parallel,
        "seconds": round(took, 1),
        "generations": dict(summary.generations),
        "instances_per_hour": round(summary.instances_done / took * 3600, 1),
    }
