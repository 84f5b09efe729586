"""The GPU check (issue 37 §3): one command, one table, within 10 minutes on a GPU machine
(NVIDIA H100 or H200, CUDA's compiler, CMake, Python 3.12 with torch, no internet).

1. llama-cpp-python's engine built with CUDA from the trimmed copy of the pinned sdist that
   travels with the command (``make gpu-source`` writes it; ``build_cuda.sh`` builds libllama
   and ggml for the machine's GPU, and the Python package is used from the same copy);
2. a random-weights GGUF with Llama-3.1-8B's shapes in Q4_K_M (:mod:`.random_model`): each
   tensor in the type, and of the blocks, that llama.cpp's own quantiser gave it in a narrow
   model of the same layer count (quantising 8 billion values would take minutes of the lease);
3. through haf's own batched engine, all layers offloaded: decode tokens/s at 1, 8 and 32
   sequences (a fixed token count: a random model has no end of text to reach), prompt
   tokens/s, memory;
4. CPU against GPU log-probabilities of a tiny random model (the largest difference);
5. the paper's 5 × 1,024 HAF grid projected from these rates and the tokens per instance of
   docs/measured.md ("Measured at scale").

``--cpu-dry-run``: the same steps on a tiny random model with the installed (CPU)
llama-cpp-python, no build (a test runs it), so the script is known to work before a GPU is
lent. Prints the table (Markdown) and writes it with the figures as JSON to ``--out``."""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SEQUENCES = (1, 8, 32)
DECODE_TOKENS = 64
DRY_DECODE_TOKENS = 16
PROMPT_WORDS = 400
GRID_INSTANCES = 5 * 1024
MEASURED_PER_INSTANCE = (145.3, 52.6)
"""Prompt and generated tokens per instance (docs/measured.md, "Measured at scale")."""
PAPER_LIKE_PER_INSTANCE = (6 * 250, 6 * 200)
"""Every instance going on, 3 reasons: 6 generations of ≈ 250 prompt, ≈ 200 generated tokens."""


STARTED = time.monotonic()


def progress(step: str) -> None:
    """One line on stderr as each step ends, with the seconds since the start: what a run cut
    off at its time limit still tells."""
    print(f"[{time.monotonic() - STARTED:6.1f} s] {step}", file=sys.stderr, flush=True)


def _messages(text: str) -> list[Any]:
    from haf_tui.messages import ChatMessage

    return [ChatMessage("user", text)]


def _stamper(times: list[float]) -> Any:
    def note(_: Any) -> None:
        times.append(time.perf_counter())

    return note


def decode_rate(backend: Any, sequences: int, tokens: int) -> float:
    """Generated tokens/s of ``sequences`` at once through haf's batched engine, after the
    last sequence's first token (the decode phase)."""
    from haf_tui.config import DecodingSettings
    from haf_tui.inference.base import GenerationRequest, ListSource

    stamps: dict[int, list[float]] = {n: [] for n in range(sequences)}
    requests = []
    for n in range(sequences):
        settings = DecodingSettings(temperature=1.0, seed=n, max_new_tokens=tokens, top_logprobs=5)
        requests.append(
            GenerationRequest(
                _messages(f"Say something about the number {n}."),
                settings,
                tag=n,
                on_token=_stamper(stamps[n]),
            )
        )
    engine = backend.concurrent(sequences)
    engine.serve(ListSource(requests))
    start = max(t[0] for t in stamps.values() if t)
    end = max(t[-1] for t in stamps.values() if t)
    after = sum(1 for t in stamps.values() for s in t if s > start)
    return after / (end - start) if end > start else 0.0


def prompt_rate(backend: Any, words: int) -> tuple[float, int]:
    """Prompt tokens/s of one long prompt, and its tokens."""
    from haf_tui.config import DecodingSettings

    text = " ".join(f"word{i % 97}" for i in range(words))
    settings = DecodingSettings(temperature=0.0, max_new_tokens=1, top_logprobs=1)
    backend.generate(_messages(text), settings)  # warm
    generation = backend.generate(_messages(text), settings)
    seconds = generation.prompt_seconds or generation.seconds
    return generation.prompt_token_count / seconds, generation.prompt_token_count


def agreement(model: Path, gpu_layers: int) -> tuple[float, int]:
    """The largest difference between the CPU's and ``gpu_layers``' log-probabilities of the
    tokens both greedy replies share, and how many."""
    from haf_tui.config import DecodingSettings
    from haf_tui.inference.llama import LlamaCppBackend

    settings = DecodingSettings(temperature=0.0, max_new_tokens=24, top_logprobs=5)
    replies = []
    for layers in (0, gpu_layers):
        backend = LlamaCppBackend(model, n_ctx=512, n_gpu_layers=layers)
        replies.append(backend.generate(_messages("Is this text toxic? you idiot"), settings))
        backend.close()
    cpu, gpu = replies
    shared = 0
    for a, b in zip(cpu.tokens, gpu.tokens, strict=False):
        if a.token_id != b.token_id:
            break
        shared += 1
    pairs = zip(cpu.tokens[:shared], gpu.tokens[:shared], strict=True)
    diff = max((abs(a.logprob - b.logprob) for a, b in pairs), default=0.0)
    return diff, shared


