"""The rationales method's views: its instance metrics with their definitions, the
per-rationale values its reports compute (plausibility, faithfulness, complexity: in its
``rationales`` table, per run) and its panel."""

from __future__ import annotations

import math
from typing import Any, Final

from rich.console import Group, RenderableType
from rich.text import Text

from haf_tui.methods.classify.core.labels import SPELLINGS, label_scores
from haf_tui.methods.declare import (
    LOW_MASS,
    LOW_MASS_SIGN,
    ListColumn,
    MarkSpec,
    MetricSpec,
    NodeInput,
    PanelInput,
    PanelSpec,
)
from haf_tui.methods.rationales.suite.plan import CLASSIFY, PROMPT
from haf_tui.reports import format_number
from haf_tui.reports.panel_tables import report_rows, report_table

GRADIENT_TITLES: Final = (
    ("attention", "att", "Attention"),
    ("saliency", "sal", "Saliency"),
    ("input_x_gradient", "I×G", "Input×Gradient"),
)
"""The rationale_gradient stage's methods: name, short label, title."""

RATIONALE_METRICS: Final[tuple[MetricSpec, ...]] = (
    MetricSpec(
        "rationale_p_predicted",
        "p(ŷ)",
        "p(ŷ | x): the predicted label's share of the label spellings' mass on the full text",
        better=None,
    ),
    MetricSpec(
        "rationale_label_mass",
        "mass",
        "the probability of the four label spellings together on the full text",
    ),
    MetricSpec(
        "rationale_toxic",
        "ŷ toxic",
        "1 when the predicted label ŷ is toxic, else 0",
        value_range="0 or 1",
        better=None,
    ),
    MetricSpec(
        "rationale_has_gold",
        "gold",
        "1 when the annotators marked words (plausibility is scored), else 0",
        value_range="0 or 1",
        better=None,
    ),
    MetricSpec(
        "rationale_random_seeds",
        "RANDOM n",
        "RANDOM masks asked on the instance: every seed, or with a tolerance (adaptive, an "
        "adaptation of P2's 100) until its comp and flip means are tight enough",
        value_range="1–random_seeds",
        better=None,
        undefined_when="undefined without a non-empty gold (no RANDOM baseline)",
    ),
    MetricSpec(
        "rationale_annotator_iou",
        "ann IoU",
        "agreement of the annotators' masks: mean pairwise IoU",
    ),
    MetricSpec(
        "rationale_alignment_f1",
        "agree occ",
        "token F1 between the prompted rationale and the occlusion rationale "
        "(docs/methods/rationales.md#64-agreement)",
        undefined_when="undefined for the unbound strategy or an empty occlusion rationale",
    ),
    *(
        MetricSpec(
            f"rationale_alignment_f1_{method}",
            f"agree {short}",
            f"token F1 between the prompted rationale and the {title} rationale "
            "(docs/methods/rationales.md#64-agreement)",
            undefined_when="undefined for the unbound strategy or without the attribution",
        )
        for method, short, title in GRADIENT_TITLES
    ),
    *(
        MetricSpec(
            f"rationale_skew_{method}",
            f"skew {short}",
            f"Fisher–Pearson skewness of the {title} word scores (P2 Figure 4)",
            value_range="any",
            better=None,
            undefined_when="undefined for fewer than 3 words or equal scores",
        )
        for method, short, title in (("occlusion", "occ", "occlusion"), *GRADIENT_TITLES)
    ),
    MetricSpec(
        "rationale_quant_gap",
        "quant gap",
        "torch's log-probability of ŷ's first spelling (the GGUF dequantised) minus "
        "llama.cpp's: the quantisation gap",
        value_range="any",
        better=None,
        undefined_when="undefined without the gradient stage",
    ),
)

