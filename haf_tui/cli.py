"""The ``haf`` command line.

- ``haf demo``: JUSTIFY on the built-in sample with the embedded model (or ``--model``),
  parsed and scored: stance, decision confidence, reasons with confidence, SoS, DiS.
- ``haf models``: GGUF files found in the model folders, read from metadata only.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.table import Table

from haf_tui import __version__
from haf_tui.config import DecodingSettings, ModelSettings, SimilaritySettings
from haf_tui.defaults import embedded_model_path, model_search_dirs
from haf_tui.demo import JustifyResult, run_justify_demo
from haf_tui.inference.base import InferenceError
from haf_tui.inference.gguf import read_gguf_info
from haf_tui.similarity import SimilarityError, load_similarity


def _fmt(value: float) -> str:
    return "—" if math.isnan(value) else f"{value:.3f}"


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="haf", description="Human-Aligned Faithfulness workbench")
    parser.add_argument("--version", action="version", version=f"haf-tui {__version__}")
    commands = parser.add_subparsers(dest="command")

    demo = commands.add_parser("demo", help="JUSTIFY on the built-in sample, parsed and scored")
    demo.add_argument("--model", help="a GGUF file (default: the embedded Gemma 3 270M)")
    demo.add_argument("--chat-format", help="gemma, chatml or llama-3 (default: the GGUF's own)")
    demo.add_argument("--limit", type=int, default=4, help="how many sample texts (default 4)")
    demo.add_argument("--max-new-tokens", type=int, default=160)
    demo.add_argument("--temperature", type=float, default=0.6)
    demo.add_argument("--top-p", type=float, default=0.8)
    demo.add_argument("--seed", type=int, default=17)
    demo.add_argument("--n-ctx", type=int, default=4096)
    demo.add_argument("--n-gpu-layers", type=int, default=-1)
    demo.add_argument("--similarity-model", default=SimilaritySettings().model)
    demo.add_argument(
        "--similarity-kind", choices=["bi-encoder", "cross-encoder"], default="bi-encoder"
    )

    commands.add_parser("models", help="list GGUF files in the model folders")
    return parser


def _print_result(console: Console, result: JustifyResult) -> None:
    parse, generation = result.parse, result.generation
    console.rule(f"[bold]{result.sample.sample_id}[/] ({result.sample.label})")
    console.print(f"[dim]TEXT:[/] {result.sample.text}")
    console.print(
        f"[bold]stance[/] {parse.stance}  ·  decision confidence "
        f"{_fmt(result.decision.confidence)}  ·  {len(generation.tokens)} tokens, "
        f"{generation.tokens_per_second:.1f} tok/s"
    )
    if parse.decision_sentence:
        console.print(f"[dim]decision:[/] {parse.decision_sentence}")
    table = Table("#", "reason", "tokens", "confidence", show_lines=False, expand=True)
    for number, (reason, score) in enumerate(zip(parse.reasons, result.reasons, strict=True), 1):
        table.add_row(
            str(number), reason.text, str(len(score.token_indices)), _fmt(score.confidence)
        )
    if parse.reasons:
        console.print(table)
        console.print(f"SoS {_fmt(result.sos)}  ·  DiS {_fmt(result.dis)}")
    else:
        console.print("[yellow]no reasons parsed: this instance would stop after JUSTIFY[/]")


def _demo(args: argparse.Namespace, console: Console) -> int:
    from haf_tui.inference.llama import LlamaCppBackend

    model = ModelSettings(
        path=args.model,
        chat_format=args.chat_format,
        n_ctx=args.n_ctx,
        n_gpu_layers=args.n_gpu_layers,
    )
    decoding = DecodingSettings(
        temperature=args.temperature,
        top_p=args.top_p,
        seed=args.seed,
        max_new_tokens=args.max_new_tokens,
    )
    sim = SimilaritySettings(model=args.similarity_model, kind=args.similarity_kind)
    path = Path(model.path) if model.path else embedded_model_path()
    with console.status(f"loading {path.name} and {sim.model} ..."):
        backend = LlamaCppBackend(
            path, chat_format=model.chat_format, n_ctx=model.n_ctx, n_gpu_layers=model.n_gpu_layers
        )
        similarity = load_similarity(sim.model, sim.kind, device=sim.device)
    console.print(
        f"model [bold]{backend.name}[/] ({backend.info.architecture}, "
        f"{backend.info.quantization}), chat format [bold]{backend.chat_format}[/], "
        f"GPU offload {'on' if backend.offload_active else 'off'}; similarity "
        f"[bold]{similarity.name}[/]"
    )
    for result in run_justify_demo(backend, similarity, decoding, limit=args.limit):
        _print_result(console, result)
    return 0


def _models(console: Console) -> int:
    table = Table("file", "size", "architecture", "quantization", "context", "chat template")
    for folder in model_search_dirs():
        for path in sorted(folder.glob("*.gguf")) if folder.is_dir() else []:
            try:
                info = read_gguf_info(path, check_tensors=False)
            except InferenceError as exc:
                table.add_row(str(path), "", f"[red]{exc}[/]", "", "", "")
                continue
            table.add_row(
                str(path),
                f"{info.size_bytes / 2**20:.0f} MiB",
                info.architecture,
                info.quantization,
                str(info.context_length or "?"),
                "yes" if info.has_chat_template else "no",
            )
    console.print(table)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``haf``; errors are one line on stderr and exit status 2."""
    args = _build_parser().parse_args(argv)
    console = Console()
    try:
        if args.command == "demo":
            return _demo(args, console)
        if args.command == "models":
            return _models(console)
        _build_parser().print_help()
        return 0
    except (InferenceError, SimilarityError, ValueError) as exc:
        Console(stderr=True, soft_wrap=True).print(f"[red]error:[/] {exc}", highlight=False)
        return 2
    except KeyboardInterrupt:
        Console(stderr=True).print("interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())
