"""Reports: a named query shown one way, the registry they plug into, and the built-in ones.

A *report* (:class:`Report`) runs one named query and may reshape its result for display; a new
report plugs in with :func:`register_report` without touching the others. ``haf report`` shows
the summary reports (:func:`summary_reports`: Tables 1, 2 and 4).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from haf_tui.reports.queries import QueryError, Result, Row, run_named
from haf_tui.store import Store
from haf_tui.vocabulary import METRIC_LABELS

Shaper = Callable[[list[str], list[Row]], Result]
"""Turns a query's (columns, rows) into what a report shows."""


@dataclass(frozen=True)
class ReportResult:
    """What a report produced: a title, columns and rows."""

    name: str
    title: str
    columns: list[str]
    rows: list[Row]


@dataclass(frozen=True)
class Report:
    """A named query shown one way. ``summary`` reports are what ``haf report`` shows."""

    name: str
    title: str
    query: str
    summary: bool = False
    shape: Shaper | None = field(default=None, compare=False)

    def run(self, store: Store, params: Mapping[str, Any] | None = None) -> ReportResult:
        """Run the query and shape its result."""
        columns, rows = run_named(store, self.query, params)
        if self.shape is not None:
            columns, rows = self.shape(columns, rows)
        return ReportResult(self.name, self.title, columns, rows)


REPORTS: dict[str, Report] = {}
"""Every registered report by name, in registration order."""


def register_report(report: Report, *, replace: bool = False) -> Report:
    """Add a report to :data:`REPORTS` (ValueError for a taken name unless ``replace``)."""
    if report.name in REPORTS and not replace:
        raise ValueError(f"a report named {report.name!r} is already registered")
    REPORTS[report.name] = report
    return report


def get_report(name: str) -> Report:
    """A registered report; QueryError listing the known names when there is none such."""
    try:
        return REPORTS[name]
    except KeyError:
        raise QueryError(f"no report named {name!r} (known: {', '.join(REPORTS)})") from None


def summary_reports() -> list[Report]:
    """The reports ``haf report`` shows by default, in registration order."""
    return [r for r in REPORTS.values() if r.summary]


def run_report(store: Store, name: str, params: Mapping[str, Any] | None = None) -> ReportResult:
    """Run the registered report ``name``."""
    return get_report(name).run(store, params)


POOLED_LABEL: Final = "pooled (reference)"
INSTANCE_LABEL: Final = "instance mean"


def _column_index(columns: Sequence[str], name: str) -> int:
    try:
        return list(columns).index(name)
    except ValueError:
        raise QueryError(
            f"report expects a column {name!r}; the query gives {', '.join(columns)}"
        ) from None


def pooling_rows(keys: Sequence[tuple[str, str]], metrics: Sequence[tuple[str, str]]) -> Shaper:
    """A shaper turning one wide row per run (``M_pooled``, ``M_pooled_n``,
    ``M_instance_mean``, ``M_instance_n`` per metric prefix M) into two rows per run, one per
    pooling rule, with a value column and an n column per metric.

    ``keys``: (source column, shown label) kept as they are; ``metrics``: (prefix, label).
    """

    def shape(columns: list[str], rows: list[Row]) -> Result:
        key_at = [_column_index(columns, source) for source, _ in keys]
        rules = (
            ("pooled", "pooled_n", POOLED_LABEL),
            ("instance_mean", "instance_n", INSTANCE_LABEL),
        )
        out_columns = [label for _, label in keys] + ["pooling"]
        for _, label in metrics:
            out_columns += [label, f"{label} n"]
        out_rows: list[Row] = []
        for row in rows:
            for value_suffix, n_suffix, rule in rules:
                values: list[Any] = [row[i] for i in key_at] + [rule]
                for prefix, _ in metrics:
                    values.append(row[_column_index(columns, f"{prefix}_{value_suffix}")])
                    values.append(row[_column_index(columns, f"{prefix}_{n_suffix}")])
                out_rows.append(tuple(values))
        return out_columns, out_rows

    return shape


def select_columns(selection: Sequence[tuple[str, str]]) -> Shaper:
    """A shaper keeping (and relabelling) some columns: (source column, shown label)."""

    def shape(columns: list[str], rows: list[Row]) -> Result:
        at = [_column_index(columns, source) for source, _ in selection]
        return [label for _, label in selection], [tuple(row[i] for i in at) for row in rows]

    return shape


