"""``?``: the keys of every screen."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

HELP_TEXT = """\
# haf-tui keys

Every action is also in the command palette (`ctrl+p`): type a few letters of it.

| key | where | what |
|---|---|---|
| `?` | everywhere | this help |
| `h` | everywhere | back to the runs list |
| `q` | everywhere | quit (a run still going is cancelled and stays resumable) |
| `ctrl+p` | everywhere | command palette |
| `escape` | any screen | back |
| `n` | runs list | new evaluation (the guided wizard) |
| `enter` | runs list | open the run: live progress while it runs, else the explorer |
| `e` / `m` / `s` | runs list | explorer / metric panels / SQL |
| `R` | runs list, monitor | resume an unfinished run here |
| `r` | runs list | refresh (re-reads the database) |
| `ctrl+n` / `ctrl+b` | wizard | next / previous step (each step is checked first) |
| `space` | wizard, models | pick or drop a model (several: one run each) |
| `enter` | wizard, file path | read the file: preview and column mapping |
| `ctrl+s` | wizard, review | start the runs |
| `p` / `space` | monitor | pause before the next generation / go on |
| `c` | monitor | cancel now (the answer in flight is dropped; the run stays resumable) |
| `e` / `m` | monitor | explore / metrics of the run |
| `n` / `p` | explorer | next / previous instance |
| `←` / `→` | explorer | previous / next token of the shown answer |
| `c` / `r` | explorer | colour by NLL or relevance / show the prompt |
| `/` | explorer | search the texts (`escape` back to the list) |
| `s` / `u` / `x` | explorer | stance filter / only UNCLEAR / only contradictions |
| `f` | explorer | metric ranges, e.g. `sos>0.5 rs<=0.3` |
| `o` / `O` | explorer | sort by the next metric / reverse |
| `a` | explorer | clear every filter |
| `1`–`6`, `[` `]` | metrics | Table 1, Table 2, Table 4, Figure 2, distributions, stances |
| `7` | metrics | rationales: P1 Table 4 per run × rationale (prompted, occlusion) + shares |
| `8` | metrics | judge: criteria per judge run, mass warnings, Overall × SoS / DiS, meta |
| `r` / `space` | metrics | pick the runs to compare (space ticks one) |
| `a` / `p` / `d` | metrics | all or no runs / pooling rule / next histogram metric |
| `ctrl+r`, `F5` | SQL | run the query |

## What the numbers mean

Spec `HAF.md` §4–5 and `RATIONALES.md` §4.1; R: the JUSTIFY reasons, g: similarity, h = 1 − g.

- **C, C(Y)**: TokenSAR confidence of a span, exp(−relevance-weighted NLL of its tokens).
- **SoS**: strength of support, mean over R of 0.8·C + 0.2·g(reason, text); high is good.
- **DiS**: diversity of R, Σ h(r_i, r_j)·C_j / (n(n−1)); undefined when n < 2.
- **UII / UEI**: mean over UPHOLD-REASON's new internal / external reasons of
  0.5·C + 0.5·div(reason, R); low is good.
- **RS / RN**: per reason, from UPHOLD-STANCE: sufficiency S(Y)·C(Y)·(1 − I_S) for toxic and
  maybe stances, necessity N(Y)·C(Y)·I_N for non-toxic; **I_S / I_N** their informativeness.
- **p(toxic)**: classify suite, p(y = toxic | x) from the label spellings' teacher-forced
  logprobs; **label mass**: the probability of answering with a label at all (below 0.5: the
  model wanted to say something else).
- **—**: undefined for this instance (the metric panels say why).

Rationales (`RATIONALES.md` §6, metrics key `7`; `haf report --report rationales`): R̂ is a
rationale's words, R the annotators' (HARD: the words at least half of them mark); prompted =
asked of the model, occlusion = the k words whose removal lowers the log-odds of ŷ most (a_i).

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

Judge (`JUDGE.md`, metrics key `8`; `haf report --report judge`, `judge-vs-haf`; `haf judge
sensitivity`, `haf judge meta`): an LLM rates each explanation on ACORN's eight criteria;
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

Runs come from the DuckDB file (`--db`, `$HAF_DB` or `$HAF_HOME/haf.duckdb`). While another
process writes to it, the app reads a snapshot: press `r` to see newer rows.
"""


class HelpScreen(ModalScreen[None]):
    """Keys and what each screen does."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,question_mark,q", "dismiss", "Close")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 80%; max-width: 100; height: 80%;
        border: round $accent; background: $surface; }
    """

    def compose(self) -> ComposeResult:
        """The help text in a scrollable box."""
        with VerticalScroll():
            yield Markdown(HELP_TEXT)
