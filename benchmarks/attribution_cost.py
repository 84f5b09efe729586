"""The rationale_gradient stage's cost (``make bench``, ``--only rationales``): how long the
embedded GGUF takes to open in torch (dequantised by transformers' GGUF loader), and one
post's Attention, Saliency and Input×Gradient (one forward and one backward pass), wall and
CPU seconds, beside the rest of the rationales suite's per-post time in the same report."""

from __future__ import annotations

import statistics
import time
from typing import Any

from haf_tui.defaults import embedded_model_path
from haf_tui.methods.rationales.core.attribution import GRADIENT_METHODS
from haf_tui.methods.rationales.suite.attribution_model import GgufAttributor, prompt_tokens
from haf_tui.store.records import InstanceRecord


def bench_attribution(posts: list[InstanceRecord], rounds: int = 3) -> dict[str, Any]:
    """The model's load time and the stage's median seconds per post over ``rounds``."""
    wall, cpu = time.perf_counter(), time.process_time()
    attributor = GgufAttributor(embedded_model_path())
    load_wall, load_cpu = time.perf_counter() - wall, time.process_time() - cpu
    walls: list[float] = []
    cpus: list[float] = []
    prompt_lengths = []
    for post in posts:
        words = post.text.split()
        prompt_lengths.append(len(prompt_tokens(attributor.vocab, post.text).ids))
        for _ in range(max(rounds, 1)):
            wall, cpu = time.perf_counter(), time.process_time()
            attributor.attribute(post.text, words, "toxic", GRADIENT_METHODS)
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
    return {
        "device": attributor.device,
        "load_seconds": round(load_wall, 2),
        "load_cpu_seconds": round(load_cpu, 2),
        "posts": len(posts),
        "prompt_tokens": round(statistics.mean(prompt_lengths), 1) if prompt_lengths else None,
        "seconds_per_post": round(statistics.median(walls), 3) if walls else None,
        "cpu_seconds_per_post": round(statistics.median(cpus), 3) if cpus else None,
    }