def compare_side_by_side(columns: list[str], rows: list[Row]) -> Result:
    """``model_comparison``'s long rows as one row per metric, a value and n column per run."""
    metric_at, label_at = _column_index(columns, "metric"), _column_index(columns, "label")
    run_at, model_at = _column_index(columns, "run_id"), _column_index(columns, "model_file")
    dataset_at = _column_index(columns, "dataset_id")
    mean_at, n_at = _column_index(columns, "instance_mean"), _column_index(columns, "n")
    runs: dict[str, str] = {}
    table: dict[str, dict[str, tuple[Any, Any]]] = {}
    labels: dict[str, str] = {}
    for row in rows:
        run_id = str(row[run_at])
        runs.setdefault(run_id, f"{row[model_at]} · {row[dataset_at]} · {run_id[:8]}")
        labels.setdefault(row[metric_at], str(row[label_at]))
        table.setdefault(row[metric_at], {})[run_id] = (row[mean_at], row[n_at])
    out_columns = ["metric"]
    for heading in runs.values():
        out_columns += [heading, f"{heading} n"]
    out_rows: list[Row] = []
    for metric, by_run in table.items():
        values: list[Any] = [labels[metric]]
        for run_id in runs:
            values += list(by_run.get(run_id, (None, 0)))
        out_rows.append(tuple(values))
    return out_columns, out_rows


_RUN_KEYS: Final = (("model_file", "model"), ("dataset_id", "dataset"), ("run_id", "run"))
TABLE1_METRICS: Final = tuple(METRIC_LABELS.items())
_TABLE4_METRICS: Final = (
    ("score", "score"),
    ("c_y", "C(Y)"),
    ("decision_weight", "S/N(Y)"),
    ("informativeness", "I_S/I_N"),
)

