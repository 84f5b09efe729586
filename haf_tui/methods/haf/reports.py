"""HAF's reports: the paper's Tables 1, 2 and 4, Figure 2, and the stance, UNCLEAR and
contradiction rates (over ``queries/``)."""

from __future__ import annotations

from typing import Final

from haf_tui.reports.registry import (
    INSTANCE_LABEL,
    POOLED_LABEL,
    RUN_KEYS,
    Averaged,
    PerInstance,
    Report,
    pooling_rows,
    select_columns,
)
from haf_tui.vocabulary import METRIC_LABELS

_RUN_KEYS: Final = RUN_KEYS
TABLE1_METRICS: Final = tuple(METRIC_LABELS.items())
_TABLE4_METRICS: Final = (
    ("score", "score"),
    ("c_y", "C(Y)"),
    ("decision_weight", "S/N(Y)"),
    ("informativeness", "I_S/I_N"),
)
_INSTANCE_MEANS: Final = (
    "instance means: each instance's value (for a reason metric, the mean over its JUSTIFY "
    "reasons), then the mean over the instances where it is defined (Table 1's instance-mean "
    "rule; the reference pools every reason instead)"
)
_POOLING_TERMS: Final = (
    (POOLED_LABEL, "the reference's rule: mean over every reason of every instance"),
    (INSTANCE_LABEL, "mean of the instances' values; n = instances the metric is defined on"),
)
_TABLE4_TERMS: Final = (
    ("score", "RS (SUF) or RN (NEC), the product of the three terms"),
    (
        "C(Y)",
        "TokenSAR confidence of UPHOLD-STANCE's decision Y; an UNCLEAR decision has none (nor a "
        'score) yet has S/N(Y) and I_S/I_N, so each term averages its own n (its "n" column) '
        "and score need not be the product of the terms' means",
    ),
    ("S/N(Y)", "weight of Y: S for RS (NO 1, MAYBE 0.5, else 0.1), N for RN (YES 1, MAYBE 0.5)"),
    ("I_S/I_N", "informativeness of the new reasons: RS uses 1 − I_S, RN uses I_N"),
)


_POOLED: Final = (("pooling", POOLED_LABEL),)
_PER_INSTANCE: Final = (("pooling", INSTANCE_LABEL),)
_INSTANCES: Final = Averaged("instances", "instance_id", "instance_results", kind="count")
"""A run's finished instances."""
_TABLE1_AVERAGES: Final = (
    _INSTANCES,
    *(Averaged(label, metric, rows=_PER_INSTANCE) for metric, label in TABLE1_METRICS),
    *(
        Averaged(label, metric, "reason_metrics", rows=_POOLED)
        if metric != "dis"
        else Averaged(label, metric, rows=_POOLED)  # (no reason values: the instance mean)
        for metric, label in TABLE1_METRICS
    ),
)
_TABLE4_STORED: Final = {
    "SUF": ("RS", (("score", "rs"), ("c_y", "C(Y)"), ("decision_weight", "S/N(Y)"),
                   ("i_s", "I_S/I_N"))),
    "NEC": ("RN", (("score", "rn"), ("c_y", "C(Y)"), ("decision_weight", "S/N(Y)"),
                   ("i_n", "I_S/I_N"))),
}  # fmt: skip
"""Each individual test → its Table 4 row and (stored reason metric, column) of its terms."""
_TABLE4_AVERAGES: Final = tuple(
    Averaged(
        "score" if kind == "score" else label,
        label if kind == "score" else kind,
        "reason_metrics",
        where=(("stage", "justify"),),
        tested_by=test,
        rows=(("metric", row), pooling),
        per_instance=pooling == _PER_INSTANCE[0],
    )
    for test, (row, terms) in _TABLE4_STORED.items()
    for kind, label in terms
    for pooling in (_POOLED[0], _PER_INSTANCE[0])
)
"""Table 4's cells: the reasons' values the test ran on, pooled or instance means first."""
_FIGURE2_CELL: Final = (("stance", "stance"), ("confidence", "band"))
_STOPPED_ROWS: Final = (("kind", "stopped"),)
_UNCLEAR_ROWS: Final = (("kind", "unclear decision"),)
_STAGE: Final = (("stage", "{stage}"), ("test", "{detail}"))


