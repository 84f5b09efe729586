"""``haf rescore``'s parser, apart from what it does (:mod:`haf_tui.cli.rescore_command`):
building it imports no pipeline, store or model library, so ``haf --help`` stays light."""

from __future__ import annotations

import argparse

from haf_tui.cli.plain_progress import HELP_NOTE as PLAIN_PROGRESS_NOTE
from haf_tui.cli.writer_open import add_wait_option

SIMILARITY_KINDS = ("bi-encoder", "cross-encoder")


def add_rescore_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``haf rescore RUN --similarity NAME_OR_PATH [--similarity-kind KIND]``."""
    rescore = commands.add_parser(
        "rescore",
        help="re-score a finished run's HAF values with another similarity model g: a derived "
        "run, nothing generated again (resumes an unfinished one with the same g)",
        epilog=PLAIN_PROGRESS_NOTE,
    )
    rescore.add_argument("run", metavar="RUN", help="the run (an id or a unique prefix)")
    rescore.add_argument(
        "--similarity",
        required=True,
        metavar="NAME_OR_PATH",
        help="the similarity model: a Hugging Face id in the local cache, or a local folder",
    )
    rescore.add_argument(
        "--similarity-kind",
        choices=SIMILARITY_KINDS,
        default="bi-encoder",
        help="how it scores a pair: embeddings' cosine, or a cross-encoder's score",
    )
    rescore.add_argument(
        "--similarity-device", default="cpu", metavar="DEVICE", help="where g runs (cpu, cuda)"
    )
    add_wait_option(rescore)
