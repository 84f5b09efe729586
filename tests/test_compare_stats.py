"""The comparison statistics (haf_tui.reports.comparison) against hand-computed and scipy
values, the only-in-one-run accounting, the view's per-run assembly, and the store reads."""

from __future__ import annotations

import json
import math
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from benchmarks.benchdata import build_bench_db
from haf_tui.cli import main
from haf_tui.reports.comparison import (
    CONFIDENCE,
    N_RESAMPLES,
    SEED,
    WILCOXON_MIN_PAIRS,
    mean_interval,
    mean_without_interval,
    overlap,
    paired_difference,
)
from haf_tui.store import open_store
from haf_tui.store.comparison_readers import (
    ComparedRun,
    RunValues,
    compared_runs,
    instance_across,
    run_metric_values,
)
from haf_tui.tui.compare_data import instance_order, letter, run_statistics


def _scipy_interval(data: np.ndarray) -> tuple[float, float]:
    """The interval scipy gives for the mean of ``data`` with the module's settings."""
    found = stats.bootstrap(
        (data,),
        np.mean,
        confidence_level=CONFIDENCE,
        n_resamples=N_RESAMPLES,
        method="percentile",
        rng=np.random.default_rng(SEED),
    ).confidence_interval
    return float(found.low), float(found.high)


def test_the_mean_leaves_undefined_values_out_and_its_interval_is_scipys() -> None:
    values = {"a": 0.2, "b": None, "c": 0.5, "d": math.nan, "e": 0.9, "f": 0.4}
    found = mean_interval(values)
    assert found.n == 4
    assert found.mean == pytest.approx((0.2 + 0.5 + 0.9 + 0.4) / 4)
    low, high = _scipy_interval(np.array([0.2, 0.5, 0.9, 0.4]))
    assert found.low is not None and found.high is not None and found.mean is not None
    assert found.low == pytest.approx(low) and found.high == pytest.approx(high)
    assert 0.2 <= found.low <= found.mean <= found.high <= 0.9
    assert mean_interval(values) == found  # seeded: the same values, the same interval


def test_too_few_values_give_no_interval() -> None:
    assert mean_interval({"a": None}) == mean_interval([])
    empty = mean_interval([])
    assert (empty.n, empty.mean, empty.low, empty.high) == (0, None, None, None)
    one = mean_interval({"a": 0.3, "b": None})
    assert (one.n, one.mean, one.low, one.high) == (1, 0.3, None, None)
    constant = mean_interval([0.5, 0.5, 0.5])
    assert (constant.low, constant.high) == (0.5, 0.5)


def test_the_mean_without_interval_of_an_array_is_that_of_its_values() -> None:
    """A float array (the defined values a first comparison reads) gives the n and mean its
    values give as a list, to the last bit, a NaN left out alike; none defined: no mean."""
    spread = np.random.default_rng(3).random(1001) * 1e-3 + np.arange(1001)
    with_nan = np.concatenate([spread[:500], [math.nan], spread[500:]])
    from_array = mean_without_interval(with_nan)
    assert from_array == mean_without_interval([float(v) for v in with_nan])
    computed = mean_interval(list(spread))  # (the mean the intervals' computation gives)
    assert (from_array.n, from_array.mean) == (computed.n, computed.mean)
    assert (from_array.n, from_array.low, from_array.high) == (1001, None, None)
    nothing = mean_without_interval(np.array([math.nan]))
    assert (nothing.n, nothing.mean) == (0, None)


def test_the_paired_difference_against_hand_computed_values() -> None:
    first = {"i1": 1.0, "i2": 2.0, "i3": 3.0, "i4": 4.0, "i5": 5.0, "i6": 0.0, "only1": 0.1}
    first["undef"] = 9.0
    second = {"i1": 2.0, "i2": 4.0, "i3": 6.0, "i4": 8.0, "i5": 4.5, "i6": 6.0, "only2": 0.2}
    second["undef"] = None
    found = paired_difference(first, second)
    # differences second − first: 1, 2, 3, 4, −0.5, 6 over the six common instances
    assert found.n == 6 == WILCOXON_MIN_PAIRS
    assert found.mean == pytest.approx((1 + 2 + 3 + 4 - 0.5 + 6) / 6)
    # Wilcoxon by hand: ranks of |d| are 2, 3, 4, 5, 6 (positive) and 1 (negative): W− = 1;
    # with n = 6 the exact two-sided p is 2 · #{rank sets summing to ≤ 1} / 2⁶ = 2 · 2 / 64
    assert found.statistic == 1.0
    assert found.p_value == pytest.approx(0.0625)
    # the instances only one run defines: undefined in the second counts as only the first
    assert found.only_first == ("only1", "undef")
    assert found.only_second == ("only2",)


@pytest.mark.parametrize("n_pairs", [1, 2, 5])
def test_too_few_pairs_have_no_wilcoxon_p(n_pairs: int) -> None:
    """On n pairs the smallest two-sided p is 2/2ⁿ: below 6 pairs no difference could reach
    p < 0.05 (one pair: p = 1 whatever it is), so the test is not given; Δ still is."""
    first = {f"i{k}": float(k) for k in range(n_pairs)}
    second = {f"i{k}": float(k) + 1.0 + k for k in range(n_pairs)}
    found = paired_difference(first, second)
    assert found.n == n_pairs and found.mean is not None and found.mean > 0
    assert found.p_value is None and found.statistic is None
    assert 2 / 2**n_pairs > 0.05 >= 2 / 2**WILCOXON_MIN_PAIRS