HAF_REPORTS: Final[tuple[Report, ...]] = (
    Report(
        "table1",
        "Table 1 — HAF metrics per model × dataset",
        "table1",
        summary=True,
        shape=pooling_rows((*_RUN_KEYS, ("n_instances", "instances")), TABLE1_METRICS),
        per_instance=PerInstance(TABLE1_METRICS, rule=_INSTANCE_MEANS),
        terms=_POOLING_TERMS,
        averages=_TABLE1_AVERAGES,
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
        counts=(("internal % NO", "internal n"), ("external % NO", "external n")),
        averages=tuple(
            Averaged(
                f"{stage} % NO",
                "decision",
                "generations",
                where=(("stage", stage),),
                share_of="NO",
                scale=100.0,
            )
            for stage in ("internal", "external")
        ),
        per_instance=PerInstance(
            (("no_pct", "% Y = NO"),),
            query="table2_instances",
            group="stage",
            groups=("internal", "external"),
            rule="the share of instances whose decision is Y = NO: each instance counts 100 "
            "(NO) or 0 (YES, MAYBE, UNCLEAR)",
        ),
        terms=(
            (
                "% NO",
                "share of instances whose UPHOLD-REASON decision is NO (the reasons "
                "suffice); internal: of the text's own reasons, external: of outside ones",
            ),
        ),
    ),
    Report(
        "table4",
        "Table 4 — RS and RN split into C(Y), S/N(Y) and I_S/I_N",
        "table4",
        summary=True,
        shape=pooling_rows((*_RUN_KEYS, ("metric", "metric")), _TABLE4_METRICS),
        per_instance=PerInstance(
            _TABLE4_METRICS,
            query="table4_instances",
            group="test",
            groups=("RS (SUF)", "RN (NEC)"),
            rule=_INSTANCE_MEANS,
        ),
        terms=(*_TABLE4_TERMS, *_POOLING_TERMS),
        averages=_TABLE4_AVERAGES,
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
        averages=(
            Averaged(
                "instances", "instance_id", "instance_results", kind="count", group=_FIGURE2_CELL
            ),
            Averaged("SoS", "sos", group=_FIGURE2_CELL),
            Averaged("DiS", "dis", group=_FIGURE2_CELL),
        ),
    ),
    Report(
        "stances",
        "Stance distribution",
        "stance_distribution",
        shape=select_columns(
            (*_RUN_KEYS, ("stance", "stance"), ("n", "n"), ("pct", "%"), ("n_finished", "of"))
        ),
        counts=(("%", "of"),),
        averages=(
            Averaged("n", "stance", "instance_results", kind="count", share_of="{stance}"),
            Averaged("of", "instance_id", "instance_results", kind="count"),
            Averaged("%", "stance", "instance_results", share_of="{stance}", scale=100.0),
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
        counts=(("%", "of"),),
        averages=(
            Averaged(
                "n",
                "decision",
                "generations",
                kind="count",
                rows=_UNCLEAR_ROWS,
                where=_STAGE,
                share_of="UNCLEAR",
                any_case=True,
            ),
            Averaged(
                "%",
                "decision",
                "generations",
                rows=_UNCLEAR_ROWS,
                where=_STAGE,
                share_of="UNCLEAR",
                any_case=True,
                scale=100.0,
            ),
            Averaged(
                "n",
                "stopped",
                "instance_results",
                kind="count",
                rows=_STOPPED_ROWS,
                share_of="{detail}",
            ),
            Averaged(
                "%",
                "stopped",
                "instance_results",
                rows=_STOPPED_ROWS,
                share_of="{detail}",
                scale=100.0,
            ),
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
        averages=(
            Averaged(
                "Y = NO",
                "decision",
                "generations",
                kind="count",
                where=(("stage", "{stage}"), ("test", "{test}")),
                share_of="NO",
            ),
        ),
    ),
)
