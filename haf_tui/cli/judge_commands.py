"""``haf judge meta``: how far to trust a judge run (spec ``JUDGE.md`` §5) — its labels on
human-rated explanations (an ACORN import) against the raters: Krippendorff's α with the LLM
replacing a rater (Table 4.1), Spearman ρ with the majority vote (Table 4.2), the LLM as an
additional rater (Fig. 4.3), bias (Table 4.5) and, given runs of the same items under other
prompt wordings, change rates (Table 4.4)."""

from __future__ import annotations

import argparse

from rich.console import Console

from haf_tui.config import RunConfig
from haf_tui.judge.criteria import CRITERION_IDS
from haf_tui.judge.meta import (
    MetaItem,
    alpha_table,
    bias_table,
    change_table,
    extra_rater_table,
    rho_table,
)
from haf_tui.reports.formats import to_rich_table
from haf_tui.store import Store, StoreError
from haf_tui.store.readers import judge_codes


def add_judge_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``haf judge meta --run RUN_ID [--variant-run RUN_ID ...]``."""
    judge = commands.add_parser("judge", help="the judge suite's meta-evaluation")
    actions = judge.add_subparsers(dest="judge_command", required=True)
    meta = actions.add_parser(
        "meta",
        help="a judge run on human-rated explanations (haf datasets import acorn --file "
        "ACORN.jsonl) against the raters: alpha, rho, extra rater, bias, change rates",
    )
    meta.add_argument("--run", required=True, help="the judge run (its dataset: an ACORN import)")
    meta.add_argument(
        "--variant-run",
        action="append",
        default=[],
        help="a judge run of the same items under another prompt (--judge-prompt shuffled, ...): "
        "change rates against --run (repeatable)",
    )
    meta.add_argument("--seed", type=int, default=0, help="seed of the random rater choices")


def _items(store: Store, run_id: str) -> tuple[str, list[MetaItem]]:
    record = store.get_run(run_id)
    config = RunConfig.model_validate_json(record.config_json)
    if "judge" not in config.suites:
        raise StoreError(f"run {record.run_id} holds no judge suite")
    codes = judge_codes(store, record.run_id, CRITERION_IDS)
    items = [
        MetaItem.from_extra(i.instance_id, i.extra, codes.get(i.instance_id, {}))
        for i in store.instances(record.dataset_id)
        if i.extra.get("human_ratings") and i.instance_id in codes
    ]
    if not items:
        raise StoreError(
            f"run {record.run_id} has no judged explanations with human ratings: judge an "
            "ACORN import (haf datasets import acorn --file ACORN.jsonl)"
        )
    return config.judge.prompt, items


def judge_command(args: argparse.Namespace, store: Store, console: Console) -> int:
    """Print the meta-evaluation tables of a judge run."""
    prompt, items = _items(store, args.run)
    console.print(f"{len(items)} explanations rated by humans and judged ({prompt} prompt)")
    alpha = alpha_table(items, seed=args.seed)
    console.print(
        to_rich_table(
            "Table 4.1 — Krippendorff's α: humans; the LLM replacing a random rater (mean of 20)",
            ["criterion", "level", "n", "α humans", "α with LLM", "Δ"],
            [(r.criterion, r.level, r.n, r.human, r.llm, r.delta) for r in alpha],
        )
    )
    rho = rho_table(items)
    console.print(
        to_rich_table(
            "Table 4.2 — Spearman ρ with the majority vote",
            ["criterion", "n", "ρ", "agreement"],
            [(r.criterion, r.n, r.rho, r.agreement) for r in rho],
        )
    )
    curve = extra_rater_table(items, seed=args.seed)
    console.print(
        to_rich_table(
            "Fig. 4.3 — the LLM as an additional rater: ρ(vote of h raters, gold) and with the LLM",
            ["criterion", "h", "n", "h raters", "+ LLM", "gain"],
            [(p.criterion, p.raters, p.n, p.humans, p.with_llm, p.gain) for p in curve],
        )
    )
    bias = bias_table(items)
    console.print(
        to_rich_table(
            "Table 4.5 — bias: MAE, NMAE, mean human (voted) and LLM codes, LLM − human",
            ["criterion", "n", "MAE", "NMAE", "μ human", "μ LLM", "bias"],
            [(r.criterion, r.n, r.mae, r.nmae, r.mean_human, r.mean_llm, r.bias) for r in bias],
        )
    )
    if args.variant_run:
        variants = {prompt: {i.item_id: dict(i.llm) for i in items}}
        for run_id in args.variant_run:
            variant, variant_items = _items(store, run_id)
            variants[variant] = {i.item_id: dict(i.llm) for i in variant_items}
        rows = change_table(variants, default=prompt)
        console.print(
            to_rich_table(
                f"Table 4.4 — change rate % of each wording against the {prompt} prompt",
                ["variant", "criterion", "n", "changed %"],
                [(r.variant, r.criterion, r.n, r.rate) for r in rows],
            )
        )
    return 0