def test_the_paired_interval_resamples_instances_as_pairs() -> None:
    rng = np.random.default_rng(3)
    x = rng.random(40)
    y = x + rng.normal(0.1, 0.05, 40)
    first = {f"i{k}": float(v) for k, v in enumerate(x)}
    second = {f"i{k}": float(v) for k, v in enumerate(y)}
    found = paired_difference(first, second)
    # resampling pairs is resampling the differences: the same seed, the same interval
    low, high = _scipy_interval(y - x)
    assert found.low is not None and found.high is not None and found.p_value is not None
    assert found.low == pytest.approx(low) and found.high == pytest.approx(high)
    assert found.low > 0  # a clear shift is seen as one
    test = stats.wilcoxon(y, x)
    assert found.p_value == pytest.approx(float(test.pvalue)) and found.p_value < 0.001


def test_equal_runs_have_no_test_and_disjoint_runs_no_pairs() -> None:
    same = paired_difference({"a": 0.5, "b": 0.7}, {"a": 0.5, "b": 0.7})
    assert (same.n, same.mean, same.low, same.high) == (2, 0.0, 0.0, 0.0)
    assert same.p_value is None and same.statistic is None
    apart = paired_difference({"a": 0.5}, {"b": 0.7})
    assert (apart.n, apart.mean, apart.p_value) == (0, None, None)
    assert (apart.only_first, apart.only_second) == (("a",), ("b",))


def test_overlap_keeps_the_order_of_each_run() -> None:
    split = overlap(["c", "a", "b", "a"], ["b", "d", "c"])
    assert split.both == ("c", "b")
    assert split.only_first == ("a",)
    assert split.only_second == ("d",)


def _run(run_id: str, dataset: str = "d") -> ComparedRun:
    return ComparedRun(run_id, f"{run_id}.gguf", "Q4_K_M", dataset, 3, 3, datetime(2026, 1, 1), "x")


def test_each_run_is_paired_with_the_first_on_the_same_dataset_only() -> None:
    values: RunValues = {
        "r1": {"i1": {"sos": 0.2}, "i2": {"sos": 0.4}, "i3": {"sos": None}},
        "r2": {"i1": {"sos": 0.3}, "i2": {"sos": 0.6}, "i4": {"sos": 0.1}},
        "r3": {"i1": {"sos": 0.9}},
    }
    found = run_statistics([_run("r1"), _run("r2"), _run("r3", dataset="other")], values)
    assert [f.letter for f in found] == ["A", "B", "C"]
    assert found[0].paired is None and found[2].paired is None  # the reference; another dataset
    assert found[0].means["sos"].n == 2 and found[0].means["dis"].n == 0
    paired = found[1].paired
    assert paired is not None and found[1].overlap is not None
    assert paired["sos"].n == 2 and paired["sos"].mean == pytest.approx((0.1 + 0.2) / 2)
    assert paired["sos"].only_second == ("i4",) and paired["sos"].only_first == ()
    assert found[1].overlap.only_first == ("i3",) and found[1].overlap.only_second == ("i4",)
    assert instance_order(["r1", "r2"], values) == ["i1", "i2", "i3", "i4"]
    assert [letter(k) for k in (0, 25, 26)] == ["A", "Z", "A2"]


def test_the_store_reads_finished_instances_and_one_instance_across_runs(tmp_path: Path) -> None:
    path = tmp_path / "bench.duckdb"
    run1, run2 = build_bench_db(path, n_instances=20, n_runs=2, seed=7)
    with open_store(path, read_only=True) as store:
        runs = {run.run_id: run for run in compared_runs(store)}
        assert runs[run1].n_done == 20 and runs[run2].n_done == 19
        assert runs[run2].status == "interrupted" and runs[run1].model_quant == "Q4_K_M"
        values = run_metric_values(store, [run1, run2])
        assert len(values[run1]) == 20 and len(values[run2]) == 19
        missing = next(iter(set(values[run1]) - set(values[run2])))
        sql = "SELECT count(value) FROM instance_metrics WHERE run_id = $r AND metric = 'sos'"
        defined = store.query(sql, {"r": run1})[1][0][0]
        assert sum(v.get("sos") is not None for v in values[run1].values()) == defined
        across = instance_across(store, [run1, run2], missing)
        assert [a.run_id for a in across.answers] == [run1, run2]
        assert across.answers[0].finished and not across.answers[1].finished
        assert across.answers[1].reasons == [] and across.text
        reasons_sql = (
            "SELECT count(*) FROM reasons WHERE run_id = $r AND instance_id = $i "
            "AND stage = 'justify'"
        )
        n_reasons = store.query(reasons_sql, {"r": run1, "i": missing})[1][0][0]
        assert len(across.answers[0].reasons) == n_reasons


def test_haf_report_compare_ci(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bench.duckdb"
    run1, run2 = build_bench_db(path, n_instances=20, n_runs=2, seed=7)
    argv = ["--db", str(path), "report", "--report", "compare-ci", "--format", "json"]
    assert main([*argv, "--run", run1, "--run", run2]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["metric"], r["run"]) for r in rows[:2]] == [("SoS", run1), ("SoS", run2)]
    with open_store(path, read_only=True) as store:
        values = run_metric_values(store, [run1, run2])
    sos = {run: {i: v.get("sos") for i, v in of.items()} for run, of in values.items()}
    expected = mean_interval(sos[run1])
    assert rows[0]["mean"] == pytest.approx(expected.mean) and rows[0]["n"] == expected.n
    assert rows[0]["CI low"] == pytest.approx(expected.low) and rows[0]["Δ vs first"] is None
    paired = paired_difference(sos[run1], sos[run2])
    assert rows[1]["Δ vs first"] == pytest.approx(paired.mean)
    assert rows[1]["n pairs"] == paired.n and rows[1]["Wilcoxon p"] == pytest.approx(paired.p_value)
    assert rows[1]["only first"] == len(paired.only_first) > 0
