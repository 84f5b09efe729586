"""The judge suite's reports (spec ``JUDGE.md``): what both faces show of judge runs.

- ``judge`` (query ``judge_summary``): per judge run the normalised mean of each criterion with
  its n, the Supports-mismatch rate, the label-mass warnings and the free-mode failures;
- ``judge-vs-haf`` (``judge_vs_haf``): per explanation of a HAF run, the judge's Overall,
  normalised mean and Supports match beside the source run's SoS and DiS; and
  ``judge-vs-haf-summary``: Spearman ρ of those per judge run
  (:func:`haf_tui.judge.metrics.spearman`);
- ``judge-mass`` (``judge_low_mass``): every label whose mass is below 0.5;
- :func:`meta_items` / :func:`meta_tables`: the meta-evaluation tables of a judge run on
  human-rated explanations (Tables 4.1, 4.2, 4.5, Fig. 4.3, Table 4.4), for ``haf judge
  meta`` and the metrics screen;
- :func:`sensitivity_table`: the §5.6 matrix of a judge run over an edits dataset (``haf judge
  sensitivity``).

Registered on import (:mod:`haf_tui.reports` imports this module).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal

from haf_tui.config import RunConfig
from haf_tui.judge.criteria import CRITERION_IDS, SHORT_NAMES
from haf_tui.judge.meta import (
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
from haf_tui.judge.metrics import spearman
from haf_tui.judge.scores import LOW_MASS
from haf_tui.judge.sensitivity import sensitivity_matrix, split_edited_id
from haf_tui.reports.queries import QueryError, Result, Row, resolve_run_id, run_named
from haf_tui.reports.registry import Report, ReportResult, register_report, select_columns
from haf_tui.store import Store, StoreError
from haf_tui.store.readers import judge_codes

MASS_THRESHOLD: Final = LOW_MASS
"""A label mass below it is a warning (the queries' ``mass_threshold`` default)."""
SCORED: Final[tuple[str, ...]] = tuple(c for c in CRITERION_IDS if c != "supports")
"""The criteria with a normalised score (Supports is nominal: its mismatch rate instead)."""

JUDGE_KEYS: Final = (
    ("model_file", "model"),
    ("judged", "judged"),
    ("dataset_id", "dataset"),
    ("run_id", "run"),
    ("variant", "prompt"),
    ("mode", "mode"),
)


def _criterion_columns() -> tuple[tuple[str, str], ...]:
    columns: list[tuple[str, str]] = []
    for crit_id in SCORED:
        columns += [(crit_id, SHORT_NAMES[crit_id]), (f"{crit_id}_n", f"{SHORT_NAMES[crit_id]} n")]
    return tuple(columns)


JUDGE_COLUMNS: Final = (
    *JUDGE_KEYS,
    ("n", "instances"),
    *_criterion_columns(),
    ("pct_mismatch", "% Supports ≠ stance"),
    ("n_stance", "stances"),
    ("n_maybe", "maybe"),
    ("pct_low_mass", "% instances with mass < 0.5"),
    ("n_low_mass", "labels with mass < 0.5"),
    ("n_masses", "labels"),
    ("pct_failed", "% failed"),
    ("n_failed", "failed"),
)
"""(``judge_summary`` column, shown label) of the ``judge`` report."""

VS_HAF_COLUMNS: Final = (
    ("model_file", "model"),
    ("judged", "judged"),
    ("source_run", "source run"),
    ("run_id", "run"),
    ("instance_id", "instance"),
    ("stance", "stance"),
    ("overall", "Overall"),
    ("overall_expected", "Overall E"),
    ("mean", "mean"),
    ("n_criteria", "criteria"),
    ("supports_matches", "Supports = stance"),
    ("min_mass", "min mass"),
    ("sos", "SoS"),
    ("dis", "DiS"),
)
"""(``judge_vs_haf`` column, shown label) of the ``judge-vs-haf`` report."""

RHO_PAIRS: Final = (
    ("overall", "sos", "ρ(Overall, SoS)"),
    ("overall", "dis", "ρ(Overall, DiS)"),
    ("mean", "sos", "ρ(mean, SoS)"),
    ("mean", "dis", "ρ(mean, DiS)"),
)
"""(judge column, HAF column, heading) of the correlations ``judge-vs-haf-summary`` shows."""


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def rho_summary(columns: list[str], rows: list[Row]) -> Result:
    """``judge_vs_haf``'s rows as one row per judge run: its instances, the Supports
    mismatches among them, and Spearman ρ (:func:`haf_tui.judge.metrics.spearman`: average
    ranks, pairs where both values exist) of the judge's Overall and normalised mean against
    SoS and DiS, each with its n (None: undefined, fewer than two pairs or a constant)."""
    missing = [name for name, _ in VS_HAF_COLUMNS if name not in columns]
    if missing:
        raise QueryError(f"report expects the columns {', '.join(missing)} of judge_vs_haf")
    at = {name: columns.index(name) for name, _ in VS_HAF_COLUMNS}
    runs: dict[str, list[Row]] = {}
    for row in rows:
        runs.setdefault(str(row[at["run_id"]]), []).append(row)
    out_columns = ["model", "judged", "source run", "run", "instances", "Supports ≠ stance"]
    for _, _, heading in RHO_PAIRS:
        out_columns += [heading, f"{heading} n"]
    out_rows: list[Row] = []
    for run_id, of_run in runs.items():
        first = of_run[0]
        values: list[Any] = [
            first[at["model_file"]],
            first[at["judged"]],
            first[at["source_run"]],
            run_id,
            len(of_run),
            sum(1 for r in of_run if r[at["supports_matches"]] == 0),
        ]
        for judge_column, haf_column, _ in RHO_PAIRS:
            judge = [_number(r[at[judge_column]]) for r in of_run]
            haf = [_number(r[at[haf_column]]) for r in of_run]
            n = sum(1 for x, y in zip(judge, haf, strict=True) if x is not None and y is not None)
            values += [spearman(judge, haf), n]
        out_rows.append(tuple(values))
    return out_columns, out_rows


for _report in (
    Report(
        "judge",
        "Judge — ACORN criteria per judge run: normalised means (0–1, high is good), "
        "Supports mismatches, label mass",
        "judge_summary",
        shape=select_columns(JUDGE_COLUMNS),
    ),
    Report(
        "judge-vs-haf",
        "Judge vs HAF — each explanation's judge ratings beside its SoS and DiS",
        "judge_vs_haf",
        shape=select_columns(VS_HAF_COLUMNS),
    ),
    Report(
        "judge-vs-haf-summary",
        "Judge vs HAF — Spearman ρ of the judge's ratings with SoS and DiS per judge run",
        "judge_vs_haf",
        shape=rho_summary,
    ),
    Report(
        "judge-mass",
        "Judge — label-mass warnings (mass < 0.5: the format forced the label)",
        "judge_low_mass",
        shape=select_columns(
            (
                ("model_file", "model"),
                ("dataset_id", "dataset"),
                ("run_id", "run"),
                ("instance_id", "instance"),
                ("criterion", "criterion"),
                ("mass", "mass"),
                ("code", "code"),
            )
        ),
    ),
):
    register_report(_report)

COMPANIONS: Final[dict[str, tuple[str, ...]]] = {"judge-vs-haf": ("judge-vs-haf-summary",)}
"""Reports ``haf report`` prints after another one (the per-instance table, then its ρ)."""


# ---------------------------------------------------------------- the judge runs


def judge_config(store: Store, run_id: str) -> tuple[str, RunConfig]:
    """The full run id and the config of a judge run (QueryError: no such run, or not a judge
    run)."""
    try:
        record = store.get_run(resolve_run_id(store, run_id))
    except StoreError as exc:
        raise QueryError(str(exc)) from exc
    config = RunConfig.model_validate_json(record.config_json)
    if "judge" not in config.suites:
        raise QueryError(f"run {record.run_id} holds no judge suite")
    return record.run_id, config


def mass_warning(store: Store, run_id: str) -> str | None:
    """One line when labels of a constrained judge run had a mass below
    :data:`MASS_THRESHOLD` (the answer format forced them: its numbers compare forced labels),
    naming the criteria where most were; None when none was (or the run is free-mode). Both
    ``haf report --report judge`` and ``haf judge meta`` print it."""
    full_id, config = judge_config(store, run_id)
    if config.judge.mode != "constrained":
        return None
    columns, rows = run_named(store, "judge_summary", {"run_ids": [full_id]})
    if not rows:
        return None
    summary = dict(zip(columns, rows[0], strict=True))
    low, labels, instances = summary["n_low_mass"] or 0, summary["n_masses"] or 0, summary["n"]
    if not low:
        return None
    columns, rows = run_named(store, "judge_low_mass", {"run_ids": [full_id]})
    per_criterion = Counter(row[columns.index("criterion")] for row in rows)
    mostly = [SHORT_NAMES.get(c, c) for c in CRITERION_IDS if per_criterion[c] * 2 > instances]
    where = f" (on most items for {len(mostly)} of 8 criteria: {', '.join(mostly)})"
    return (
        f"warning: {low} of {labels} labels had mass < {MASS_THRESHOLD}: the answer format "
        f"forced them{where if mostly else ''}; trust them less (haf report --run {full_id} "
        "--report judge-mass lists them)"
    )


# ---------------------------------------------------------------- meta-evaluation (§5)

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
    return config.judge.prompt, items


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
                    f"(mean of {ITERATIONS}); at the criterion's level (§5.2)",
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
                    "too (§5.2); Supports and Factual are nominal: left out",
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


# ---------------------------------------------------------------- sensitivity (§5.6)

TARGET_MARK: Final = "◆"
"""Marks a sensitivity cell whose criterion the edit targets (high is good there)."""


def sensitivity_table(store: Store, run_id: str) -> ReportResult:
    """§5.6 (Fig. 4.4) for a judge run over an edits dataset (``--dataset edits:RUN_ID``): one
    row per edit with its pairs (original, edited), per criterion the % of them whose label
    changed (with its n where fewer pairs have that label in both); the targeted cell marked
    :data:`TARGET_MARK`. QueryError (one line) when the run is
    not a judge run or holds no edited explanation."""
    full_id, _ = judge_config(store, run_id)
    codes: Mapping[str, Mapping[str, int | None]] = judge_codes(store, full_id, CRITERION_IDS)
    if not any(split_edited_id(i)[1] is not None for i in codes):
        raise QueryError(
            f"run {full_id} judged no edited explanations: start a judge run over "
            "--dataset edits:RUN_ID to measure its sensitivity"
        )
    matrix = sensitivity_matrix(codes)
    pairs: Counter[str] = Counter(
        edit
        for original, edit in (split_edited_id(i) for i in codes)
        if edit is not None and original in codes
    )
    columns = ["edit", "pairs"] + [SHORT_NAMES[c] for c in CRITERION_IDS]
    rows: list[Row] = []
    for edit in dict.fromkeys(r.edit for r in matrix):
        values: list[Any] = [edit, pairs[edit]]
        for cell in (r for r in matrix if r.edit == edit):
            shown = "—" if cell.changed is None else f"{cell.changed:.1f}"
            if cell.n != pairs[edit]:
                shown += f" (n={cell.n})"
            values.append(f"{shown} {TARGET_MARK}" if cell.targeted else shown)
        rows.append(tuple(values))
    return ReportResult(
        "judge-sensitivity",
        f"Sensitivity to explanation edits (§5.6, Fig. 4.4) — % of pairs whose label changed, "
        f"run {full_id}",
        columns,
        rows,
    )


__all__ = [
    "COMPANIONS",
    "JUDGE_COLUMNS",
    "MASS_THRESHOLD",
    "META_TABLES",
    "RHO_PAIRS",
    "SCORED",
    "SHORT_NAMES",
    "TARGET_MARK",
    "VS_HAF_COLUMNS",
    "MetaTable",
    "change_result",
    "judge_config",
    "mass_warning",
    "meta_items",
    "meta_tables",
    "rho_summary",
    "sensitivity_table",
]