def _nvidia_smi(query: str) -> str | None:
    """One value of GPU 0 from ``nvidia-smi --query-gpu``, None without a GPU. Not torch: its
    own CUDA libraries loaded beside the CUDA build's in one process, the first run on the H200
    machine ended in a segmentation fault between making the model and loading it."""
    import shutil
    import subprocess

    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    command = [smi, f"--query-gpu={query}", "--format=csv,noheader,nounits", "-i", "0"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    value = done.stdout.strip()
    return value if done.returncode == 0 and value else None


def gpu_memory_mib() -> float | None:
    """GPU memory in use on GPU 0, None without a GPU."""
    value = _nvidia_smi("memory.used")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def projection(rates: dict[int, float], prompt_per_s: float) -> list[tuple[str, float]]:
    """Hours of model time for the grid at the measured rates (decode at the most sequences)."""
    decode = rates[max(rates)]
    hours = []
    for label, (prompt, generated) in (
        ("this project's grid's tokens per instance", MEASURED_PER_INSTANCE),
        ("paper-like (6 generations per instance)", PAPER_LIKE_PER_INSTANCE),
    ):
        seconds = GRID_INSTANCES * (prompt / prompt_per_s + generated / decode)
        hours.append((label, seconds / 3600))
    return hours


def run(dry: bool, work: Path) -> dict[str, Any]:
    """Every step; the figures."""
    from benchmarks.gpu.random_model import (
        LLAMA_31_8B,
        TINY,
        Shapes,
        narrow,
        quantize,
        write_random_gguf,
        write_tiled_gguf,
    )
    from haf_tui.inference.llama import LlamaCppBackend
    from haf_tui.inference.llama_load import gpu_offload_supported

    started = time.monotonic()
    shapes: Shapes = TINY if dry else LLAMA_31_8B
    layers = 0 if dry else -1
    if not dry and not gpu_offload_supported():
        raise SystemExit("error: this llama.cpp build cannot offload to a GPU (build_cuda.sh)")
    figures: dict[str, Any] = {"model": f"random {shapes.name}, Q4_K_M", "dry_run": dry}
    built = os.environ.get(BUILT)
    figures["build_s"] = f"{built} s" if built else "no build (the installed llama-cpp-python)"
    t = time.monotonic()
    template = write_random_gguf(work / "narrow-f16.gguf", narrow(shapes))
    template = quantize(template, work / "narrow-q4_k_m.gguf", "Q4_K_M")
    model = write_tiled_gguf(work / "random-q4_k_m.gguf", shapes, template)
    figures["make_model_s"] = round(time.monotonic() - t, 1)
    progress(f"model made: {model.stat().st_size / 2**20:.0f} MiB")
    figures["model_mib"] = round(model.stat().st_size / 2**20, 1)
    before = gpu_memory_mib()
    backend = LlamaCppBackend(model, n_ctx=8192 if not dry else 2048, n_gpu_layers=layers)
    tokens = DRY_DECODE_TOKENS if dry else DECODE_TOKENS
    progress("model loaded")
    rates = {}
    for n in SEQUENCES:
        rates[n] = decode_rate(backend, n, tokens)
        progress(f"decode at {n} sequence(s): {rates[n]:.1f} tokens/s")
    figures["decode_tok_s"] = {str(n): round(r, 1) for n, r in rates.items()}
    rate, count = prompt_rate(backend, PROMPT_WORDS if not dry else 60)
    figures["prompt_tok_s"], figures["prompt_tokens"] = round(rate, 1), count
    after = gpu_memory_mib()
    known = after is not None and before is not None
    figures["gpu_mib"] = round(after - before, 1) if known else None  # type: ignore[operator]
    figures["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    backend.close()
    tiny = quantize(write_random_gguf(work / "tiny-f16.gguf", TINY, seed=1), work / "tiny.gguf")
    progress("prompt measured")
    diff, shared = agreement(tiny, 0 if dry else -1)
    progress("agreement measured")
    between = "CPU and CPU (dry run)" if dry else "CPU and GPU"
    figures["agreement"] = {"max_abs_nats": round(diff, 6), "tokens": shared, "between": between}
    figures["grid_hours"] = {label: round(h, 2) for label, h in projection(rates, rate)}
    figures["seconds"] = round(time.monotonic() - started, 1)
    return figures


def table(figures: dict[str, Any], machine: str) -> str:
    """The one table the check prints."""
    decode = figures["decode_tok_s"]
    made = f"made in {figures['make_model_s']} s"
    a = figures["agreement"]
    agree = f"{a['between']}: at most {a['max_abs_nats']} nats apart over {a['tokens']} tokens"
    grid = [
        (f"5 × 1,024 HAF grid, {label}", f"≈ {hours} h of model time")
        for label, hours in figures["grid_hours"].items()
    ]
    rows = [
        ("machine", machine),
        ("model", f"{figures['model']} ({figures['model_mib']} MiB, {made})"),
        *((f"decode, {n} sequence(s)", f"{decode[str(n)]} tokens/s") for n in SEQUENCES),
        ("prompt", f"{figures['prompt_tok_s']} tokens/s ({figures['prompt_tokens']} tokens)"),
        ("memory", f"GPU {figures['gpu_mib']} MiB; peak RSS {figures['peak_rss_mib']} MiB"),
        ("log-probabilities", agree),
        *grid,
        ("CUDA build took", figures["build_s"]),
        ("check took", f"{figures['seconds']} s (after the build)"),
    ]
    lines = ["| gpu-check | |", "|---|---|", *(f"| {a} | {b} |" for a, b in rows)]
    return "\n".join(lines)


def machine_name() -> str:
    return _nvidia_smi("name") or f"CPU ({os.cpu_count()} cores)"


SOURCE = Path(".gpu/llama-src.tar.gz")
"""The trimmed source ``make gpu-source`` writes (sent along with the command)."""
BUILT = "HAF_GPU_CHECK_BUILT"


def build_and_reexec(argv: list[str]) -> None:
    """Build the CUDA engine (``build_cuda.sh``) and run this check again on it: libllama
    from the build (``LLAMA_CPP_LIB_PATH``), the llama_cpp package and gguf-py from the same
    trimmed source."""
    import subprocess

    if not SOURCE.is_file():
        raise SystemExit(f"error: {SOURCE} is missing: run make gpu-source first, send it along")
    work = Path(tempfile.mkdtemp(prefix="haf-gpu-build-"))
    t = time.monotonic()
    script = Path(__file__).with_name("build_cuda.sh")
    progress("building libllama with CUDA")
    done = subprocess.run([str(script), str(SOURCE), str(work)], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"error: the CUDA build failed: {done.stderr.strip()[-400:]}")
    progress("built")
    libraries, root = done.stdout.split()[-2:]
    path = [root, str(Path(root) / "vendor/llama.cpp/gguf-py"), os.getcwd()]
    env = {**os.environ, BUILT: f"{time.monotonic() - t:.0f}", "LLAMA_CPP_LIB_PATH": libraries,
           "PYTHONPATH": os.pathsep.join([*path, os.environ.get("PYTHONPATH", "")])}  # fmt: skip
    # (-X faulthandler: a crash inside llama.cpp still names the Python line it was called from)
    command = [sys.executable, "-X", "faulthandler", "-m", "benchmarks.gpu", *argv]
    os.execve(sys.executable, command, env)


def load_llama_library_first() -> None:
    """llama.cpp's library loaded before numpy is imported (nothing here imports numpy at
    module level). On the H200 machine's image, the CUDA build's first model load crashed (a
    segmentation fault in the tokenizer's std::regex, ``llama_vocab::load``) whenever numpy
    had been imported before the library was loaded, and never when the library came first:
    haf's backend, imported first, brings numpy (docs/servers.md, "The first GPU machine")."""
    import contextlib

    # (before the build on the GPU machine: none yet; a broken one: the check says so later)
    with contextlib.suppress(ImportError, OSError, RuntimeError):
        import llama_cpp  # noqa: F401


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.gpu", description=__doc__)
    parser.add_argument("--cpu-dry-run", action="store_true", help="tiny model, CPU build")
    parser.add_argument("--out", type=Path, default=Path("bench-results/gpu-check.json"))
    args = parser.parse_args(argv)
    load_llama_library_first()
    if not args.cpu_dry_run and BUILT not in os.environ:
        build_and_reexec(sys.argv[1:] if argv is None else argv)
    with tempfile.TemporaryDirectory(prefix="haf-gpu-check-") as work:
        figures = run(args.cpu_dry_run, Path(work))
    shown = table(figures, machine_name() + (" — dry run" if args.cpu_dry_run else ""))
    print(shown, flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    partial = args.out.with_suffix(".tmp")
    partial.write_text(json.dumps({**figures, "table": shown}, indent=2) + "\n")
    partial.replace(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
