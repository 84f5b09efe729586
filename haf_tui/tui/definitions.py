"""What the numbers and marks on the workbench's screens mean (issue 18 §7): one source for the
``?`` help, the legends of the metrics screen and the explorer, and the token view.

Plain Python (no Textual): the widgets and the help screen read it. The formulas are the
spec's (``HAF.md`` §4–5); R: the JUSTIFY reasons, C: a span's TokenSAR confidence, g: the
similarity model, h = 1 − g.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal


@dataclass(frozen=True)
class MetricDefinition:
    """One HAF metric: its label, a one-line definition, its range and the better direction."""

    label: str
    definition: str
    value_range: str
    better: Literal["higher", "lower"]

    @property
    def arrow(self) -> str:
        """↑ when higher is better, ↓ when lower is."""
        return "↑" if self.better == "higher" else "↓"

    def line(self) -> str:
        """The definition as one line: ``SoS (0–1, higher is better): …``."""
        return f"{self.label} ({self.value_range}, {self.better} is better): {self.definition}"


METRIC_DEFINITIONS: Final[tuple[MetricDefinition, ...]] = (
    MetricDefinition(
        "SoS",
        "strength of support: mean over R of 0.8·C + 0.2·g(reason, text); "
        "undefined without reasons",
        "0–1",
        "higher",
    ),
    MetricDefinition(
        "DiS",
        "diversity of R: Σ h(r_i, r_j)·C_j / (n(n−1)); undefined with fewer than 2 reasons",
        "0–1",
        "higher",
    ),
    MetricDefinition(
        "UII",
        "new internal reasons UPHOLD-REASON adds: mean of 0.5·C + 0.5·div(reason, R); "
        "undefined without them",
        "0–1",
        "lower",
    ),
    MetricDefinition(
        "UEI",
        "the same over the new external reasons; undefined without them",
        "0–1",
        "lower",
    ),
    MetricDefinition(
        "RS",
        "sufficiency of each reason alone (toxic / maybe stances): S(Y)·C(Y)·(1 − I_S), "
        "mean over R",
        "0–1",
        "higher",
    ),
    MetricDefinition(
        "RN",
        "necessity of each reason (non-toxic stance): N(Y)·C(Y)·I_N, mean over R",
        "0–1",
        "higher",
    ),
)
"""HAF's six metrics, in the paper's order."""

METRICS_BY_LABEL: Final = {metric.label: metric for metric in METRIC_DEFINITIONS}


NLL_COLOURS: Final = "NLL: green likely → red unlikely"
RELEVANCE_COLOURS: Final = "relevance: green high → red low, dim: no reason"
"""What the token view's colours mean (its status line says the one shown)."""


@dataclass(frozen=True)
class Mark:
    """A mark a screen draws: the mark, what it means, where it appears."""

    mark: str
    meaning: str
    where: str


MARKS: Final[tuple[Mark, ...]] = (
    Mark("U", "an UNCLEAR decision in one of the instance's stages", "explorer list (U!)"),
    Mark("!", "a contradiction: a follow-up says Y = NO yet lists new reasons", "explorer list"),
    Mark("★", "bookmarked instance", "explorer list"),
    Mark(
        "⧗ pending",
        "an annotation kept while another process writes the database, stored once it lets go",
        "runs list, explorer tree",
    ),
    Mark("—", "undefined for this instance or run (the panels say why)", "everywhere"),
    Mark("C=", "TokenSAR confidence of a span, exp(−relevance-weighted NLL)", "explorer tree"),
    Mark("low", "label mass below 0.5: the format forced the answer", "judge view, panel 8"),
    Mark("≠ stance", "Supports names the other answer than the stance", "judge view, panel 8"),
    Mark("◆", "the criterion the edit targets (should change: high is good)", "panel 8"),
    Mark("●  ·", "a word the rationale marks / does not mark", "rationale view"),
    Mark("≈", "an estimated total", "monitor"),
    Mark("reversed", "the token under the cursor", "token view"),
    Mark("bold underlined", "the tokens of the selected reason", "token view"),
    Mark("green → red", f"token colours, {NLL_COLOURS}; {RELEVANCE_COLOURS}", "token view"),
)
"""Every mark on the screens, with its meaning."""

MARKS_BY_NAME: Final = {mark.mark: mark for mark in MARKS}


SHORT_MEANINGS: Final = {
    "U": "UNCLEAR",
    "!": "contradiction",
    "★": "bookmarked",
    "—": "undefined",
    "low": "mass < 0.5",
    "≠ stance": "Supports disagrees",
    "◆": "edit's target",
}
"""The marks' meanings as a legend line says them (the help says them in full)."""


def metrics_legend() -> str:
    """The six metrics in one line: ``SoS↑ DiS↑ UII↓ UEI↓ RS↑ RN↑ 0–1 (↑ higher is better)``."""
    arrows = " ".join(f"{metric.label}{metric.arrow}" for metric in METRIC_DEFINITIONS)
    return f"{arrows} 0–1 (↑ higher is better)"


def marks_legend(names: tuple[str, ...]) -> str:
    """The named marks with their meaning, short: ``U: UNCLEAR · !: contradiction``."""
    return " · ".join(
        f"{name}: {SHORT_MEANINGS.get(name, MARKS_BY_NAME[name].meaning)}" for name in names
    )


def definitions_markdown() -> str:
    """The metrics and the marks as Markdown (the ``?`` help shows it)."""
    lines = ["## What the numbers mean", ""]
    lines += [
        f"- **{m.label}** ({m.value_range}, {m.better} is better): {m.definition}."
        for m in METRIC_DEFINITIONS
    ]
    lines += ["", "## Marks", "", "| mark | means | where |", "|---|---|---|"]
    lines += [f"| `{mark.mark}` | {mark.meaning} | {mark.where} |" for mark in MARKS]
    return "\n".join(lines)