for _report in (
    Report(
        "table1",
        "Table 1 — HAF metrics per model × dataset",
        "table1",
        summary=True,
        shape=pooling_rows((*_RUN_KEYS, ("n_instances", "instances")), TABLE1_METRICS),
    ),
    Report(
        "table2",
        "Table 2 — % of instances whose UPHOLD-REASON decision is Y = NO",
        "table2",
        summary=True,
        shape=select_columns(
            (
                *_RUN_KEYS,
                ("internal_sufficient_pct", "internal % NO"),
                ("internal_n", "internal n"),
                ("external_sufficient_pct", "external % NO"),
                ("external_n", "external n"),
            )
        ),
    ),
    Report(
        "table4",
        "Table 4 — RS and RN split into C(Y), S/N(Y) and I_S/I_N",
        "table4",
        summary=True,
        shape=pooling_rows((*_RUN_KEYS, ("metric", "metric")), _TABLE4_METRICS),
    ),
    Report(
        "figure2",
        "Figure 2 — SoS and DiS by stance × JUSTIFY decision confidence",
        "figure2",
        shape=select_columns(
            (
                *_RUN_KEYS,
                ("stance", "stance"),
                ("band", "confidence"),
                ("n_instances", "instances"),
                ("sos_mean", "SoS"),
                ("sos_n", "SoS n"),
                ("dis_mean", "DiS"),
                ("dis_n", "DiS n"),
            )
        ),
    ),
    Report(
        "stances",
        "Stance distribution",
        "stance_distribution",
        shape=select_columns(
            (*_RUN_KEYS, ("stance", "stance"), ("n", "n"), ("pct", "%"), ("n_finished", "of"))
        ),
    ),
    Report(
        "unclear",
        "UNCLEAR decisions per stage and instances stopped after JUSTIFY",
        "unclear_rates",
        shape=select_columns(
            (
                *_RUN_KEYS,
                ("kind", "kind"),
                ("stage", "stage"),
                ("detail", "detail"),
                ("n", "n"),
                ("of_n", "of"),
                ("pct", "%"),
            )
        ),
    ),
    Report(
        "contradictions",
        "Y = NO yet new reasons listed, per stage",
        "contradiction_rates",
        shape=select_columns(
            (
                *_RUN_KEYS,
                ("stage", "stage"),
                ("test", "test"),
                ("n_no", "Y = NO"),
                ("n_contradictions", "with new reasons"),
                ("pct_of_no", "% of NO"),
            )
        ),
    ),
    Report(
        "compare",
        "Model comparison — instance means side by side",
        "model_comparison",
        shape=compare_side_by_side,
    ),
    Report(
        "classification",
        "Label scores (classify suite) — p(y | x), ŷ and the label mass",
        "classification",
        shape=select_columns(
            (
                *_RUN_KEYS,
                ("n", "instances"),
                ("pct_toxic", "% ŷ toxic"),
                ("mean_p_toxic", "mean p(toxic)"),
                ("pct_low_mass", "% mass < 0.5"),
                ("n_gold", "gold"),
                ("pct_correct", "% correct"),
                ("n_stance", "stances"),
                ("pct_agree_stance", "% agree"),
            )
        ),
    ),
    Report(
        "rationales",
        "Rationales — P1 Table 4 per model × dataset × strategy, with the shares",
        "rationale_summary",
        shape=select_columns(
            (
                *_RUN_KEYS,
                ("selection", "selection"),
                ("variant", "prompt"),
                ("rationale", "rationale"),
                ("n", "instances"),
                ("n_gold", "with gold"),
                ("iou_f1", "IOU"),
                ("token_f1", "TOK"),
                ("token_f1_micro", "TOK micro"),
                ("comp", "COMP"),
                ("suff", "SUFF"),
                ("flip_rate", "% flip"),
                ("n_faithful", "faithful n"),
                ("auprc", "AUPRC"),
                ("cpx", "CPX H"),
                ("spr", "SPR G"),
                ("cpx_n", "CPX n"),
                ("n_answers", "answers"),
                ("pct_empty", "% empty"),
                ("pct_out_of_text", "% out-of-text"),
                ("pct_not_k", "% ≠ k"),
                ("pct_low_mass", "% mass < 0.5"),
                ("pct_skipped", "% no gold"),
                ("annotator_iou", "annotator IoU"),
                ("alignment_f1", "align F1"),
                ("n_by_label", "instances by gold label"),
                ("n_undecided", "undecided"),
                ("n_tokens_mismatch", "tokens ≠ text"),
                ("n_bad_mask", "bad-mask posts skipped"),
            )
        ),
    ),
    Report(
        "rationale-plausibility",
        "Rationales — plausibility against the annotators (P1 Table 4; P2 Table 2)",
        "rationale_plausibility",
        shape=select_columns(
            (
                *_RUN_KEYS,
                ("selection", "selection"),
                ("variant", "prompt"),
                ("gold", "gold"),
                ("rationale", "rationale"),
                ("n", "instances"),
                ("n_seeds", "seeds"),
                ("iou_f1", "IoU-F1"),
                ("iou_precision", "IoU P"),
                ("iou_precision_n", "IoU P n"),
                ("iou_recall", "IoU R"),
                ("iou_recall_n", "IoU R n"),
                ("token_f1", "token F1"),
                ("token_f1_sd", "token F1 sd"),
                ("token_f1_micro", "token F1 micro"),
                ("token_f1_union", "token F1 UNION"),
                ("auprc", "AUPRC"),
                ("soft_auprc", "soft AUPRC"),
                ("auprc_n", "AUPRC n"),
                ("alignment_f1_x100", "align F1 ×100"),
                ("alignment_f1_x100_sd", "align F1 ×100 sd"),
            )
        ),
    ),
    Report(
        "rationale-faithfulness",
        "Rationales — faithfulness by removal (P1 Table 4 COMP, SUFF; P2 Tables 4 and 9)",
        "rationale_faithfulness",
        shape=select_columns(
            (
                *_RUN_KEYS,
                ("selection", "selection"),
                ("variant", "prompt"),
                ("rationale", "rationale"),
                ("n", "instances"),
                ("n_seeds", "seeds"),
                ("comp", "COMP"),
                ("comp_n", "COMP n"),
                ("suff", "SUFF"),
                ("suff_n", "SUFF n"),
                ("flip_rate", "% flip"),
                ("flip_rate_sd", "% flip sd"),
                ("flip_n", "flip n"),
                ("words_removed", "words removed"),
            )
        ),
    ),
    Report(
        "rationale-complexity",
        "Rationales — complexity and sparsity of each rationale (P1 Table 4 CPX, SPR)",
        "rationale_complexity",
        shape=select_columns(
            (
                *_RUN_KEYS,
                ("selection", "selection"),
                ("variant", "prompt"),
                ("rationale", "rationale"),
                ("n", "rationales"),
                ("cpx_entropy", "CPX H"),
                ("cpx_entropy_n", "CPX H n"),
                ("cpx_entropy_norm", "CPX H/ln n"),
                ("spr_gini", "SPR G"),
                ("spr_gini_n", "SPR G n"),
                ("cpx_ratio", "CPX |R̂|/n"),
                ("spr_ratio", "SPR 1−|R̂|/n"),
                ("n_undefined", "Σv = 0"),
            )
        ),
    ),
):
    register_report(_report)
