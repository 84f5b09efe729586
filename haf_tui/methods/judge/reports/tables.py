"""The judge suite's reports (``docs/methods/judge.md``): what both faces show of judge runs.

- ``judge`` (query ``judge_summary``): per judge run the normalised mean of each criterion with
  its n, the Supports-mismatch rate, the label-mass warnings and the free-mode failures;
- ``judge-vs-haf`` (``judge_vs_haf``): per explanation of a HAF run, the judge's Overall,
  normalised mean and Supports match beside the source run's SoS and DiS; and
  ``judge-vs-haf-summary``: Spearman ρ of those per judge run
  (:func:`haf_tui.methods.judge.core.metrics.spearman`);
- ``judge-mass`` (``judge_low_mass``): every label whose mass is below 0.5;
- :func:`mass_warning`: the line that says a judge run's labels were forced (low mass);
- the meta-evaluation tables (§5) are in :mod:`haf_tui.methods.judge.reports.meta`;
- :func:`sensitivity_table`: the §5.6 matrix of a judge run over an edits dataset (``haf judge
  sensitivity``).

Registered when the judge method loads (:mod:`haf_tui.methods.registry`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from haf_tui.config import RunConfig
from haf_tui.methods.judge.core.criteria import CRITERION_IDS, SHORT_NAMES, normalised_score
from haf_tui.methods.judge.core.metrics import spearman
from haf_tui.methods.judge.core.scores import LOW_MASS
from haf_tui.methods.judge.core.sensitivity import sensitivity_matrix, split_edited_id
from haf_tui.methods.judge.reports.readers import judge_codes
from haf_tui.methods.judge.settings import judge_settings
from haf_tui.reports.queries import QueryError, Result, Row
from haf_tui.reports.query_running import resolve_run_id, run_named
from haf_tui.reports.registry import Averaged, Report, ReportResult, select_columns
from haf_tui.store.errors import StoreError

if TYPE_CHECKING:
    from haf_tui.store.db import Store

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
    mismatches among them, and Spearman ρ (:func:`haf_tui.methods.judge.core.metrics.spearman`:
    average ranks, pairs where both values exist) of the judge's Overall and normalised mean against
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


def _normalised_means() -> tuple[Averaged, ...]:
    """Each scored criterion's column: the mean of its stored codes, rescaled as
    :func:`~haf_tui.methods.judge.core.criteria.normalised_score` rescales a code (an affine
    map: scale and offset), Factual's N/A (-1) left out."""
    declared = []
    for crit_id in SCORED:
        at_zero, at_one = normalised_score(crit_id, 0), normalised_score(crit_id, 1)
        assert at_zero is not None and at_one is not None
        declared.append(
            Averaged(SHORT_NAMES[crit_id], f"judge_{crit_id}", scale=at_one - at_zero,
                     offset=at_zero, left_out=(-1.0,) if crit_id == "factual" else ())
        )  # fmt: skip
    return tuple(declared)


_ONE_INSTANCE: Final = (("instance", "instance"),)
_MASSES: Final = tuple((c, c) for c in CRITERION_IDS)


JUDGE_REPORTS: Final[tuple[Report, ...]] = (
    Report(
        "judge",
        "Judge — ACORN criteria per judge run: normalised means (0–1, high is good), "
        "Supports mismatches, label mass",
        "judge_summary",
        shape=select_columns(JUDGE_COLUMNS),
        run_note=lambda store, run_id: mass_warning(store, run_id),
        counts=(("% Supports ≠ stance", "stances"),),
        averages=(
            Averaged("instances", "instance_id", "instance_results", kind="count"),
            *_normalised_means(),
            Averaged("% Supports ≠ stance", "judge_supports_matches", scale=-100.0, offset=100.0),
        ),
    ),
    Report(
        "judge-vs-haf",
        "Judge vs HAF — each explanation's judge ratings beside its SoS and DiS",
        "judge_vs_haf",
        shape=select_columns(VS_HAF_COLUMNS),
        companions=("judge-vs-haf-summary",),
        averages=(
            Averaged("Overall", "judge_overall", group=_ONE_INSTANCE),
            Averaged("Overall E", "judge_overall_expected", group=_ONE_INSTANCE),
            Averaged("Supports = stance", "judge_supports_matches", group=_ONE_INSTANCE),
            Averaged("SoS", "sos", group=_ONE_INSTANCE, run_from="source run"),
            Averaged("DiS", "dis", group=_ONE_INSTANCE, run_from="source run"),
        ),
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
        averages=(
            Averaged(
                "mass", "judge_{source}_mass", by="criterion", sources=_MASSES, group=_ONE_INSTANCE
            ),
            Averaged(
                "code", "judge_{source}", by="criterion", sources=_MASSES, group=_ONE_INSTANCE
            ),
        ),
    ),
)
"""The judge's reports (registered when the method loads)."""

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
    if judge_settings(config).mode != "constrained":
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
        "Sensitivity to explanation edits (Fig. 4.4; "
        "docs/methods/judge.md#56-sensitivity-to-edits) — % of pairs whose label "
        "changed, "
        f"run {full_id}",
        columns,
        rows,
    )


__all__ = [
    "COMPANIONS",
    "JUDGE_COLUMNS",
    "MASS_THRESHOLD",
    "RHO_PAIRS",
    "SCORED",
    "SHORT_NAMES",
    "TARGET_MARK",
    "VS_HAF_COLUMNS",
    "judge_config",
    "mass_warning",
    "rho_summary",
    "sensitivity_table",
]
