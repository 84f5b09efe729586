"""``haf run``: start or resume a run, with rich progress bars and a clean Ctrl-C."""

from __future__ import annotations

import argparse
import signal
import threading
from collections.abc import Mapping
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from rich.console import Console

from haf_tui.cli.dataset_parser import add_column_options
from haf_tui.cli.plain_progress import HELP_NOTE as PLAIN_PROGRESS_NOTE
from haf_tui.cli.settings_options import add_setting_options, settings_from_args
from haf_tui.cli.writer_open import add_wait_option
from haf_tui.config import DecodingSettings, ModelSettings, RunConfig, SimilaritySettings
from haf_tui.defaults import (
    DEMO_MAX_NEW_TOKENS,
    DEMO_MAX_TEXTS,
    DEMO_SEED,
    DEMO_TEMPERATURE,
    DEMO_UNTIL_COMPLETE,
    EMBEDDED_MODEL_NAME,
)
from haf_tui.methods.registry import (
    SUITES,
    default_suites,
    methods,
    preferred_parallel,
    run_stages,
    stage_titles,
)
from haf_tui.pipeline.demo import DEMO_DECODING, demo_stop, refuse_other_models

if TYPE_CHECKING:
    from haf_tui.pipeline.runner import RunSummary
    from haf_tui.pipeline.runs import StartedRun
    from haf_tui.store import Store

# The pipeline (models, datasets, the store's writers) is imported when a run starts, not when
# the parser is built: ``haf --help`` stays light (issue 34 §8).