RATIONALE_TABLE_METRICS: Final[tuple[MetricSpec, ...]] = (
    MetricSpec(
        "rationale_iou_f1",
        "IOU",
        "IoU-F1 of spans: a predicted span matches a gold one at IoU ≥ 0.5; F1 of the mean "
        "precision and recall over the instances with a gold",
        per="run",
    ),
    MetricSpec(
        "rationale_token_f1",
        "TOK",
        "token F1 of the rationale's words against the annotators' (macro over instances)",
        per="run",
    ),
    MetricSpec(
        "rationale_comprehensiveness",
        "COMP",
        "comprehensiveness: p(ŷ | x) − p(ŷ | x without R̂); higher = more faithful",
        value_range="−1–1",
        per="run",
    ),
    MetricSpec(
        "rationale_sufficiency",
        "SUFF",
        "sufficiency: p(ŷ | x) − p(ŷ | only R̂); lower is better (may be < 0)",
        value_range="−1–1",
        better="lower",
        per="run",
    ),
    MetricSpec(
        "rationale_auprc",
        "AUPRC",
        "area under the precision-recall curve of the word scores against the gold words",
        per="run",
    ),
    MetricSpec(
        "rationale_entropy",
        "CPX H",
        "complexity: entropy −Σ q ln q of the normalised word scores (low = concentrated)",
        value_range="0–ln n",
        better=None,
        per="run",
        undefined_when="undefined when the scores sum to 0",
    ),
    MetricSpec(
        "rationale_gini",
        "SPR G",
        "sparsity: the Gini coefficient of the word scores (0 uniform)",
        better=None,
        per="run",
        undefined_when="undefined when the scores sum to 0",
    ),
)
"""The values of the ``rationales`` table (P1 Table 4), per run × rationale: the panel's legend."""

RATIONALE_NOTES: Final = (
    "prompted: IOU, TOK and AUPRC from the answer with the gold label shown; COMP, SUFF, "
    "% flip, CPX and SPR from the one with ŷ shown. occlusion: top-k by leave-one-out log-odds",
    "IOU: IoU-F1 of spans (IoU ≥ 0.5) · TOK: token F1 (macro; micro beside) · COMP / SUFF: "
    "p(ŷ | x) − p(ŷ | x without R / only R) · CPX H: entropy · SPR G: Gini (? defines each)",
    "n: instances; with gold: those scored for plausibility (% no gold: the rest); CPX n: "
    "defined (Σ scores > 0); % empty / out-of-text / ≠ k: of the prompted answers",
    "agree F1: token F1 of the row's rationale against the prompted one (agree n instances); "
    "align F1 ×100: P2's alignment, against the annotators",
    "more: haf report --report rationale-plausibility (random baseline), rationale-faithfulness "
    "(HUMAN, RANDOM, EVERYTHING), rationale-complexity",
)
NO_RATIONALES: Final = (
    "no run holds the rationales suite: start one with `haf run --suites rationales` "
    "(or tick the suite in the wizard's settings); this panel then shows its IOU, TOK, COMP, "
    "SUFF, AUPRC, CPX and SPR"
)


def rationales_panel(panel: PanelInput) -> RenderableType:
    """The rationales suite's P1 Table 4 row per chosen run × rationale (prompted, occlusion),
    with the shares of empty answers, out-of-text words, low label mass and no gold; a line
    naming the chosen runs without the suite."""
    result = panel.reports["rationales"]
    with_suite = [run for run in panel.runs if report_rows(result, [run.run_id])]
    if not result.rows:
        return Text(NO_RATIONALES, style="italic")
    if not with_suite:
        return Text(
            "none of the chosen runs holds the rationales suite: press r (or space) and pick "
            "one of the runs that do",
            style="italic",
        )
    notes = list(RATIONALE_NOTES)
    without = [run.label for run in panel.runs if run not in with_suite]
    if without:
        notes.append(f"without the rationales suite (not shown): {', '.join(without)}")
    table = report_table(result, with_suite, width=panel.width, notes=notes)
    attribution = panel.reports.get("rationale-attribution")
    if attribution is None or not report_rows(attribution, [run.run_id for run in with_suite]):
        return table
    title = Text("prompting vs attribution (P2 Table 2, Tables 4/5, Figure 4)", style="bold")
    p2 = report_table(attribution, with_suite, width=panel.width, notes=())
    return Group(table, Text(""), title, p2)


RATIONALE_PANELS: Final[tuple[PanelSpec, ...]] = (
    PanelSpec(
        "rationales",
        "Rationales",
        ("rationales",),
        tuple(m.name for m in RATIONALE_TABLE_METRICS),
        rationales_panel,
        also_reads=("rationale-attribution",),
    ),
)

RATIONALE_COLUMNS: Final[tuple[ListColumn, ...]] = (
    ListColumn("rationale_p_predicted", "p(ŷ)", width=6, mass="rationale_label_mass"),
    ListColumn("rationale_alignment_f1", "agree", aliases=("align",)),
)


