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
from dataclasses import replace
from typing import Any, Final

from haf_tui.methods.declare import MarkSpec, MetricSpec
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
    """``METRIC_DEFINITIONS``, ``METRICS_BY_LABEL``, ``MARKS``, ``MARKS_BY_NAME`` and
    ``SHORT_MEANINGS``, drawn from the registry when read."""
    if name == "METRIC_DEFINITIONS":
        return metric_definitions()
    if name == "METRICS_BY_LABEL":
        return {metric.label: metric for metric in metric_definitions()}
    if name == "MARKS":
        return marks()
    if name == "MARKS_BY_NAME":
        return {mark.mark: mark for mark in marks()}
    if name == "SHORT_MEANINGS":
        return short_meanings()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


NLL_COLOURS: Final = "NLL: green likely → red unlikely"
RELEVANCE_COLOURS: Final = "relevance: green high → red low, dim: no reason"
"""What the token view's colours mean (its status line says the one shown)."""


Mark = MarkSpec
"""A mark a screen draws: the mark, what it means, where it appears (and, for a legend line,
what it says of it)."""

CORE_MARKS: Final[tuple[Mark, ...]] = (
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
    Mark("≈", "an estimated total", "monitor"),
    Mark("reversed", "the token under the cursor", "token view"),
    Mark("bold underlined", "the tokens of the selected reason", "token view"),
    Mark("green → red", f"token colours, {NLL_COLOURS}; {RELEVANCE_COLOURS}", "token view"),
)
"""The workbench's own marks, with their meaning (the methods' come after ``C=``)."""

CORE_SHORT: Final = {"U": "UNCLEAR", "!": "contradiction", "★": "bookmarked", "—": "undefined"}


def marks() -> tuple[Mark, ...]:
    """Every mark on the screens: the workbench's, the methods' (``Method.marks``, registry
    order; one mark two methods declare once, their places joined) after ``C=``."""
    own: dict[str, Mark] = {}
    for method in methods().values():
        for mark in method.marks:
            known = own.get(mark.mark)
            where = f"{known.where}, {mark.where}" if known else mark.where
            own[mark.mark] = replace(known or mark, where=where)
    at = next(i for i, mark in enumerate(CORE_MARKS) if mark.mark == "C=") + 1
    return (*CORE_MARKS[:at], *own.values(), *CORE_MARKS[at:])


def short_meanings() -> dict[str, str]:
    """The marks' meanings as a legend line says them (the help says them in full)."""
    return CORE_SHORT | {mark.mark: mark.short for mark in marks() if mark.short}


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
    short, by_name = short_meanings(), {mark.mark: mark for mark in marks()}
    return " · ".join(f"{name}: {short.get(name) or by_name[name].meaning}" for name in names)


def definitions_markdown(specs: Sequence[MetricSpec] | None = None) -> str:
    """The metrics (``specs``, each its ``line()`` with the label bold; None: the default
    ones) and the marks as Markdown (the ``?`` help shows it)."""
    lines = ["## What the numbers mean", ""]
    lines += [
        f"- **{m.label}**{m.line().removeprefix(m.label)}."
        for m in (metric_definitions() if specs is None else specs)
    ]
    lines += ["", "## Marks", "", "| mark | means | where |", "|---|---|---|"]
    lines += [f"| `{mark.mark}` | {mark.meaning} | {mark.where} |" for mark in marks()]
    return "\n".join(lines)
