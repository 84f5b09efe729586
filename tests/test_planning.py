"""The run plan: generations per stage and a time range from a probe at the run's batch; the
monitor shows that estimate until the run's first instances give an ETA (no model needed)."""

from __future__ import annotations

import time

import pytest

from haf_tui.config import DecodingSettings, RunConfig
from haf_tui.datasets import builtin_sample
from haf_tui.methods.haf.suite.forecast import ASSUMED_REASONS
from haf_tui.pipeline.events import ProgressEvent
from haf_tui.pipeline.planning import (
    FOLLOWUP_EXTRA_PROMPT_TOKENS,
    ProbeResult,
    plan_run,
)
from haf_tui.tui.live import LiveRun
from haf_tui.tui.screens.monitor import MonitorScreen


def test_plan_is_a_range_from_all_stopping_to_all_going_on() -> None:
    config = RunConfig(limit=4, decoding=DecodingSettings(max_new_tokens=300))
    probe = ProbeResult(prompt_tokens=100, prompt_tokens_per_second=400.0,
                        decode_tokens_per_second=100.0, batch=4)  # fmt: skip
    plan = plan_run(config, builtin_sample(), probe)
    assert plan.generations == {
        "justify": 4, "internal": 4, "external": 4, "individual": 4 * ASSUMED_REASONS
    }  # fmt: skip
    # least: 4 JUSTIFY answers of 200 tokens: 4 × (200 / 100 + 100 / 400) = 9 s
    assert plan.least_seconds == pytest.approx(9.0)
    # most: every answer runs to the limit of 300 tokens: JUSTIFY 4 × (3 + 0.25) = 13 s; each
    # follow-up 3 + 220 / 400 = 3.55 s, 20 of them; the last answer alone at 100 / 4 tok/s: 12 s
    follow = 300 / 100 + (100 + FOLLOWUP_EXTRA_PROMPT_TOKENS) / 400
    assert plan.estimated_seconds == pytest.approx(13.0 + 20 * follow + 12.0)
    assert plan.time_range() == "9 s – 1 min 36 s"
    assert plan_run(config, builtin_sample(), None).time_range() == "?"


def test_a_faster_batch_gives_a_shorter_estimate() -> None:
    config = RunConfig(limit=8)
    single = ProbeResult(200, 300.0, 30.0, batch=1)
    batched = ProbeResult(200, 300.0, 90.0, batch=8)
    slow, fast = (
        plan_run(config, builtin_sample(), single),
        plan_run(config, builtin_sample(), batched),
    )
    assert fast.estimated_seconds is not None and slow.estimated_seconds is not None
    assert fast.estimated_seconds < slow.estimated_seconds


def test_the_monitor_shows_the_estimate_until_instances_finish() -> None:
    live = LiveRun("embedded", estimate="30 s – 2 min 10 s")
    live.apply(ProgressEvent("run-started", "r", instances_done=0, instances_total=8))
    text = MonitorScreen._stats(live).plain
    assert "measuring…" in text and "estimated 30 s – 2 min 10 s" in text
    live.apply(ProgressEvent("instance", "r", instances_done=1, instances_total=8,
                             tokens_per_second=80.0))  # fmt: skip
    live.started = time.monotonic() - 10.0  # one of 8 done in 10 s: 70 s left
    text = MonitorScreen._stats(live).plain
    assert "80.0 tok/s" in text and "ETA about 70 s" in text and "estimated" not in text
    live.started = time.monotonic() - 20.0  # and later, at that pace: 140 s
    assert "ETA about 2 min" in MonitorScreen._stats(live).plain


def test_a_resumed_run_counts_only_what_it_finished() -> None:
    live = LiveRun("embedded")
    live.apply(ProgressEvent("run-started", "r", instances_done=6, instances_total=8))
    live.started = time.monotonic() - 30.0
    assert live.eta() is None  # nothing finished here yet
    live.apply(ProgressEvent("instance", "r", instances_done=7, instances_total=8))
    live.started = time.monotonic() - 30.0
    assert live.eta() == pytest.approx(30.0, abs=0.5)


def test_the_classify_suite_adds_one_prompt_evaluation_per_instance() -> None:
    config = RunConfig(
        limit=4, decoding=DecodingSettings(max_new_tokens=300), suites=("haf", "classify")
    )
    probe = ProbeResult(prompt_tokens=100, prompt_tokens_per_second=400.0,
                        decode_tokens_per_second=100.0, batch=4)  # fmt: skip
    plan = plan_run(config, builtin_sample(), probe)
    haf_only = plan_run(config.model_copy(update={"suites": ("haf",)}), builtin_sample(), probe)
    assert plan.generations == haf_only.generations | {"classify": 4 * 4}  # four spellings
    # the four spellings share one prompt: 4 instances × 100 prompt tokens / 400 tok/s = 1 s
    assert plan.least_seconds == pytest.approx(haf_only.least_seconds + 1.0)  # type: ignore[operator]
    assert plan.estimated_seconds == pytest.approx(haf_only.estimated_seconds + 1.0)  # type: ignore[operator]
    alone = plan_run(config.model_copy(update={"suites": ("classify",)}), builtin_sample(), probe)
    assert alone.generations == {"classify": 16}
    assert (alone.least_seconds, alone.estimated_seconds) == pytest.approx((1.0, 1.0))
