"""Whole runs for ``make bench``: the pipeline (generation, scoring, storing) one at a time
against batched, interleaved (instances/hour); what the classify suite adds to a HAF run; a
whole rationales-suite run. Each run goes into a throwaway database. The decoding figures
(single against batched, prefix reuse, occlusion) are :mod:`benchmarks.throughput`'s."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.method import compare
from benchmarks.throughput import peak_rss_mib
from haf_tui.config import DecodingSettings, ModelSettings, RunConfig
from haf_tui.datasets.model import Dataset


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


def bench_pipeline(
    dataset: Dataset, max_new: int, n_parallel: int, *, rounds: int = 3, busy: bool = False
) -> dict[str, Any]:
    """The whole pipeline one at a time and batched on ``dataset`` into throwaway databases,
    interleaved for ``rounds`` rounds: instances/hour and generated tokens/s of each, the
    median ratio batched/sequential with its spread, the load average."""
    from haf_tui.pipeline.models import load_models

    base = RunConfig(
        decoding=DecodingSettings(max_new_tokens=max_new), model=ModelSettings(n_ctx=2048)
    )
    models = load_models(base)
    details: dict[str, dict[str, Any]] = {}

    def arm(label: str, parallel: int) -> Callable[[], float]:
        config = base.model_copy(
            update={"model": base.model.model_copy(update={"n_parallel": parallel})}
        )

        def run() -> float:
            seconds, summary, tokens = _timed_run(config, dataset, models)
            rate = float(summary.instances_done) / seconds * 3600
            entry = details.setdefault(label, {"n_parallel": parallel, "tokens_per_s": []})
            entry["generations"] = sum(summary.generations.values())
            entry["generated_tokens"] = tokens
            entry["tokens_per_s"].append(round(tokens / seconds, 1))
            return rate

        return run

    try:
        figures = compare(
            {"sequential": arm("sequential", 1), "batched": arm("batched", n_parallel)},
            rounds,
            {"batched_over_sequential": ("batched", "sequential")},
            busy=busy,
            digits=1,
        )
    finally:
        models.backend.close()
    return {
        "instances": len(dataset.instances),
        "max_new_tokens": max_new,
        "figure": "instances per hour",
        **figures,
        **details,
        "peak_rss_mib": peak_rss_mib(),
    }


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
    generations: dict[str, int] = {}

    def arm(suites: str) -> Callable[[], float]:
        config = base.model_copy(update={"suites": tuple(suites.split(","))})

        def run() -> float:
            took, summary, _ = _timed_run(config, dataset, models)
            generations[suites] = sum(summary.generations.values())
            return took

        return run

    try:
        figures = compare(
            {"haf": arm("haf"), "haf,classify": arm("haf,classify")},
            rounds,
            {"classify_over_haf": ("haf,classify", "haf")},
        )
    finally:
        models.backend.close()
    return {
        "instances": len(dataset.instances),
        "max_new_tokens": max_new,
        "n_parallel": n_parallel,
        "figure": "seconds",
        **figures,
        "generations": generations,
    }


def bench_rationales_run(dataset: Dataset, n_parallel: int, seeds: int) -> dict[str, Any]:
    """A whole rationales-suite run (prompted, occlusion, perturbations with ``seeds`` RANDOM
    masks) into a throwaway database: instances per hour and generations per stage."""
    from haf_tui.methods.rationales.settings import RationaleSettings
    from haf_tui.pipeline.models import load_models

    config = RunConfig(
        suites=("rationales",),
        model=ModelSettings(n_ctx=2048, n_parallel=n_parallel),
        settings={"rationales": RationaleSettings(random_seeds=seeds).model_dump()},
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
