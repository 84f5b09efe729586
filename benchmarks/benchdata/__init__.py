"""Synthetic HAF runs for the TUI latency benchmark (``make bench``) and its tests.

:func:`build_bench_db` fills a store with ``n_runs`` runs over one dataset of ``n_instances``
texts. Per instance: a JUSTIFY generation (~60 tokens, each with its logprob and top-5
alternatives; 2–4 reasons with spans, relevances and TokenSAR confidences), then internal,
external and one individual (SUF / NEC) follow-up per reason, unless the instance stopped
(unclear stance ~10 %, no reasons ~3 %); follow-up decisions NO / YES / MAYBE / UNCLEAR, some
"Y = NO yet new reasons" contradictions; reason and instance metrics with the NULL patterns of a
real run. The last of several runs is left interrupted at 95 %. Everything is drawn from
``numpy.random.default_rng(seed)``: the same parameters give the same rows.

Two writers store the same rows: ``"api"`` calls :meth:`Store.save_generation` and
:meth:`Store.save_instance_result` per record, as the runner does (one transaction per
generation: minutes for 5,000 × 4); ``"bulk"`` (default) writes the same columns for 500
instances at a time in one transaction from numpy columns. ``tests/test_bench_tui.py`` checks
that both give identical tables.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Literal

from benchmarks.benchdata.bulk import write_records
from benchmarks.benchdata.synthetic import MODELS, TOP_K, Synthesizer
from haf_tui.config import RunConfig
from haf_tui.methods.loader import ensure_methods
from haf_tui.store import (
    GenerationRecord,
    InstanceRecord,
    InstanceResult,
    RunRecord,
    Store,
    open_store,
)

__all__ = [
    "TOP_K",
    "Synthesizer",
    "bench_db_path",
    "build_bench_db",
    "cached_bench_db",
    "write_records",
]

BENCH_VERSION = 1
"""Bump when the generated content changes: cached files are keyed by it."""
DATASET_ID = "bench-synthetic"
Writer = Literal["bulk", "api"]


def bench_db_path(folder: str | Path, n_instances: int, n_runs: int, seed: int) -> Path:
    """Where the cached database for these parameters lives."""
    name = f"tui-bench-v{BENCH_VERSION}-{n_instances}x{n_runs}-s{seed}.duckdb"
    return Path(folder) / name


def _runs(store: Store, n_instances: int, n_runs: int, seed: int) -> list[tuple[str, int]]:
    """Create the run rows: (run id, how many instances it finished)."""
    runs = []
    for k in range(n_runs):
        run_id = f"bench-s{seed}-run{k + 1}"
        done = n_instances - n_instances // 20 if n_runs > 1 and k == n_runs - 1 else n_instances
        store.create_run(
            RunRecord(
                run_id=run_id,
                status="created",
                dataset_id=DATASET_ID,
                n_planned=n_instances,
                config_json=RunConfig(dataset_id=DATASET_ID).model_dump_json(),
                model_file=MODELS[k % len(MODELS)],
                model_arch="llama",
                model_quant="Q4_K_M",
                similarity_model="all-MiniLM-L6-v2",
                similarity_kind="bi-encoder",
            )
        )
        runs.append((run_id, done))
    return runs


def build_bench_db(
    path: str | Path,
    n_instances: int = 5000,
    n_runs: int = 4,
    seed: int = 0,
    *,
    writer: Writer = "bulk",
    chunk: int = 500,
) -> list[str]:
    """Fill a new store at ``path`` with synthetic runs (see the module); returns the run ids.
    The methods are loaded first, so the store has their tables and migrations whoever calls:
    a store built without them was read through an upgraded copy of the whole file at every
    opening once they were loaded (1.8 s at 5,000 × 4), not as a user's store is read."""
    ensure_methods()
    synth = Synthesizer(seed)
    ids = [f"t{i:05d}" for i in range(n_instances)]
    texts = [synth.text() for _ in ids]
    labels = synth.rng.choice(["toxic", "non-toxic"], n_instances)
    records = [
        InstanceRecord(instance_id=i, position=p, text=t, label=str(label))
        for p, (i, t, label) in enumerate(zip(ids, texts, labels, strict=True))
    ]
    with open_store(path) as store:
        store.save_dataset(DATASET_ID, "synthetic bench", "benchmarks.benchdata", records)
        runs = _runs(store, n_instances, n_runs, seed)
        for run_id, done in runs:
            seconds = 0.0
            for first in range(0, done, chunk):
                generations: list[GenerationRecord] = []
                results: list[InstanceResult] = []
                for i in range(first, min(first + chunk, done)):
                    instance_generations, result = synth.instance(run_id, ids[i], texts[i])
                    generations += instance_generations
                    results.append(result)
                seconds += sum(g.seconds for g in generations)
                if writer == "bulk":
                    write_records(store, generations, results)
                    continue
                for generation in generations:
                    store.save_generation(generation)
                for result in results:
                    store.save_instance_result(result)
            status = "finished" if done == n_instances else "interrupted"
            store.update_run(run_id, status=status, seconds=round(seconds, 3))
    return [run_id for run_id, _ in runs]


def cached_bench_db(
    folder: str | Path, n_instances: int = 5000, n_runs: int = 4, seed: int = 0
) -> tuple[Path, list[str], float | None]:
    """The bench database for these parameters, built once into ``folder``: (path, run ids,
    build seconds, None when it was already there)."""
    path = bench_db_path(folder, n_instances, n_runs, seed)
    if path.is_file():
        with open_store(path, read_only=True) as store:
            rows = store.query("SELECT run_id FROM runs ORDER BY run_id")[1]
        return path, [str(r[0]) for r in rows], None
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    for leftover in (partial, partial.with_name(partial.name + ".wal")):
        leftover.unlink(missing_ok=True)
    started = time.perf_counter()
    run_ids = build_bench_db(partial, n_instances, n_runs, seed)
    seconds = time.perf_counter() - started
    partial.replace(path)
    return path, run_ids, seconds
