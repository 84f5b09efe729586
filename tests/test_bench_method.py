"""The benchmark's method: interleaved arms, median ratios with their spread, the thread tuner
(pure logic, no timing: the figures below are given, not measured)."""

from __future__ import annotations

import pytest

from benchmarks.method import busy_neighbour, compare, interleave, ratio_summary, rotated_order
from haf_tui.inference.threads import ThreadTuner, thread_ladder


def test_rotated_order_turns_each_round() -> None:
    names = ["a", "b", "c"]
    assert [rotated_order(names, r) for r in range(4)] == [
        ["a", "b", "c"],
        ["b", "c", "a"],
        ["c", "a", "b"],
        ["a", "b", "c"],
    ]


def test_interleave_runs_every_arm_once_per_round_in_turn() -> None:
    calls: list[str] = []

    def arm(name: str, value: float) -> object:
        def run() -> float:
            calls.append(name)
            return value + len(calls)

        return run

    figures = interleave({"a": arm("a", 0), "b": arm("b", 100)}, 3)  # type: ignore[dict-item]
    assert calls == ["a", "b", "b", "a", "a", "b"]
    assert figures == {"a": [1, 4, 5], "b": [102, 103, 106]}
    with pytest.raises(ValueError):
        interleave({}, 0)


def test_ratio_summary_is_per_round_median_with_spread() -> None:
    summary = ratio_summary([2.0, 6.0, 3.0, 10.0], [1.0, 2.0, 1.0, 4.0])
    assert summary["ratios"] == [2.0, 3.0, 3.0, 2.5]
    assert summary["median"] == 2.75
    assert summary["spread"] == [2.0, 3.0]
    assert summary["iqr"] == [2.375, 3.0]
    one = ratio_summary([3.0], [2.0])
    assert (one["median"], one["spread"], one["iqr"]) == (1.5, [1.5, 1.5], [1.5, 1.5])
    assert ratio_summary([1.0], [0.0])["median"] is None
    with pytest.raises(ValueError):
        ratio_summary([1.0, 2.0], [1.0])


def test_compare_records_figures_ratios_and_load() -> None:
    values = iter([4.0, 2.0, 1.0, 6.0])  # round 1: a, b; round 2: b, a
    result = compare(
        {"a": lambda: next(values), "b": lambda: next(values)}, 2, {"a_over_b": ("a", "b")}
    )
    assert result["figures"] == {"a": [4.0, 6.0], "b": [2.0, 1.0]}
    assert result["a_over_b"]["ratios"] == [2.0, 6.0]
    assert result["condition"] == "idle"
    assert len(result["load_before"]) == 3 and len(result["load_after"]) == 3


def test_busy_neighbour_is_started_and_killed() -> None:
    with busy_neighbour() as process:
        assert process is not None and process.poll() is None
    assert process.returncode is not None
    with busy_neighbour(False) as none:
        assert none is None


def test_thread_ladder_halves_down_to_one() -> None:
    assert thread_ladder(2) == (2, 1)
    assert thread_ladder(16) == (16, 8, 4, 2, 1)
    assert thread_ladder(6) == (6, 3, 1)
    assert thread_ladder(1) == (1,)


def _feed(tuner: ThreadTuner, cost: dict[int, float], decodes: int) -> list[int]:
    chosen = []
    for _ in range(decodes):
        threads = tuner.choose(4)
        chosen.append(threads)
        tuner.record(threads, cost[threads] * 4, 4)
    return chosen


def test_tuner_moves_to_the_faster_count_and_probes_less_when_it_stays() -> None:
    tuner = ThreadTuner((2, 1), probe_every=2, longest_wait=16)
    chosen = _feed(tuner, {2: 0.010, 1: 0.002}, 6)  # contention: 1 thread is 5x faster
    assert chosen[:3] == [2, 2, 1] and tuner.current == 1 and tuner.switches == 1
    chosen = _feed(tuner, {2: 0.010, 1: 0.002}, 200)
    assert tuner.current == 1
    probes = chosen.count(2)
    assert 0 < probes <= 200 // 16 + 4  # waits double up to 16 decodes between probes
    _feed(tuner, {2: 0.001, 1: 0.002}, 40)  # idle again: back to 2 threads
    assert tuner.current == 2


def test_tuner_with_one_count_never_probes() -> None:
    tuner = ThreadTuner((3,))
    assert set(_feed(tuner, {3: 0.01}, 20)) == {3} and tuner.probes == 0
    with pytest.raises(ValueError):
        ThreadTuner(())


def test_tuner_probes_at_once_when_the_current_count_slows_down() -> None:
    tuner = ThreadTuner((2, 1), probe_every=2, longest_wait=64)
    _feed(tuner, {2: 0.001, 1: 0.002}, 300)  # idle: 2 threads win, probes far apart
    assert tuner.current == 2
    chosen = _feed(tuner, {2: 0.010, 1: 0.002}, 3)  # a neighbour takes a core
    assert chosen == [2, 1, 1] and tuner.current == 1


def test_tuner_compares_decodes_of_like_size_only() -> None:
    """Small decodes cost more per token than large ones at any thread count: a probe on a
    large decode is weighed against large decodes at the current count, never the small."""
    tuner = ThreadTuner((2, 1), probe_every=1, longest_wait=1)
    for _ in range(4):  # 3-token decodes: 6 ms a token at either count
        tuner.record(tuner.choose(3), 0.018, 3)
    assert tuner.current == 2
    assert tuner.choose(384) == 2  # nothing known at this size yet: no probe
    chosen = []
    for _ in range(6):  # large decodes: 2 threads 3.5 ms a token, 1 thread 4.8 ms
        threads = tuner.choose(384)
        chosen.append(threads)
        tuner.record(threads, 384 * (0.0035 if threads == 2 else 0.0048), 384)
    assert 1 in chosen  # probed...
    assert tuner.current == 2 and tuner.switches == 0  # ...and stayed, though 4.8 ms < 6 ms


def test_a_probe_at_a_size_the_current_count_has_no_cost_at_moves_nothing() -> None:
    tuner = ThreadTuner((2, 1), probe_every=1, longest_wait=1)
    tuner.record(2, 0.04, 4)  # the current count, at 4 tokens
    tuner.record(1, 0.04, 400)  # a probe at 400 tokens, far cheaper a token: no like-size cost
    assert tuner.current == 2 and tuner.switches == 0 and tuner.probes == 1
