"""``?``: the keys of the screen it was opened on first, then every key of the workbench (the
vocabulary of :mod:`haf_tui.tui.keys`), then what the numbers and marks mean
(:mod:`haf_tui.tui.definitions`)."""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Markdown

from haf_tui.methods.declare import MetricSpec
from haf_tui.tui import definitions
from haf_tui.tui.definitions import definitions_markdown
from haf_tui.tui.keys import markdown_table, shown_key, verb_row
from haf_tui.tui.screens.base import HafScreen

INTRO = """\
# haf-tui help

`escape` or `?` closes this help. Every action is also in the command palette (`ctrl+p`):
type a few letters of it. One key means one thing on every screen; shifted letters are for
heavy or destructive verbs, and destructive ones ask first.
"""

MORE_NUMBERS = """\
## Other numbers

Defined in `docs/methods/haf.md#4-confidence-tokensar`, `docs/methods/haf.md#5-metrics`
and `docs/methods/classify.md#2-label-scores`; R: the JUSTIFY reasons, g: similarity,
h = 1 − g.

- **C, C(Y)**: TokenSAR confidence of a span, exp(−relevance-weighted NLL of its tokens); a
  token's **relevance** R_i = 1 − g(span, span without the token), its **weight** R_i / Σ R
  (the token view shows both for the token under the cursor).
- **I_S / I_N**: the informativeness terms of RS / RN (Table 4), from UPHOLD-STANCE's new
  reasons; **S(Y) / N(Y)**: NO 1.0, MAYBE 0.5, YES or UNCLEAR 0.1 (RS); YES 1.0, MAYBE 0.5, NO
  or UNCLEAR 0.1 (RN).
- **p(toxic)**: classify suite, p(y = toxic | x) from the label spellings' teacher-forced
  logprobs; **label mass**: the probability of answering with a label at all (below 0.5: the
  model wanted to say something else).
"""

MORE_TEXT = """\
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
- **align F1**: token F1 between the prompted and the occlusion rationale of the same k;
  **annotator IoU**: mean |A∩B| / |A∪B| over pairs of annotators.

Judge (`docs/methods/judge.md`, metrics key `8`; `haf report --report judge`, `judge-vs-haf`;
`haf judge sensitivity`, `haf judge meta`): an LLM rates each explanation on ACORN's eight criteria;
a label's code is its place on the criterion's scale (Overall 1–5, New information 0–3, no 0 /
yes 1, Factual N/A −1, Supports a 0 / b 1 / none −1).

- **label**: the criterion's answer; constrained mode: the most probable label of its slot.
- **p(label)**: the label's probability renormalised over the criterion's allowed labels,
  from their teacher-forced logprobs (constrained mode).
- **mass**: Σ exp lp over the allowed labels: how much the model wanted to answer with a label
  at all; **label-mass warning**: mass < 0.5 (the format forced an answer; trust it less).
- **E**: expected score Σ p(l)·code(l), for Overall, New information and the yes/no criteria
  (there E = p(yes)); Supports and Factual are nominal: no E.
- **≠ stance**: Supports names the other answer than the stance the explanation argued for
  (toxic → a, non-toxic → b): the explanation does not reflect the decision.
- **normalised mean**: mean over instances of (code − min)/(max − min), 0–1, high is good;
  Unnecessary information inverted (1 − x), Factual N/A left out; n = instances with a label.
- **mismatch rate**: % of the explanations with a toxic / non-toxic stance whose Supports is
  ≠ stance (maybe stances counted apart).
- **% failed** (free mode): answers where a criterion's line gave no readable label (left out
  of that criterion's mean).
- **sensitivity cell**: % of (original, edited) explanation pairs whose label for the
  criterion changed; ◆ marks the criterion the edit targets (should change: high is good),
  elsewhere it should stay (low is good).
- **ρ**: Spearman's rank correlation (Pearson's r of average ranks; −1…1) over the n pairs
  with both values: judge Overall or normalised mean against SoS / DiS; in the meta tables
  the judge against the human majority vote. **α**: Krippendorff's agreement of the raters
  (Table 4.1, with the LLM replacing one); **MAE / NMAE / bias**: Table 4.5.

A run started here is executed by this app: leaving the monitor keeps it going, quitting the
app cancels it and leaves it resumable (`R` here, or `haf run --resume RUN_ID`).

Runs come from the DuckDB file (`--db`, `$HAF_DB` or `$HAF_HOME/haf.duckdb`), opened only
while the app reads it, so `haf run` can write it meanwhile. While another process writes to it,
the app reads a snapshot: the runs list reads again every few seconds, `r` at once.
"""


