"""Each attribution method's word scores of one instance as a heat line under the text's
words, beside the words the model named when asked (prompted) and the annotators' HARD
rationale (``docs/methods/rationales.md``, attribution): where the model's gradients and its
own words disagree shows at a glance. Pure: lines of rich Text from the data, a width and the
theme's :class:`~haf_tui.tui.widgets.text_layout.Palette`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from rich.style import Style
from rich.text import Text

from haf_tui.methods.rationales.tui.data import RationaleData
from haf_tui.tui.widgets.text_layout import BOLD, DIM, Palette, prose, styled, undefined

HEAT_SOURCES: Final = (
    ("occlusion", "occlusion"),
    ("attention", "attention"),
    ("saliency", "saliency"),
    ("input_x_gradient", "input×grad"),
)
"""The attribution sources drawn, in order, with their labels."""
LABEL_WIDTH: Final = 12


def _label(name: str) -> Text:
    return Text(f"{name + ':':<{LABEL_WIDTH}}", DIM)


def _words(
    tokens: Sequence[str], styles: Sequence[Style], marked: Sequence[int] | None = None
) -> list[Text]:
    """The words, each in its style; a marked one (its top-k) underlined."""
    out: list[Text] = []
    for i, token in enumerate(tokens):
        style = styles[i] if i < len(styles) else Style()
        if marked is not None and i < len(marked) and marked[i]:
            style += Style(underline=True)
        out.append(Text(token, style))
    return out


def _line(label: str, words: list[Text], width: int) -> list[Text]:
    """A label then the words, wrapped under the label's width."""
    lines: list[Text] = []
    current = _label(label)
    used = LABEL_WIDTH
    for word in words:
        if used + 1 + len(word) > width and used > LABEL_WIDTH:
            lines.append(current)
            current, used = Text(" " * LABEL_WIDTH), LABEL_WIDTH
        current.append(" ")
        current.append_text(word)
        used += 1 + len(word)
    lines.append(current)
    return lines


def attribution_lines(data: RationaleData, width: int, palette: Palette) -> list[Text]:
    """The heat lines of every attribution source the instance has (none: no lines); the
    prompted words and HARD above them."""
    n = len(data.tokens)
    sources = [(s, name, data.row(s)) for s, name in HEAT_SOURCES]
    drawn = [(s, name, row) for s, name, row in sources if row is not None and row.scores]
    if not drawn or not n:
        return []
    width = max(width, LABEL_WIDTH + 10)
    out = [
        prose(("word scores", BOLD), " per method (heat: stronger = larger; underlined: its top-k)")
    ]
    asked = data.row("prompt_predicted") or data.row("prompt_gold")
    if asked is not None:
        named = [BOLD if i < len(asked.mask) and asked.mask[i] else DIM for i in range(n)]
        out += _line("prompted", _words(data.tokens, named), width)
    if data.gold is not None:
        hard = [BOLD if data.gold.hard[i] else DIM for i in range(min(n, len(data.gold.hard)))]
        out += _line("HUMAN", _words(data.tokens, hard), width)
    for _, name, row in drawn:
        assert row is not None and row.scores is not None
        scores = list(row.scores)
        top = max((abs(v) for v in scores if not undefined(v)), default=0.0)
        styles = [Style() if undefined(v) else palette.heat(v, top) for v in scores]
        out += _line(name, _words(data.tokens, styles, row.mask), width)
    skew = [
        f"{name} {data.metrics[f'rationale_skew_{s}']:.2f}"
        for s, name, _ in drawn
        if not undefined(data.metrics.get(f"rationale_skew_{s}"))
    ]
    if skew:
        out.append(styled(prose("skewness: " + " · ".join(skew)), DIM))
    gap = data.metrics.get("rationale_quant_gap")
    if not undefined(gap):
        out.append(
            styled(prose(f"torch − llama.cpp log p(ŷ): {gap:+.3f} (the quantisation gap)"), DIM)
        )
    return out
