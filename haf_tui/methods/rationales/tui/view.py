"""The rationales of one instance (``docs/methods/rationales.md``), side by side per word: which
words the model named when asked (the prompted rationale), how much leaving each out moves its
log-odds (occlusion a_i, a heat colour: warm > 0, cool ≤ 0) and what share of the annotators marked
it (SOFT); the words it named that are not in the text; then per rationale source the faithfulness
numbers with the texts actually scored, plausibility and complexity.

:func:`rationale_lines` is a pure function of the data, a width and a :class:`Palette` (the
theme's colours), so it can be tested as plain text; :class:`RationaleView` draws its lines
and scrolls them.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from typing import Final

from rich.style import Style
from rich.text import Text

from haf_tui.methods.declare import LOW_MASS
from haf_tui.methods.rationales.core.parsing import parse_rationale
from haf_tui.methods.rationales.suite.records import RationaleRecord
from haf_tui.methods.rationales.tui.attribution_lines import attribution_lines
from haf_tui.methods.rationales.tui.data import RationaleData
from haf_tui.methods.rationales.tui.source_tables import (
    FAITHFULNESS_ORDER,
    NAMES,
    complexity_table,
    faithfulness_table,
    plausibility_table,
)
from haf_tui.tui.widgets.lines_view import PanelView
from haf_tui.tui.widgets.text_layout import (
    BOLD,
    DEFAULT_PALETTE,
    DIM,
    GAP,
    Palette,
    beside,
    cell,
    fit,
    fmt,
    line,
    prose,
    styled,
    undefined,
    width_of,
)

WORD_WIDTH = 18
"""The widest a word is shown in the word table (longer ones end in "…")."""
BLOCK_ROWS = 6
"""The fewest words a block of the word table holds when several are side by side."""
TEXT_LINES = 3
"""The most lines a scored text takes (a longer one ends in "…")."""


# ---------------------------------------------------------------- the view's lines


def rationale_lines(
    data: RationaleData, width: int, palette: Palette = DEFAULT_PALETTE
) -> list[Text]:
    """Everything the view shows of an instance, fitted to ``width`` cells: a table line is
    never wrapped, a sentence may be."""
    if not data.rows:
        return [prose(f"{data.instance_id}: no rationales stored (the suite did not finish it)")]
    width = max(width, 20)
    out = [*_summary(data), Text(end="")]
    out += _word_table(data, width, palette)
    out += _named(data)
    out.append(Text(end=""))
    heat = attribution_lines(data, width, palette)
    out += [*heat, Text(end="")] if heat else []
    faithfulness = faithfulness_table(data)
    others = plausibility_table(data)
    complexity = complexity_table(data)
    if others and complexity:
        others = [*others, Text(end=""), *complexity]
    elif complexity:
        others = complexity
    if others and width_of(faithfulness) + GAP + width_of(others) <= width:
        out += beside(faithfulness, others)
    else:
        out += [*faithfulness, Text(end=""), *others]
    out.append(Text(end=""))
    out += _scored_texts(data, width)
    return out


AGREEMENTS: Final = (
    ("attention", "attention"),
    ("saliency", "saliency"),
    ("input_x_gradient", "input×gradient"),
)
"""The attribution sources whose agreement with the prompted rationale the summary line shows
after occlusion's (``rationale_alignment_f1_<source>``), with their names."""


def _summary(data: RationaleData) -> list[Text]:
    metrics = data.metrics
    head = prose((data.instance_id, BOLD), "  ŷ ", (data.predicted or "—", BOLD))
    head.append(f" · p(ŷ|x) {fmt(metrics.get('rationale_p_predicted'))}")
    mass = metrics.get("rationale_label_mass")
    low = not undefined(mass) and mass is not None and mass < LOW_MASS
    head.append(f" · label mass {fmt(mass)}{' low' if low else ''}")
    if data.gold is not None:
        head.append(f" · {len(data.gold.masks)} annotators")
        agreement = metrics.get("rationale_annotator_iou")
        if not undefined(agreement):
            head.append(f" (IoU {fmt(agreement)})")
    else:
        head.append(f" · gold: {data.gold_problem or 'none'}", DIM)
    agreements = [
        (name, fmt(value))
        for name, value in (
            ("occlusion", metrics.get("rationale_alignment_f1")),
            *((title, metrics.get(f"rationale_alignment_f1_{m}")) for m, title in AGREEMENTS),
        )
        if not undefined(value)
    ]
    if agreements:  # each source's own agreement (token F1) with the prompted rationale
        (first, value), *others = agreements
        shown = [f"{first} F1 {value}", *(f"{name} {v}" for name, v in others)]
        head.append(f" · prompted vs {' · '.join(shown)}")
    return [head]


def _mask(row: RationaleRecord | None, n: int) -> list[int]:
    mask = list(row.mask) if row is not None else []
    return (mask + [0] * n)[:n]


