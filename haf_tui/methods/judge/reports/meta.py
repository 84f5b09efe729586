"""The judge's meta-evaluation tables (``docs/methods/judge.md#5-meta-evaluation``) of a judge run
on human-rated explanations (an ACORN import), for ``haf judge meta`` and the metrics screen's panel
8: Table 4.1 (Krippendorff's α, at the criterion's level and at the interval level), Table 4.2
(Spearman ρ with the vote), Fig. 4.3 (the LLM as an additional rater, each gain with its spread over
the draws), Table 4.5 (bias) and Table 4.4 (change rates across wordings). Each Avg row names how
many criteria's values it averages. The statistics are :mod:`haf_tui.methods.judge.core.meta`'s."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final, Literal

from haf_tui.methods.judge.core.criteria import CRITERION_IDS
from haf_tui.methods.judge.core.meta import (
    AVG,
    ITERATIONS,
    SCALED,
    AlphaRow,
    MetaItem,
    alpha_table,
    bias_table,
    change_table,
    extra_rater_table,
    rho_table,
)
from haf_tui.methods.judge.reports.readers import judge_codes
from haf_tui.methods.judge.reports.tables import judge_config
from haf_tui.methods.judge.settings import judge_settings
from haf_tui.reports.queries import QueryError
from haf_tui.reports.registry import ReportResult

if TYPE_CHECKING:
    from haf_tui.store.db import Store

MetaTable = Literal["alpha", "alpha_interval", "rho", "extra", "bias"]
META_TABLES: Final[tuple[MetaTable, ...]] = ("alpha", "alpha_interval", "rho", "extra", "bias")


def meta_items(store: Store, run_id: str) -> tuple[str, list[MetaItem]]:
    """A judge run's prompt variant and its items: the explanations with human ratings (an
    ACORN import) it judged, with the LLM's codes. QueryError when the run is not a judge run
    or judged no explanation with human ratings."""
    full_id, config = judge_config(store, run_id)
    record = store.get_run(full_id)
    codes = judge_codes(store, full_id, CRITERION_IDS)
    items = [
        MetaItem.from_extra(i.instance_id, i.extra, codes.get(i.instance_id, {}))
        for i in store.instances(record.dataset_id)
        if i.extra.get("human_ratings") and i.instance_id in codes
    ]
    if not items:
        raise QueryError(
            f"run {full_id} has no judged explanations with human ratings: judge an "
            "ACORN import (haf datasets import acorn --file ACORN.jsonl)"
        )
    return judge_settings(config).prompt, items


def _avg_label(criterion: str, values: Sequence[float | None]) -> str:
    """An Avg row's name with how many of the criteria's values it averages
    (``avg (1 of 8 defined)``); another row's criterion as it is."""
    if criterion != AVG:
        return criterion
    return f"{AVG} ({sum(v is not None for v in values)} of {len(values)} defined)"


