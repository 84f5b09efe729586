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