def _word_table(data: RationaleData, width: int, palette: Palette) -> list[Text]:
    """The words side by side with their marks, as many blocks across as fit."""
    n = len(data.tokens)
    predicted, gold_row = data.row("prompt_predicted"), data.row("prompt_gold")
    asked = predicted or gold_row
    show_gold = data.gold_prompt_differs and predicted is not None
    occlusion = data.row("occlusion")
    scores = list(occlusion.scores or []) if occlusion is not None else []
    top = max((abs(a) for a in scores if not undefined(a)), default=0.0)
    soft = data.gold.soft if data.gold is not None else None
    hard = data.gold.hard if data.gold is not None else None
    marks = _mask(asked, n)
    gold_marks = _mask(gold_row, n) if show_gold else []
    chosen = _mask(occlusion, n)
    index_width = len(str(n))
    word_width = min(WORD_WIDTH, max([4, *(len(t) for t in data.tokens)]))

    legend = prose(("P", BOLD), f": named when asked why {_shown(asked)}")
    if show_gold and gold_row is not None:
        legend.append(" · ")
        legend.append("G", BOLD)
        legend.append(f": asked why {gold_row.label_shown or '—'} (gold)")
    legend.append(" · ")
    legend.append("a_i", BOLD)
    legend.append(": leave-one-out log-odds, warm > 0, cool ≤ 0 · ")
    legend.append("O", BOLD)
    k = occlusion.k if occlusion is not None and occlusion.k is not None else "—"
    legend.append(f": occlusion top-{k} · ")
    legend.append("annot", BOLD)
    if data.gold is not None:
        legend.append(f": share of {len(data.gold.masks)} annotators (bold: HARD)")
    else:
        legend.append(": no annotators' rationale")
    legend = styled(legend, DIM)

    def mark(on: bool) -> Text:
        return Text("●", BOLD) if on else Text("·", DIM)

    header = [cell("#", index_width), Text(" "), cell("word", word_width, "left"), Text(" P")]
    if show_gold:
        header.append(Text(" G"))
    header += [Text(" "), cell("a_i", 7), Text(" O "), cell("annot", 6, "center")]
    rows: list[Text] = []
    for i, token in enumerate(data.tokens):
        word_style = Style(bold=True, underline=True) if marks[i] else Style()
        parts: list[Text | str] = [
            cell(str(i + 1), index_width, style=DIM),
            " ",
            cell(token, word_width, "left", word_style),
            " ",
            mark(bool(marks[i])),
        ]
        if show_gold:
            parts += [" ", mark(bool(gold_marks[i]))]
        if i < len(scores) and not undefined(scores[i]):
            score = scores[i]
            shown = f"{score:+.2f} " if round(score, 2) else " 0.00 "
            parts += [" ", cell(shown, 7, style=palette.heat(score, top), fill=True)]
        else:
            parts += [" ", cell("— ", 7, style=DIM)]
        parts += [" ", mark(bool(chosen[i])) if occlusion is not None else Text(" "), " "]
        if soft is not None and i < len(soft):
            in_hard = hard is not None and bool(hard[i])
            style = palette.shade(soft[i]) + (BOLD if in_hard else Style())
            parts.append(cell(f"{soft[i]:.2f}", 6, "center", style, fill=True))
        else:
            parts.append(cell("—", 6, "center", DIM))
        rows.append(line(*parts))
    block_width = max(width_of([line(*header)]), width_of(rows))
    fits = (width + GAP) // (block_width + GAP)
    blocks = max(1, min(fits, math.ceil(n / BLOCK_ROWS)))
    per_block = math.ceil(n / blocks) if n else 0
    columns = [
        [styled(line(*header), BOLD), *rows[b * per_block : (b + 1) * per_block]]
        for b in range(blocks)
    ]
    columns = [c for c in columns if len(c) > 1] or [[styled(line(*header), BOLD)]]
    table_lines = columns[0]
    for column in columns[1:]:
        table_lines = beside(table_lines, column)
    notes = [legend, *_cut_notes(("P", asked), ("G", gold_row if show_gold else None))]
    lengths = {len(r.mask) for r in data.rows if r.mask}
    if lengths - {n}:
        notes.append(prose((f"masks of {sorted(lengths)} tokens for {n} words", "bold")))
    return [*table_lines, *notes]


def _cut_notes(*columns: tuple[str, RationaleRecord | None]) -> list[Text]:
    """A line per marks column whose answer named more of the text's words than k: the
    answer was cut to its first k, and every occurrence of those words is marked."""
    notes = []
    for mark, row in columns:
        if row is None or row.k is None:
            continue
        outside = set(row.out_of_text or ())
        in_text = [word for word in row.words or () if word not in outside]
        if len(in_text) <= row.k:
            continue
        kept = ", ".join(in_text[: row.k])
        note = prose((mark, BOLD), f": the answer named {len(in_text)} of the text's words, ")
        note.append(f"cut to its first k = {row.k} ({kept}); every occurrence of those is ")
        note.append(f"marked ({sum(1 for m in row.mask if m)} words)")
        notes.append(styled(note, DIM))
    return notes


def _shown(row: RationaleRecord | None) -> str:
    return f"{row.label_shown or '—'} (ŷ)" if row is not None else "— (not asked)"


