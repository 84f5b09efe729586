"""``haf campaign``'s parser, apart from what the commands do (:mod:`haf_tui.cli.campaign_command`):
building it imports no campaign, pipeline or store module, so ``haf --help`` stays light."""

from __future__ import annotations

import argparse

from haf_tui.cli.writer_open import add_wait_option

REPORT_FORMATS = ("markdown", "latex", "csv", "html")


def _at_least_one(text: str) -> int:
    """A whole number of at least 1 (argparse's one-line error otherwise)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a whole number, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"at least 1, not {value}")
    return value


def add_campaign_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``haf campaign`` and its sub-commands."""
    campaign = commands.add_parser(
        "campaign", help="a grid of models × datasets × suites, run as one resumable whole"
    )
    steps = campaign.add_subparsers(dest="campaign_command", required=True)
    run = steps.add_parser(
        "run", help="run every cell of the grid (finished cells skipped, interrupted resumed)"
    )
    run.add_argument("grid", help="the grid file (grid.toml)")
    run.add_argument(
        "--server",
        action="append",
        default=[],
        metavar="URL[#N]",
        help="also generate on this OpenAI-compatible server, for every model (repeatable): "
        "every model then shares it, so their cells run one after another, each cell's "
        "requests spread over the servers",
    )
    run.add_argument(
        "--cells-at-once",
        type=_at_least_one,
        metavar="N",
        help="run up to N cells side by side, each of another model with servers of its own "
        "(models in this process: one at a time); default: the grid's cells_at_once, else one "
        "per model with servers plus one for the models in this process",
    )
    add_wait_option(run)
    status = steps.add_parser("status", help="each cell's status, instances done, ETA")
    status.add_argument("grid", help="the grid file (grid.toml)")
    report = steps.add_parser("report", help="the campaign's tables and figures into a folder")
    report.add_argument("grid", help="the grid file (grid.toml)")
    report.add_argument(
        "--format",
        action="append",
        choices=REPORT_FORMATS,
        metavar="FORMAT",
        help=f"repeatable: {', '.join(REPORT_FORMATS)} (default: markdown)",
    )
    report.add_argument("--out", required=True, help="the folder to write into")
    report.add_argument("--force", action="store_true", help="write over files already there")
