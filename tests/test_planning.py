"""The run plan: generations per stage and a time range from a probe at the run's batch; the
monitor shows that estimate until the run's first instances give an ETA (no model needed)."""

from __future__ import annotations

import pytest

from haf_tui.config import DecodingSettings, RunConfig
from haf_tui.datasets import builtin_sample
from haf_tui.pipeline.events import ProgressEvent
from haf_tui.pipeline.planning import (
    ASSUMED_REASONS,
    FOLLOWUP_EXTRA_PROMPT_TOKENS,
    ProbeResult,
    plan_run,
)
from haf_tui.tui.live import LiveRun
from haf_tui.tui.screens.monitor import MonitorScreen


def test_plan_is_a_range_from_all_stopping_to_all_going_on() -> None:
    config = RunConfig(limit=4, decoding=DecodingSettings(max_new_tokens=50))
    probe = ProbeResult(prompt_tokens=100, prompt_tokens_per_second=400.0,
                        decode_tokens_per_second=100.0, batch=4)  # fmt: skip
    plan = plan_run(config, builtin_sample(), probe)
    assert plan.generations == {
        "justify": 4, "internal": 4, "external": 4, "individual": 4 * ASSUMED_REASONS
    }  # fmt: skip
    # JUSTIFY: 4 × (50 / 100 + 100 / 400) = 3 s; each follow-up adds 50/100 + 220/400 = 1.05 s
    follow = 50 / 100 + (100 + FOLLOWUP_EXTRA_PROMPT_TOKENS) / 400
    assert plan.least_seconds == pytest.approx(3.0)
    assert plan.estimated_seconds == pytest.approx(3.0 + (4 + 4 + 12) * follow)
    assert plan.time_range() == "3 s – 24 s"
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
    live.status = "running"
    text = MonitorScreen._stats(live).plain
    assert "measuring speed" in text and "estimated 30 s – 2 min 10 s" in text
    live.apply(ProgressEvent("instance", "r", instances_done=1, instances_total=8,
                             tokens_per_second=80.0, eta_seconds=70.0))  # fmt: skip
    text = MonitorScreen._stats(live).plain
    assert "80.0 tok/s" in text and "ETA 1 min 10 s" in text and "estimated" not in text