def _log(probability: Any) -> float:
    return math.log(probability) if probability else -math.inf


def rationales_node(node: NodeInput) -> list[str]:
    """The explorer's rationales node: ŷ and p(toxic) on the full text (marked ° on a label
    mass below 0.5: the model wanted to say something else), then one line per
    rationale prompt answered (in the order of ``node.generations``); none when the label
    spellings were not scored."""
    spellings = {
        int(g["sub_index"]): g for g in node.generations
        if g["stage"] == CLASSIFY and 0 <= int(g["sub_index"]) < len(SPELLINGS)
    }  # fmt: skip
    if not spellings:
        return []
    logprobs = {SPELLINGS[sub][0]: _log(g["decision_confidence"]) for sub, g in spellings.items()}
    try:
        scores = label_scores(logprobs)
        low = LOW_MASS_SIGN if scores.label_mass < LOW_MASS else ""  # (° defined in the legend)
        p_toxic = format_number(scores.p_toxic, 2)
        title = f"rationales → {scores.predicted} (p(toxic) {p_toxic}{low})"
    except ValueError:
        title = "rationales → incomplete"
    asked = [
        f"asked why {g['decision'] or '—'}: the answer"
        for g in node.generations
        if g["stage"] == PROMPT
    ]
    return [title, *asked]


RATIONALE_HELP: Final = """\
Rationales (`docs/methods/rationales.md#6-metrics`, metrics key `7`; `haf report --report
rationales`): R̂ is a rationale's words, R the annotators' (HARD: the words at least half of
them mark); prompted = asked of the model, occlusion = the k words whose removal lowers the
log-odds of ŷ most (a_i).

- **IOU (IoU-F1)**: spans are runs of marked words; a predicted span matches when its IoU with
  a gold span is ≥ 0.5; F1 of the mean precision (matches / predicted spans) and the mean
  recall (matches / gold spans) over the instances with a gold.
- **TOK (token F1)**: 2·P·Rc/(P+Rc), P = |R̂∩R|/|R̂|, Rc = |R̂∩R|/|R|; mean over instances
  (macro); micro = 2·ΣTP / (Σ|R̂| + Σ|R|); ×100 it is P2's alignment F1.
- **AUPRC / soft AUPRC**: area under the precision-recall curve of the word scores (a_i, or
  the 0/1 mask) against HARD / against SOFT (the share of annotators marking each word).
- **COMP**: p(ŷ | x) − p(ŷ | x without R̂), higher = more faithful; **SUFF**: p(ŷ | x) −
  p(ŷ | only R̂), lower = better (may be < 0).
- **% flip**: instances whose prediction changes when R̂ is removed; baselines HUMAN (R),
  RANDOM (|R| random words, mean ± sd over seeds), EVERYTHING (every word).
- **CPX H**: entropy −Σ q ln q of the scores q_i = v_i / Σv (low = concentrated; H / ln n
  normalised); **SPR G**: their Gini (0 uniform; 1 − |R̂|/n for a mask); undefined when Σv = 0.
- **% mass < 0.5**: instances whose label mass is below 0.5; **% no gold**: instances left out
  of plausibility (no or an empty gold rationale); **% empty / out-of-text / ≠ k**: prompted
  answers naming no word of the text / a word not in it / not k words of it.
- **agree F1** (the `rationales` report; per instance **agree occ / att / sal / I×G**): token
  F1 between the row's rationale (occlusion, attention, saliency, input×gradient) and the
  prompted one of the same k, each row its own; not **align F1 ×100**, P2's alignment: 100 ·
  token F1 against the annotators;
  **annotator IoU**: mean |A∩B| / |A∪B| over pairs of annotators.
"""
"""What the ``?`` help says of its numbers."""

RATIONALE_MARKS: Final = (
    MarkSpec("●  ·", "a word the rationale marks / does not mark", "rationale view"),
    MarkSpec(
        "low",
        "label mass below 0.5: the format forced the answer",
        "rationales node and view",
        "mass < 0.5",
    ),
    MarkSpec(
        LOW_MASS_SIGN,
        "after a probability: its label mass is below 0.5, the model wanted to say something else",
        "explorer list, rationales node",
        "p on a label mass < 0.5",
    ),
)
"""The marks its view draws."""
