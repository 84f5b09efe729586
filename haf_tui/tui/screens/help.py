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
from haf_tui.methods.registry import methods
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
and each method's page; R: the JUSTIFY reasons, g: similarity, h = 1 − g.

- **C, C(Y)**: TokenSAR confidence of a span, exp(−relevance-weighted NLL of its tokens); a
  token's **relevance** R_i = 1 − g(span, span without the token), its **weight** R_i / Σ R
  (the token view shows both for the token under the cursor).
- **I_S / I_N**: the informativeness terms of RS / RN (Table 4), from UPHOLD-STANCE's new
  reasons; **S(Y) / N(Y)**: NO 1.0, MAYBE 0.5, YES or UNCLEAR 0.1 (RS); YES 1.0, MAYBE 0.5, NO
  or UNCLEAR 0.1 (RN).
"""

MORE_TEXT = """\
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
    numbers = [MORE_NUMBERS, *(method.help for method in methods().values() if method.help)]
    parts += ["## Every key", markdown_table(), *numbers, MORE_TEXT]
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
