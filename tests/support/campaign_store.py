"""A store for campaign-report tests: four synthetic HAF runs (benchmarks.benchdata; the last
one interrupted) laid out as two models × two datasets, and a rationales run of the scripted
model through the real runner as a fifth cell that lacks HAF."""

from __future__ import annotations

from pathlib import Path

from benchmarks.benchdata import build_bench_db
from haf_tui.store import open_store
from tests.support.rationale_runs import store_rationale_run

MODEL_A = "Model A&B_1"
"""A model label with LaTeX specials in it."""
MODEL_B = "Model B"
MODEL_C = "Model C"


def campaign_db(path: Path, n_instances: int = 24) -> list[tuple[str, str, str]]:
    """Fill a new store at ``path``; returns the campaign's cells (model, dataset, run)."""
    haf_runs = build_bench_db(path, n_instances, 4, seed=3)
    with open_store(path) as store:
        rationale_run = store_rationale_run(store)
    return [
        (MODEL_A, "sample", haf_runs[0]),
        (MODEL_B, "sample", haf_runs[1]),
        (MODEL_A, "hate_explain", haf_runs[2]),
        (MODEL_B, "hate_explain", haf_runs[3]),
        (MODEL_C, "mini 50%", rationale_run),
    ]