def _named(data: RationaleData) -> list[Text]:
    """The words each prompted rationale named, and those not in the text."""
    out: list[Text] = []
    rows = [data.row("prompt_predicted") or data.row("prompt_gold")]
    if data.gold_prompt_differs and data.row("prompt_predicted") is not None:
        rows.append(data.row("prompt_gold"))
    for row in rows:
        if row is None:
            continue
        missing = list(row.out_of_text or [])
        named = prose(f"asked why {row.label_shown or '—'}: named ")
        for number, word in enumerate(row.words or []):
            named.append(" | " if number else "")
            named.append(word, Style(strike=True, dim=True) if word in missing else BOLD)
        if not row.words:
            named.append("nothing", DIM)
        out.append(named)
        if missing:
            out.append(prose(("  out of text: ", BOLD), ", ".join(missing)))
        else:
            out.append(prose(("  out of text: none", DIM)))
        answer = data.answers.get(_answer_number(data, row))
        if answer is not None:
            out += _parse(answer, data.tokens, row.k)
    return out


ITEM_CHARS = 60
"""The most characters of an answer's item the parse shows (a longer one ends in "…")."""


def _answer_number(data: RationaleData, row: RationaleRecord) -> int:
    """The sub-index of the prompt a prompted row was read from (1: ŷ shown, asked apart)."""
    return 1 if row.source == "prompt_predicted" and 1 in data.answers else 0


def _parse(answer: str, tokens: Sequence[str], k: int | None) -> list[Text]:
    """How the answer was read (docs/methods/rationales.md#34-reading-an-answer): each item kept
    (its words) or dropped (why)."""
    parsed = parse_rationale(answer, tokens, k)
    out = [prose(("  read as:", BOLD), ("" if parsed.items else " nothing", DIM))]
    for item in parsed.items:
        shown = item.text if len(item.text) <= ITEM_CHARS else item.text[: ITEM_CHARS - 1] + "…"
        if item.kept:
            entry = prose("    ✓ ", (shown, BOLD))
            if " ".join(item.words) != shown:
                entry.append(f" → {' '.join(item.words)}", DIM)
            if item.out_of_text:
                entry.append(f" ({', '.join(item.out_of_text)} not in the text)", DIM)
        else:
            entry = prose(("    ✗ ", DIM), (shown, Style(strike=True, dim=True)))
            entry.append(f" — {item.reason}", DIM)
        out.append(entry)
    return out


def _scored_texts(data: RationaleData, width: int) -> list[Text]:
    """The texts each rationale's faithfulness scored: without R (−R) and only R (R)."""
    out = [prose(("texts scored", BOLD), " (−R: without R, R: only R)")]
    entries: list[tuple[str, RationaleRecord]] = []
    for source in FAITHFULNESS_ORDER:
        if source == "random":
            randoms = data.randoms
            if randoms:
                entries.append((f"random #{randoms[0].seed}", randoms[0]))
            continue
        row = data.row(source)
        if row is not None:
            entries.append((NAMES.get(source, source), row))
    name_width = max((len(name) for name, _ in entries), default=0)
    for name, row in entries:
        for tag, text in (("−R", row.text_without), (" R", row.text_only)):
            if text is None:
                continue
            label = f"{name if tag == '−R' else '':<{name_width}} {tag} "
            if not text:
                out.append(line(Text(label, DIM), Text("(empty)", DIM)))
                continue
            room = max(width - len(label), 10)
            wrapped = textwrap.wrap(text, room, max_lines=TEXT_LINES, placeholder=" …")
            for number, part in enumerate(wrapped or [text]):
                lead = label if number == 0 else " " * len(label)
                out.append(line(Text(lead, DIM), fit(part, room)))
    return out


# ---------------------------------------------------------------- the widget


class RationaleView(PanelView):
    """An instance's rationales; the screen hands it the data (``show``) or a line saying
    why there is none yet (``show_message``). Its lines are rebuilt for a new width or
    theme, and drawn as they scroll into view."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.data: RationaleData | None = None
        self.message = ""
        self.border_title = "rationales"

    def on_mount(self) -> None:
        """Rebuild the colours when the theme changes."""
        self.watch(self.app, "theme", lambda _: self.rebuild(), init=False)

    def show(self, data: RationaleData) -> None:
        """Show an instance's rationales (from the top)."""
        changed = self.data is None or self.data.instance_id != data.instance_id
        self.data, self.message = data, ""
        self.rebuild()
        if changed:
            self.scroll_to(y=0, animate=False, immediate=True)

    def show_message(self, message: str) -> None:
        """Show a line instead of rationales (loading, none)."""
        self.data, self.message = None, message
        self.rebuild()
        self.scroll_to(y=0, animate=False, immediate=True)

    def pieces(self, width: int) -> list[Text]:
        """What the view shows at ``width``."""
        if self.data is None:
            return [Text(self.message, DIM)]
        palette = Palette.of(self.app.get_css_variables())
        return rationale_lines(self.data, width, palette)

    def plain(self) -> str:
        """What the view shows, as plain text (one line per piece)."""
        return "\n".join(text.plain for text in self.pieces(max(self.text_width, 20)))
