"""The rationale_gradient stage's cost (``make bench``, ``--only rationales``): how long the
embedded GGUF takes to open in torch (dequantised by transformers' GGUF loader) with the warm-up
pass it makes at its load, and one post's Attention, Saliency and Input×Gradient (one forward
and one backward pass), wall and CPU seconds: the first post apart from the median post, and
the same for a model opened without the warm-up (what a run paid before issue 44); with the
rest of the rationales suite's seconds per post, the stage's share of a post."""

from __future__ import annotations

import statistics
import time
from typing import Any

from haf_tui.defaults import embedded_model_path
from haf_tui.methods.rationales.core.attribution import GRADIENT_METHODS
from haf_tui.methods.rationales.suite.attribution_model import GgufAttributor, prompt_tokens
from haf_tui.store.records import InstanceRecord

SHARE_GOAL = 0.10
"""The stage's share of a rationales post, at most (issue 44)."""


def _timed(call: Any) -> tuple[Any, float, float]:
    """``call()``'s result, wall and CPU seconds."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = call()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def _first_post(post: InstanceRecord, warm_up: bool) -> dict[str, Any]:
    """A model opened (with or without the warm-up) and its first post: seconds of each."""
    attributor, load_wall, load_cpu = _timed(
        lambda: GgufAttributor(embedded_model_path(), warm_up=warm_up)
    )
    _, first_wall, first_cpu = _timed(
        lambda: attributor.attribute(post.text, post.text.split(), "toxic", GRADIENT_METHODS)
    )
    return {
        "attributor": attributor,
        "load_seconds": round(load_wall, 2),
        "load_cpu_seconds": round(load_cpu, 2),
        "first_post_seconds": round(first_wall, 3),
        "first_post_cpu_seconds": round(first_cpu, 3),
    }


def bench_attribution(
    posts: list[InstanceRecord],
    rounds: int = 3,
    rest_seconds_per_post: float | None = None,
    *,
    cold: bool = True,
) -> dict[str, Any]:
    """The model's load (with its warm-up) and first post, then the stage's median seconds
    per post over ``rounds`` passes of each post; ``cold``: also a model opened without the
    warm-up and its first post; ``rest_seconds_per_post`` (the rest of the suite's): the
    stage's share of a rationales post."""
    if not posts:
        return {"posts": 0}
    without = _first_post(posts[0], warm_up=False) if cold else None
    if without is not None:
        del without["attributor"]  # (its memory back before the next one loads)
    warmed = _first_post(posts[0], warm_up=True)
    attributor: GgufAttributor = warmed.pop("attributor")
    walls: list[float] = []
    cpus: list[float] = []
    prompt_lengths = []
    for post in posts:
        words = post.text.split()
        prompt_lengths.append(len(prompt_tokens(attributor.vocab, post.text).ids))
        for _ in range(max(rounds, 1)):
            _, wall, cpu = _timed(
                lambda: attributor.attribute(post.text, words, "toxic", GRADIENT_METHODS)  # noqa: B023
            )
            walls.append(wall)
            cpus.append(cpu)
    median = statistics.median(walls)
    result: dict[str, Any] = {
        "device": attributor.device,
        **warmed,
        "warm_up_seconds": round(attributor.warm_up_seconds or 0.0, 2),
        "posts": len(posts),
        "prompt_tokens": round(statistics.mean(prompt_lengths), 1),
        "seconds_per_post": round(median, 3),
        "cpu_seconds_per_post": round(statistics.median(cpus), 3),
        "seconds_per_post_spread": [round(min(walls), 3), round(max(walls), 3)],
    }
    if without is not None:
        result["without_warm_up"] = without
    if rest_seconds_per_post is not None:
        result["rest_of_post_seconds"] = round(rest_seconds_per_post, 3)
        result["share_of_post"] = round(median / (median + rest_seconds_per_post), 3)
        result["share_goal"] = SHARE_GOAL
    return result