def meta_tables(
    items: Sequence[MetaItem],
    *,
    seed: int = 0,
    tables: Sequence[MetaTable] = META_TABLES,
) -> list[ReportResult]:
    """The meta-evaluation tables of ``items`` (§5.1–5.4), in ``tables``' order: Table 4.1
    (Krippendorff's α, humans and with the LLM replacing a rater, at the criterion's level;
    and at the interval level), Table 4.2 (Spearman ρ with the vote), Fig. 4.3 (the LLM as
    an additional rater, each gain with its spread over the draws), Table 4.5 (bias). Each
    Avg row says how many criteria's values it averages."""
    results: list[ReportResult] = []
    alpha: list[AlphaRow] = []  # (both α tables: computed once)
    for table in tables:
        if table == "alpha":
            alpha = alpha or alpha_table(items, seed=seed)
            results.append(
                ReportResult(
                    "judge-alpha",
                    "Table 4.1 — Krippendorff's α: humans; the LLM replacing a random rater "
                    f"(mean of {ITERATIONS}); at the criterion's level "
                    "(docs/methods/judge.md#52-krippendorffs-alpha)",
                    ["criterion", "level", "n", "α humans", "α with LLM", "Δ"],
                    [
                        (
                            _avg_label(r.criterion, [x.human for x in alpha[:-1]]),
                            r.level,
                            r.n,
                            r.human,
                            r.llm,
                            r.delta,
                        )
                        for r in alpha
                    ],
                )
            )
        elif table == "alpha_interval":
            alpha = alpha or alpha_table(items, seed=seed)
            scaled = [r for r in alpha if r.criterion in SCALED or r.criterion == AVG]
            results.append(
                ReportResult(
                    "judge-alpha-interval",
                    "Table 4.1, interval level — Krippendorff's α with δ² = (c − k)², reported "
                    "too (docs/methods/judge.md#52-krippendorffs-alpha); Supports and Factual "
                    "are nominal: left out",
                    ["criterion", "n", "α humans", "α with LLM", "Δ"],
                    [
                        (
                            _avg_label(r.criterion, [x.human_interval for x in scaled[:-1]]),
                            r.n,
                            r.human_interval,
                            r.llm_interval,
                            None
                            if r.human_interval is None or r.llm_interval is None
                            else r.llm_interval - r.human_interval,
                        )
                        for r in scaled
                    ],
                )
            )
        elif table == "rho":
            rho = rho_table(items)
            results.append(
                ReportResult(
                    "judge-rho",
                    "Table 4.2 — Spearman ρ with the majority vote (avg: of the defined ρ)",
                    ["criterion", "n", "ρ", "agreement"],
                    [
                        (
                            _avg_label(r.criterion, [x.rho for x in rho[:-1]]),
                            r.n,
                            r.rho,
                            r.agreement,
                        )
                        for r in rho
                    ],
                )
            )
        elif table == "extra":
            curve = extra_rater_table(items, seed=seed)
            results.append(
                ReportResult(
                    "judge-extra-rater",
                    "Fig. 4.3 — the LLM as an additional rater: ρ(vote of h raters, gold) and "
                    f"with the LLM, means of {ITERATIONS} draws; gain min–max: its spread over "
                    "the draws (a range across 0: the sign depends on the draw)",
                    ["criterion", "h", "n", "h raters", "+ LLM", "gain", "gain min", "gain max"],
                    [
                        (
                            _avg_label(
                                p.criterion,
                                [q.gain for q in curve if q.raters == p.raters][:-1],
                            ),
                            p.raters,
                            p.n,
                            p.humans,
                            p.with_llm,
                            p.gain,
                            *p.gain_range,
                        )
                        for p in curve
                    ],
                )
            )
        else:
            bias = bias_table(items)
            results.append(
                ReportResult(
                    "judge-bias",
                    "Table 4.5 — bias: MAE, NMAE, mean human (voted) and LLM codes, LLM − human",
                    ["criterion", "n", "MAE", "NMAE", "μ human", "μ LLM", "bias"],
                    [
                        (r.criterion, r.n, r.mae, r.nmae, r.mean_human, r.mean_llm, r.bias)
                        for r in bias
                    ],
                )
            )
    return results


def change_result(
    default: tuple[str, Sequence[MetaItem]], variants: Sequence[tuple[str, Sequence[MetaItem]]]
) -> ReportResult:
    """Table 4.4 (§5.5): the change rate of each variant run's labels against the default
    run's (each a (prompt variant, items) pair of :func:`meta_items`)."""
    prompt, items = default
    codes = {prompt: {i.item_id: dict(i.llm) for i in items}}
    for variant, variant_items in variants:
        codes[variant] = {i.item_id: dict(i.llm) for i in variant_items}
    rows = change_table(codes, default=prompt)
    return ReportResult(
        "judge-change",
        f"Table 4.4 — change rate % of each wording against the {prompt} prompt",
        ["variant", "criterion", "n", "changed %"],
        [(r.variant, r.criterion, r.n, r.rate) for r in rows],
    )


__all__ = ["META_TABLES", "MetaTable", "change_result", "meta_items", "meta_tables"]
