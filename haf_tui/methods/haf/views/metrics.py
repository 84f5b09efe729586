"""HAF's metrics with their definitions: the six of the paper and the JUSTIFY decision
confidence its Figure 2 bands by."""

from __future__ import annotations

from typing import Final

from haf_tui.methods.declare import MetricSpec

HAF_METRICS: Final[tuple[MetricSpec, ...]] = (
    MetricSpec(
        "sos",
        "SoS",
        "strength of support: mean over R of 0.8·C + 0.2·g(reason, text); "
        "undefined without reasons",
        undefined_when="undefined when an instance has no reasons",
    ),
    MetricSpec(
        "dis",
        "DiS",
        "diversity of R: Σ h(r_i, r_j)·C_j / (n(n−1)); undefined with fewer than 2 reasons",
        undefined_when="undefined with fewer than 2 reasons",
    ),
    MetricSpec(
        "uii",
        "UII",
        "new internal reasons UPHOLD-REASON adds: mean of 0.5·C + 0.5·div(reason, R); "
        "undefined without them",
        better="lower",
        undefined_when="undefined without internal reasons",
    ),
    MetricSpec(
        "uei",
        "UEI",
        "the same over the new external reasons; undefined without them",
        better="lower",
        undefined_when="undefined without external reasons",
    ),
    MetricSpec(
        "rs",
        "RS",
        "sufficiency of each reason alone (toxic / maybe stances): S(Y)·C(Y)·(1 − I_S), "
        "mean over R",
        undefined_when="defined only for toxic / maybe stances",
    ),
    MetricSpec(
        "rn",
        "RN",
        "necessity of each reason (non-toxic stance): N(Y)·C(Y)·I_N, mean over R",
        undefined_when="defined only for non-toxic stances",
    ),
)
"""HAF's six metrics, in the paper's order (``docs/methods/haf.md#5-metrics``)."""

JUSTIFY_CONFIDENCE: Final = MetricSpec(
    "decision_confidence_justify",
    "C(JUSTIFY)",
    "TokenSAR confidence of JUSTIFY's decision sentence, exp(−relevance-weighted NLL); "
    "Figure 2 bands the instances by it",
    better=None,
    undefined_when="undefined when the decision sentence has no tokens",
)
"""The JUSTIFY decision confidence C (an instance metric; the Distributions panel bins it)."""
