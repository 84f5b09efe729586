"""What the numbers and marks on the workbench's screens mean (issue 18 §7): one source for the
``?`` help, the legends of the metrics screen and the explorer, and the token view.

Plain Python (no Textual): the widgets and the help screen read it. The metrics are the
methods' declarations (their ``MetricSpec``s, from the registry); the formulas are the
method pages' (``docs/methods/haf.md#4-confidence-tokensar``,
``docs/methods/haf.md#5-metrics``); R: the JUSTIFY reasons, C: a span's TokenSAR confidence, g:
the similarity model, h = 1 − g.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from haf_tui.methods.declare import MetricSpec
from haf_tui.methods.registry import methods, metric_specs

MetricDefinition = MetricSpec
"""A metric's label, definition, range and better direction: a method's declaration."""


def metric_definitions() -> tuple[MetricSpec, ...]:
    """The metrics ``?`` defines where a screen names none: those of the legends of the
    default methods' panels (HAF's six), each once, in order."""
    known = metric_specs()
    names: list[str] = []
    for method in methods().values():
        if method.default:
            for panel in method.panels:
                names.extend(n for n in panel.legend if n not in names and n in known)
    return tuple(known[name] for name in names)


def legend_specs(names: Sequence[str]) -> tuple[MetricSpec, ...]:
    """The declared metrics called ``names`` (stored names), in order; unknown ones left out."""
    known = metric_specs()
    return tuple(known[name] for name in names if name in known)


def __getattr__(name: str) -> Any:
    """``METRIC_DEFINITIONS`` and ``METRICS_BY_LABEL``, drawn from the registry when read."""
    if name == "METRIC_DEFINITIONS":
        return metric_definitions()
    if name == "METRICS_BY_LABEL":
        return {metric.label: metric for metric in metric_definitions()}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
    Mark(
        "low",
        "label mass below 0.5: the format forced the answer",
        "judge view, panel 8, classify node",
    ),
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


def metrics_legend(specs: Sequence[MetricSpec] | None = None) -> str:
    """Metrics in one line with their better direction, and their range when they share one:
    ``SoS↑ DiS↑ UII↓ UEI↓ RS↑ RN↑ 0–1 (↑ higher is better)`` (None: the default ones)."""
    specs = metric_definitions() if specs is None else specs
    if not specs:
        return ""
    line = " ".join(f"{metric.label}{metric.arrow}" for metric in specs)
    ranges = {metric.value_range for metric in specs}
    if len(ranges) == 1:
        line += f" {ranges.pop()}"
    arrows = {metric.arrow for metric in specs}
    if "↑" in arrows:
        line += " (↑ higher is better)"
    elif "↓" in arrows:
        line += " (↓ lower is better)"
    return line


def marks_legend(names: tuple[str, ...]) -> str:
    """The named marks with their meaning, short: ``U: UNCLEAR · !: contradiction``."""
    return " · ".join(
        f"{name}: {SHORT_MEANINGS.get(name, MARKS_BY_NAME[name].meaning)}" for name in names
    )


def definitions_markdown(specs: Sequence[MetricSpec] | None = None) -> str:
    """The metrics (``specs``, each its ``line()`` with the label bold; None: the default
    ones) and the marks as Markdown (the ``?`` help shows it)."""
    lines = ["## What the numbers mean", ""]
    lines += [
        f"- **{m.label}**{m.line().removeprefix(m.label)}."
        for m in (metric_definitions() if specs is None else specs)
    ]
    lines += ["", "## Marks", "", "| mark | means | where |", "|---|---|---|"]
    lines += [f"| `{mark.mark}` | {mark.meaning} | {mark.where} |" for mark in MARKS]
    return "\n".join(lines)