def _own_actions(widget_class: type) -> set[str]:
    """The actions that haf-tui's own classes of a widget bind (not those it inherits from
    a Textual widget)."""
    return {
        binding.action
        for cls in widget_class.__mro__
        if cls.__module__.startswith("haf_tui.")
        for binding in Binding.make_bindings(cls.__dict__.get("BINDINGS", []))
    }


def screen_keys_markdown(screen: Screen[Any]) -> str:
    """The keys active on ``screen`` (its own, then the app's, then its focused widget's) as a
    table: key, its verb (the vocabulary's) and what it does here."""
    title = type(screen).__name__.removesuffix("Screen") or "this screen"
    declared: dict[str, int] = {}  # the screen's actions in the order its classes bind them
    for cls in type(screen).__mro__:
        for binding in Binding.make_bindings(cls.__dict__.get("BINDINGS", [])):
            declared.setdefault(binding.action, len(declared))
    rows: dict[tuple[int, int, int, str], tuple[list[str], str, str]] = {}
    for key, active in screen.active_bindings.items():
        binding = active.binding
        row = verb_row(key, type(active.node).__name__)
        if row is None or not binding.description:
            continue
        rank = 0 if active.node is screen else 1 if active.node is screen.app else 2
        if rank == 2 and binding.action not in _own_actions(type(active.node)):
            continue  # (a Textual widget's own navigation keys)
        place = declared.get(binding.action, len(declared)) if rank == 0 else 0
        keys, _, _ = rows.setdefault(
            (rank, place, id(active.node), binding.action), ([], row.verb, binding.description)
        )
        keys.append(f"`{shown_key(key)}`")
    lines = [f"## Keys here: {title}", "", "| key | verb | here |", "|---|---|---|"]
    lines += [
        f"| {' '.join(keys)} | {verb} | {here} |"
        for _, (keys, verb, here) in sorted(rows.items(), key=lambda item: item[0][:2])
    ]
    return "\n".join(lines)


def help_markdown(screen: Screen[Any] | None = None) -> str:
    """The whole help: ``screen``'s keys first, the definitions, every key, the rest."""
    parts = [INTRO]
    if screen is not None:
        parts.append(screen_keys_markdown(screen))
        own = getattr(screen, "definitions_markdown", None)  # (a screen's own metrics)
        if callable(own):
            parts.append(own())
    shown = screen.shown_metrics() if isinstance(screen, HafScreen) else ()
    parts.append(definitions_markdown(shown or None))
    specs: list[MetricSpec] = list(getattr(screen, "metric_specs", ()))
    known = definitions.METRICS_BY_LABEL  # (the installed methods', read now)
    if any(spec.label not in known for spec in specs):
        parts.append(run_metrics_markdown(specs))
    parts += ["## Every key", markdown_table(), MORE_NUMBERS, MORE_TEXT]
    return "\n\n".join(parts)


def run_metrics_markdown(specs: list[MetricSpec]) -> str:
    """The metrics of the run a screen shows (its methods' declarations) that the
    definitions above do not give, one line each."""
    known = definitions.METRICS_BY_LABEL
    lines = ["## This run's metrics", ""]
    lines += [f"- {s.line()}" for s in specs if s.label not in known]
    return "\n".join(lines)


class HelpScreen(ModalScreen[None]):
    """This screen's keys, every key, and what the numbers mean."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,question_mark", "dismiss", "Close")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 80%; max-width: 100; height: 80%;
        border: round $accent; background: $surface; }
    """

    def __init__(self, screen: Screen[Any] | None = None) -> None:
        super().__init__()
        self.text = help_markdown(screen)
        """The help shown (the keys of ``screen``, the screen it was opened on, first)."""

    def compose(self) -> ComposeResult:
        """The help text in a scrollable box."""
        with VerticalScroll():
            yield Markdown(self.text)
