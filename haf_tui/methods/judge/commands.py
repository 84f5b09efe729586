"""``haf judge``, the judge method's own command (declared in its ``Method.commands``): how far
to trust a judge run (``docs/methods/judge.md#5-meta-evaluation``).

- ``meta``: its labels on human-rated explanations (an ACORN import) against the raters:
  Krippendorff's α with the LLM replacing a rater (Table 4.1), Spearman ρ with the majority
  vote (Table 4.2), the LLM as an additional rater (Fig. 4.3), bias (Table 4.5) and, given
  runs of the same items under other prompt wordings, change rates (Table 4.4);
- ``sensitivity``: a judge run over edited explanations (``--dataset edits:RUN_ID``): per edit
  and criterion the % of pairs whose label changed (§5.6, Fig. 4.4).

The tables come from :mod:`haf_tui.methods.judge.reports.meta` and
:mod:`haf_tui.methods.judge.reports.tables`, which the metrics screen shows too.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from rich.console import Console

from haf_tui.methods.declare import MethodCommand
from haf_tui.methods.judge.reports.meta import change_result, meta_items, meta_tables
from haf_tui.methods.judge.reports.tables import TARGET_MARK, mass_warning, sensitivity_table
from haf_tui.methods.judge.settings import JudgeSettings
from haf_tui.methods.options import field_options
from haf_tui.reports.formats import table_width, to_rich_table, to_rich_table_transposed

if TYPE_CHECKING:
    from haf_tui.store.db import Store


def add_judge_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``haf judge meta --run RUN_ID [--variant-run RUN_ID ...]`` and ``haf judge sensitivity
    --run RUN_ID``."""
    judge = commands.add_parser(
        "judge", help="the judge suite's meta-evaluation and sensitivity to edits"
    )
    actions = judge.add_subparsers(dest="judge_command", required=True)
    meta = actions.add_parser(
        "meta",
        help="a judge run on human-rated explanations (haf datasets import acorn --file "
        "ACORN.jsonl) against the raters: alpha, rho, extra rater, bias, change rates",
    )
    source = meta.add_mutually_exclusive_group(required=True)
    source.add_argument("--run", help="the judge run (its dataset: an ACORN import)")
    source.add_argument(
        "--file",
        help="ACORN.jsonl: import it, judge it (a new run, through haf run), then report",
    )
    judging = meta.add_argument_group("judging with --file (as haf run)")
    judging.add_argument("--model", help="the judge's GGUF (default: the embedded model)")
    judging.add_argument("--limit", type=int, help="judge only the first N explanations")
    judging.add_argument("--parallel", type=int, help="sequences decoded together")
    for option in field_options("judge", "judge", JudgeSettings):
        if option.field in ("prompt", "mode"):
            judging.add_argument(
                option.flag,
                dest=option.field,
                choices=option.choices,
                default=option.default,
                metavar=option.metavar,
                help=option.help,
            )
    meta.add_argument(
        "--variant-run",
        action="append",
        default=[],
        help="a judge run of the same items under another prompt (--judge-prompt shuffled, ...): "
        "change rates against --run (repeatable)",
    )
    meta.add_argument("--seed", type=int, default=0, help="seed of the random rater choices")
    sensitivity = actions.add_parser(
        "sensitivity",
        help="a judge run over edited explanations (haf run --suites judge --dataset "
        "edits:RUN_ID): % of labels changed per edit and criterion "
        "(docs/methods/judge.md#56-sensitivity-to-edits)",
    )
    sensitivity.add_argument(
        "--run", required=True, help="the judge run (its dataset: edits:RUN_ID)"
    )


def judge_run_argv(args: argparse.Namespace) -> list[str]:
    """The ``haf run`` arguments that judge ``haf judge meta --file``'s explanations."""
    argv = ["--db", str(args.db), "run", "--suites", "judge", "--dataset", "acorn"]
    argv += ["--file", args.file, "--judge-prompt", args.prompt]
    argv += ["--judge-mode", args.mode]
    for flag, value in (("--model", args.model), ("--limit", args.limit),
                        ("--parallel", args.parallel)):  # fmt: skip
        if value is not None:
            argv += [flag, str(value)]
    return argv


def judge_command(args: argparse.Namespace, store: Store, console: Console) -> int:
    """Run ``haf judge meta`` or ``haf judge sensitivity``."""
    if args.judge_command == "sensitivity":
        return sensitivity_command(args, store, console)
    return meta_command(args, store, console)


def meta_command(args: argparse.Namespace, store: Store, console: Console) -> int:
    """Print the meta-evaluation tables of a judge run."""
    prompt, items = meta_items(store, args.run)
    console.print(f"{len(items)} explanations rated by humans and judged ({prompt} prompt)")
    warning = mass_warning(store, args.run)
    if warning:
        console.print(warning, style="yellow", highlight=False)
    for result in meta_tables(items, seed=args.seed):
        console.print(to_rich_table(result.title, result.columns, result.rows))
    if args.variant_run:
        variants = [meta_items(store, run_id) for run_id in args.variant_run]
        result = change_result((prompt, items), variants)
        console.print(to_rich_table(result.title, result.columns, result.rows))
    return 0


def sensitivity_command(args: argparse.Namespace, store: Store, console: Console) -> int:
    """Print the §5.6 matrix of a judge run over edited explanations."""
    result = sensitivity_table(store, args.run)
    if table_width(result.columns, result.rows) > console.width:  # a column per edit
        console.print(to_rich_table_transposed(result.title, result.columns, result.rows))
    else:
        console.print(to_rich_table(result.title, result.columns, result.rows))
    console.print(
        f"{TARGET_MARK}: the criterion the edit targets (its label should change: high is "
        "good); elsewhere the label should stay (low is good). A cell's n: the pairs with a "
        "label for that criterion in both, where fewer than all. Edits: related = the reasons "
        "of another text, new_info = an explanation of 4+ sentences cut to its first.",
        style="dim",
    )
    return 0


def judge_run_first(args: argparse.Namespace) -> list[str] | None:
    """With ``--file``: the ``haf run`` that judges it first (its run id becomes ``--run``)."""
    return judge_run_argv(args) if getattr(args, "file", None) else None


JUDGE_COMMAND = MethodCommand(
    name="judge",
    add_parser=add_judge_parser,
    run=judge_command,
    run_first=judge_run_first,
)
"""``haf judge meta`` and ``haf judge sensitivity``."""
