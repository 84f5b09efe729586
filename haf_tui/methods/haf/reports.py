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


HAF_REPORTS: Final[tuple[Report, ...]] = (
    Report(
        "table1",
        "Table 1 — HAF metrics per model × dataset",
        "table1",
        summary=True,
        shape=pooling_rows((*_RUN_KEYS, ("n_instances", "instances")), TABLE1_METRICS),
        per_instance=PerInstance(TABLE1_METRICS, rule=_INSTANCE_MEANS),
        terms=_POOLING_TERMS,
        averages=tuple(
            Averaged(label, metric, rows=(("pooling", INSTANCE_LABEL),))
            for metric, label in TABLE1_METRICS
        ),
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
)
