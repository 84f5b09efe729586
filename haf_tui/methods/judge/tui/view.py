"""The judge suite's ratings of one explanation (``docs/methods/judge.md#41-the-item``,
``docs/methods/judge.md#43-constrained-answers``): per criterion the label with
p(label), the label mass (marked "low" below 0.5), E where defined and the probability of each
allowed label; "≠ stance" when Supports names the other label than the stance the explanation argued
for; then the judged item (question, choices, explanation).

The tree's texts (:func:`judge_title`, :func:`criterion_text`) and the view's lines
(:func:`judge_lines`) are pure functions of a :class:`~haf_tui.methods.judge.tui.data.Judgement`, so
they test as plain text; :class:`JudgeView` draws the lines and scrolls them."""

from __future__ import annotations

from rich.text import Text

from haf_tui.methods.judge.core.criteria import SHORT_NAMES
from haf_tui.methods.judge.core.scores import LOW_MASS
from haf_tui.methods.judge.tui.data import NOT_EQUAL, CriterionJudgement, Judgement
from haf_tui.tui.widgets.lines_view import PanelView
from haf_tui.tui.widgets.text_layout import BOLD, DIM, FLAG, cell, fmt, line, prose, styled

JUDGEMENT = "judgement"
"""The stage of a tree node that shows a judgement (its sub-index: which judge run's; no
generation of its own)."""


# ---------------------------------------------------------------- the tree's texts


def judge_title(judgement: Judgement) -> Text:
    """A judge run's node: Supports (≠ stance) and Overall first, then its model, prompt and
    mode: "judge → Supports b ≠ stance, Overall 1 · judge.gguf · verbatim"."""
    run = judgement.run
    text = Text("judge →")
    for rated in (judgement.get("supports"), judgement.get("overall")):
        if rated is not None:
            text.append(f"{',' if len(text) > 7 else ''} {rated.name} {rated.label or '—'}")
            if rated.criterion.id == "supports" and judgement.mismatch:
                text.append(" ")
                text.append(f"{NOT_EQUAL} stance", FLAG)
    text.append(f" · {run.model_file} · {run.prompt}")
    if run.mode != "constrained":
        text.append(f" · {run.mode}")
    return text


def criterion_text(rated: CriterionJudgement, judgement: Judgement) -> Text:
    """A criterion's leaf: "Overall 1  p 0.80  mass 1.00  E 1.50" (the mass marked "low"
    below 0.5; Supports ≠ stance marked)."""
    if rated.label is None:
        reason = "failed to parse" if rated.failed else "not rated"
        return Text(f"{rated.name} — {reason}", DIM)
    text = Text(f"{rated.name} {rated.label}")
    if rated.p is not None:
        text.append(f"  p {fmt(rated.p)}")
    if rated.mass is not None:
        text.append(f"  mass {fmt(rated.mass)}")
        if rated.low_mass:
            text.append(" ")
            text.append("low", FLAG)
    if rated.expected is not None:
        text.append(f"  E {fmt(rated.expected)}")
    if rated.criterion.id == "supports" and judgement.mismatch:
        text.append("  ")
        text.append(f"{NOT_EQUAL} stance {judgement.stance or ''}".rstrip(), FLAG)
    return text


# ---------------------------------------------------------------- the view's lines

NAME_WIDTH = max(len(name) for name in SHORT_NAMES.values())
"""The widest short criterion name ("Well-written")."""


def _row(rated: CriterionJudgement, judgement: Judgement) -> Text:
    name = cell(rated.name, NAME_WIDTH, "left")
    if rated.label is None:
        reason = "failed to parse" if rated.failed else "not rated"
        return line(name, " ", Text(reason, DIM))
    label = cell(rated.label, 10, "left", BOLD)
    parts: list[Text | str] = [name, " ", label, " ", cell(fmt(rated.p), 4), " "]
    mass = cell(fmt(rated.mass), 4)
    parts += [mass, " ", cell("low", 3, "left", FLAG) if rated.low_mass else "   "]
    parts += [" ", cell(fmt(rated.expected), 4), "   "]
    shown = [f"{label} {fmt(p)}" for label, p in rated.probs]
    parts.append(Text(" · ".join(shown), DIM))
    if rated.criterion.id == "supports" and judgement.mismatch:
        parts += ["  ", Text(f"{NOT_EQUAL} stance", FLAG)]
    return line(*parts)


def _head(judgement: Judgement) -> list[Text]:
    run = judgement.run
    head = prose(("judge ", BOLD), (run.model_file, BOLD))
    head.append(f" · prompt {run.prompt} · {run.mode} · run {run.run_id} ({run.status})")
    supports = judgement.get("supports")
    stance = prose(f"stance argued for: {judgement.stance or '—'}")
    if supports is not None and judgement.supports_matches is not None:
        stance.append(f" · Supports {supports.label or '—'} ")
        if judgement.mismatch:
            stance.append(f"{NOT_EQUAL} stance", FLAG)
            stance.append(": the explanation argues for the other label")
        else:
            stance.append("= stance")
    return [head, stance]


def _item(judgement: Judgement) -> list[Text]:
    item = judgement.item
    if item is None:
        return []
    out = [Text(end=""), Text("judged item", BOLD, end="")]
    out += [prose(part) for part in item.question.splitlines()]
    out += [prose(f"{chr(ord('a') + i)}) {choice}") for i, choice in enumerate(item.choices)]
    out.append(Text("EXPLANATION:", DIM, end=""))
    out += [prose(part) for part in item.explanation.splitlines()]
    return out


def judge_lines(judgement: Judgement) -> list[Text]:
    """Everything the view shows of one judgement (table lines are never wrapped)."""
    header: list[Text | str] = [
        cell("criterion", NAME_WIDTH, "left"), " ", cell("label", 10, "left"), " ",
        cell("p", 4), " ", cell("mass", 4), "     ", cell("E", 4), "   ", "p of each label",
    ]  # fmt: skip
    rows = [_row(rated, judgement) for rated in judgement.criteria]
    if not rows:
        rows = [Text("no criterion rated", DIM, end="")]
    legend = styled(
        line(
            f"p: p(label) among the allowed labels · mass < {LOW_MASS}: low "
            f"· E: Σ p·code · {NOT_EQUAL} stance: Supports names the other label"
        ),
        DIM,
    )
    return [*_head(judgement), Text(end=""), styled(line(*header), BOLD), *rows, legend,
            *_item(judgement)]  # fmt: skip


# ---------------------------------------------------------------- the widget


class JudgeView(PanelView):
    """One judgement of an instance; the screen hands it over (``show``)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.judgement: Judgement | None = None
        self.border_title = "judge"

    def show(self, judgement: Judgement | None) -> None:
        """Show a judgement (None: none), from the top."""
        self.judgement = judgement
        self.rebuild()
        self.scroll_to(y=0, animate=False, immediate=True)

    def pieces(self, width: int) -> list[Text]:
        """What the view shows."""
        if self.judgement is None:
            return [Text("no judgement", DIM)]
        return judge_lines(self.judgement)

    def plain(self) -> str:
        """What the view shows, as plain text (one line per piece)."""
        return "\n".join(text.plain for text in self.pieces(max(self.text_width, 20)))
