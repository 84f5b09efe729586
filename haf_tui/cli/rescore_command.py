"""``haf rescore``: a finished run re-scored with another similarity model g (a derived run,
:mod:`haf_tui.pipeline.rescore`), with a progress bar; Ctrl-C keeps what is done."""

from __future__ import annotations

import argparse
import contextlib
from typing import cast

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from haf_tui.cli.plain_progress import PlainProgress
from haf_tui.pipeline.rescore import load_rescore_similarity, rescore_run
from haf_tui.similarity import SimilarityKind
from haf_tui.store import Store


def rescore_command(args: argparse.Namespace, store: Store, console: Console) -> int:
    """Re-score ``args.run`` with ``args.similarity``; prints the derived run and its time."""
    kind = cast(SimilarityKind, args.similarity_kind)
    run_id = store.get_run(args.run).run_id  # (an unknown run: one line, before g loads)
    similarity = load_rescore_similarity(args.similarity, kind, device=args.similarity_device)
    progress = Progress(
        TextColumn("re-scoring"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )
    task = progress.add_task("instances", total=None)
    plain = (
        None
        if console.is_terminal
        else PlainProgress(
            lambda line: console.print(line, highlight=False, markup=False, soft_wrap=True),
            what="instances re-scored",
        )
    )  # (a log file: rich's bar would show nothing; plain lines instead)

    def advance(done: int, total: int) -> None:
        if plain is not None:
            plain.note(done, total)
        else:
            progress.update(task, completed=done, total=total)

    try:
        with progress if plain is None else contextlib.nullcontext():
            summary = rescore_run(
                store,
                run_id,
                similarity,
                kind,
                device=args.similarity_device,
                on_progress=advance,
            )
    except KeyboardInterrupt:
        if plain is not None:
            plain.close()
        console.print(
            f"interrupted: the instances re-scored are kept; run the same command to go on "
            f"(haf rescore {run_id} --similarity {escape(args.similarity)})"
        )
        return 130
    if plain is not None:
        plain.close()
    if summary.resumed and summary.seconds == 0.0:
        console.print(
            f"run {summary.parent_run_id} was re-scored with {escape(similarity.name)} "
            f"({kind}) before: run {summary.run_id}",
            highlight=False,
            soft_wrap=True,
        )
        return 0
    verb = "went on with" if summary.resumed else "made"
    console.print(
        f"{verb} run {summary.run_id}: run {summary.parent_run_id} re-scored with "
        f"{escape(similarity.name)} ({kind}), {summary.instances_done}/"
        f"{summary.instances_total} instances, {summary.status} in {summary.seconds:.1f} s",
        highlight=False,
        soft_wrap=True,
    )
    return 0