def add_run_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``run`` sub-command and its options (each with a one-line help and its default)."""
    run = commands.add_parser(
        "run",
        help="run (or resume) a HAF evaluation",
        epilog=PLAIN_PROGRESS_NOTE,
    )
    decoding, model = DecodingSettings(), ModelSettings()
    run.add_argument(
        "--demo",
        action="store_true",
        help=f"the embedded model ({EMBEDDED_MODEL_NAME}) on the demo's texts in order "
        f"until {DEMO_UNTIL_COMPLETE} went through every stage (at most {DEMO_MAX_TEXTS}), seed "
        f"{DEMO_SEED}, temperature {DEMO_TEMPERATURE:g} (greedy), at most "
        f"{DEMO_MAX_NEW_TOKENS} new tokens per answer (each unless given)",
    )
    run.add_argument("--resume", metavar="RUN_ID", help="continue a run where it stopped")
    add_wait_option(run)
    run.add_argument("--model", help=f"a GGUF file (default: the embedded {EMBEDDED_MODEL_NAME})")
    run.add_argument(
        "--chat-format", help="gemma, chatml or llama-3 (default: the GGUF's own template)"
    )
    run.add_argument(
        "--dataset",
        default="sample",
        help="sample (built-in), a stored dataset's name or id (haf datasets list), or a paper "
        "dataset's name (civil_comments, ...)",
    )
    run.add_argument(
        "--file",
        help="a dataset file (.csv .tsv .jsonl .json .parquet with a text column); with "
        "--dataset PAPER_NAME: that paper dataset's downloaded file",
    )
    add_column_options(run)
    run.add_argument("--limit", type=int, help="evaluate only the first N instances (default: all)")
    run.add_argument(
        "--until-complete",
        type=int,
        metavar="N",
        help="evaluate the instances in order until N went through every stage of the run "
        f"(at most --limit); the rest are left out ({DEMO_UNTIL_COMPLETE} of at most "
        f"{DEMO_MAX_TEXTS} with --demo)",
    )
    run.add_argument(
        "--suites",
        "--suite",
        default=",".join(default_suites()),
        help=f"comma-separated evaluation suites to run on every instance ({', '.join(SUITES)})",
    )
    add_setting_options(run)
    run.add_argument(
        "--temperature",
        type=float,
        help=f"sampling temperature, 0: greedy ({DEMO_TEMPERATURE:g} with --demo) "
        f"(default: {decoding.temperature:g})",
    )
    run.add_argument("--top-p", type=float, default=decoding.top_p, help="nucleus sampling mass")
    run.add_argument(
        "--top-k", type=int, default=decoding.top_k, help="sample from the k likeliest tokens"
    )
    run.add_argument(
        "--max-new-tokens",
        type=int,
        help=f"tokens per answer at most (default: {decoding.max_new_tokens}; "
        f"{DEMO_MAX_NEW_TOKENS} with --demo)",
    )
    run.add_argument(
        "--seed",
        type=int,
        help=f"run seed; each generation's seed derives from it (default: {decoding.seed}, the "
        f"paper's; {DEMO_SEED} with --demo)",
    )
    run.add_argument(
        "--top-logprobs",
        type=int,
        default=decoding.top_logprobs,
        help="alternatives stored per generated token",
    )
    run.add_argument("--n-ctx", type=int, help=f"context size in tokens (default: {model.n_ctx})")
    run.add_argument(
        "--n-gpu-layers",
        type=int,
        help="layers offloaded to the GPU; -1: all, 0: CPU (default: all when built with GPU)",
    )
    run.add_argument(
        "--threads",
        type=int,
        help="CPU threads for llama.cpp (default: the CPUs haf may run on, or fewer where "
        "that decodes faster)",
    )
    run.add_argument(
        "--parallel",
        type=int,
        help=f"sequences decoded together in one batch (default: {model.n_parallel}, or what "
        f"the run's suites all ask for{_parallel_wanted()}; 1: one at a time)",
    )
    run.add_argument(
        "--server",
        action="append",
        default=[],
        metavar="URL[#N]",
        help="generate on this OpenAI-compatible server (llama-server, vLLM, llama-cpp-python's "
        "server), N requests at once (default 4); repeat for several. --model is then the same "
        "GGUF, read here for its chat template and tokenizer only",
    )
    run.add_argument(
        "--servers-file",
        help="a file of servers, one URL[#N] per line (blank lines and # comments skipped)",
    )
    run.add_argument(
        "--extra-buffers",
        action="store_true",
        default=None,
        help="enable llama.cpp weight-repacking buffers (AMX; off: they crashed on AMX VMs)",
    )
    run.add_argument(
        "--similarity-model",
        default=SimilaritySettings().model,
        help="the similarity model g: a sentence-transformers name or path",
    )
    run.add_argument(
        "--similarity-kind",
        choices=["bi-encoder", "cross-encoder"],
        default="bi-encoder",
        help="how g compares two texts",
    )


def _parallel_wanted() -> str:
    """``: rationales 32`` — the suites that want more sequences at once than the default."""
    wanted = [f"{name} {m.n_parallel}" for name, m in methods().items() if m.n_parallel]
    return f": {', '.join(wanted)}" if wanted else ""


def refuse_before_opening(args: argparse.Namespace) -> None:
    """What ``haf run`` refuses from its options alone, before the database is opened (or
    created: ``--demo --model`` made an empty ``--db`` file): ``--demo`` with a model (the
    wizard's demo source refuses another model by the same rule)."""
    if args.demo:
        refuse_other_models(
            "--demo",
            [args.model] if args.model else [],
            "drop --model, or drop --demo (--dataset sample evaluates the built-in sample "
            "with your model)",
        )


def _config(args: argparse.Namespace) -> RunConfig:
    refuse_before_opening(args)
    demo = DEMO_DECODING if args.demo else {}
    given = {
        "max_new_tokens": args.max_new_tokens,
        "seed": args.seed,
        "temperature": args.temperature,
    }
    decoding = DecodingSettings(
        top_p=args.top_p,
        top_k=args.top_k,
        top_logprobs=args.top_logprobs,
        **(demo | {k: v for k, v in given.items() if v is not None}),
    )
    stop: Mapping[str, int | None] = {"limit": args.limit, "until_complete": args.until_complete}
    if args.demo:  # (the workbench's demo source takes the same rule)
        stop = demo_stop(args.limit, args.until_complete)
    model_fields = {
        "path": None if args.demo else args.model,
        "chat_format": args.chat_format,
        "n_ctx": args.n_ctx,
        "n_gpu_layers": args.n_gpu_layers,
        "n_threads": args.threads,
        "n_parallel": args.parallel,
        "extra_buffers": args.extra_buffers,
        "servers": server_specs(args) or None,
    }
    suites = tuple(s.strip() for s in args.suites.split(",") if s.strip())
    if args.parallel is None:  # (the methods' own, unless --parallel says)
        model_fields["n_parallel"] = preferred_parallel(suites)
    model = ModelSettings(**{k: v for k, v in model_fields.items() if v is not None})
    return RunConfig(
        model=model,
        decoding=decoding,
        similarity=SimilaritySettings(model=args.similarity_model, kind=args.similarity_kind),
        **stop,
        suites=suites,
        settings=settings_from_args(args, suites),
    )


def server_specs(args: argparse.Namespace) -> tuple[str, ...]:
    """``--server`` values, then ``--servers-file``'s lines (a one-line error when the file
    cannot be read)."""
    specs = list(args.server)
    if args.servers_file:
        try:
            lines = Path(args.servers_file).read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise ValueError(f"cannot read {args.servers_file}: {exc.strerror}") from exc
        specs += [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    return tuple(specs)


def _already_stopping(signum: int, frame: FrameType | None) -> None:
    """Ctrl-C while haf is already on its way out: nothing more to stop."""


class _CtrlC:
    """First Ctrl-C: stop after the generation in flight. Second: stop now."""

    def __init__(self, console: Console):
        self.event = threading.Event()
        self.console = console
        self._previous = signal.getsignal(signal.SIGINT)

    def __enter__(self) -> _CtrlC:
        signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        # once a stop was asked for, a second Ctrl-C after the run has already stopped must
        # not turn the orderly exit into a traceback: the CLI's main restores the handler
        signal.signal(signal.SIGINT, _already_stopping if self.event.is_set() else self._previous)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.event.is_set():
            raise KeyboardInterrupt
        self.event.set()
        self.console.print(
            "[yellow]stopping after the generations in flight (Ctrl-C again to stop now)[/]"
        )


def run_command(args: argparse.Namespace, store: Store, console: Console) -> int:
    """Start or resume a run (its models closed once it returns or raises); returns the exit
    status."""
    from haf_tui.cli.run_dataset import with_columns
    from haf_tui.pipeline.runs import (
        DEMO_CHOICE,
        RunRequest,
        choice_by_name,
        resolve_dataset,
        start_or_resume,
    )

    overrides = {
        "n_ctx": args.n_ctx,
        "n_gpu_layers": args.n_gpu_layers,
        "n_threads": args.threads,
        "n_parallel": args.parallel,
        "extra_buffers": args.extra_buffers,
        "servers": server_specs(args) or None,
    }
    if args.resume:
        request = RunRequest(resume_run_id=args.resume, overrides=overrides)
    else:
        demo_texts = args.demo and not args.file  # (the demo's own texts, not the sample)
        named = DEMO_CHOICE if demo_texts else choice_by_name(args.dataset, args.file, store)
        choice = with_columns(named, args)
        config = _config(args)
        chosen = resolve_dataset(choice, store, suites=config.suites)
        request = RunRequest(config=config, dataset=chosen)
    with console.status("loading the model and the similarity model ..."):
        started = start_or_resume(store, request)
    try:
        return _run_started(args, store, console, started)
    finally:  # (finished, failed or Ctrl-C: the GGUF freed now, not when the frames go)
        started.models.backend.close()


def _run_started(
    args: argparse.Namespace, store: Store, console: Console, started: StartedRun
) -> int:
    """Run what :func:`start_or_resume` started; returns the exit status."""
    from haf_tui.cli.read_commands import suggest_instance
    from haf_tui.cli.run_dataset import say_gold
    from haf_tui.store import StoreWriteError

    run_id, config, models = started.run_id, started.config, started.models
    args.run_id = run_id  # (what an interrupted `haf run` says to resume)
    dataset = started.dataset
    say_gold(dataset, console)
    if dataset is not None and dataset.skipped:
        console.print(
            f"[yellow]{len(dataset.skipped)} dataset rows skipped[/] "
            f"(first: row {dataset.skipped[0][0]}, {dataset.skipped[0][1]})"
        )
    backend = models.backend
    console.print(
        f"run [bold]{run_id}[/]: {backend.name} ({backend.info.architecture}, "
        f"{backend.info.quantization}), chat format {backend.chat_format}, GPU offload "
        f"{'on' if backend.offload_active else 'off'}; similarity "
        f"{models.similarity.name}"
    )
    try:
        summary = _run_with_progress(store, run_id, config, models, console)
    except KeyboardInterrupt:  # (before the runner began: it marks its own stops)
        if store.get_run(run_id).status == "created":
            store.update_run(run_id, status="interrupted")
        raise
    except StoreWriteError as exc:  # a full disk: what was committed stays, the run resumes
        raise StoreWriteError(f"{exc}; free space, then: haf run --resume {run_id}") from exc
    counts = ", ".join(f"{k} {v}" for k, v in summary.generations.items())
    console.print(
        f"run {run_id} {summary.status}: {summary.instances_done}/"
        f"{summary.instances_total} instances; generations: {counts}"
    )
    if summary.status != "finished":
        console.print(f"resume with: haf run --resume {run_id}")
        return 130
    console.print(f"see the metrics with: haf report --run {run_id}")
    suggest_instance(store, run_id, console)
    return 0


def _run_with_progress(
    store: Store, run_id: str, config: RunConfig, models: object, console: Console
) -> RunSummary:
    from rich.progress import Progress

    from haf_tui.cli.plain_progress import plain_lines
    from haf_tui.cli.progress_bars import ProgressBars, progress_columns
    from haf_tui.pipeline.runs import execute_run

    plain = plain_lines(console, stage_titles(), run_stages(config))  # (no terminal: lines)
    shown = Progress(*progress_columns(), console=console, transient=False, disable=bool(plain))
    with shown as progress, _CtrlC(console) as cc:
        return execute_run(
            store,
            run_id,
            config,
            models,  # type: ignore[arg-type]
            listener=plain or ProgressBars(progress, run_stages(config)).show,
            stop_event=cc.event,
        )
