"""Each attribution method's word scores of one instance as a heat line under the text's
words, beside the words the model named when asked (prompted) and the annotators' HARD
rationale (``docs/methods/rationales.md``, attribution): where the model's gradients and its
own words disagree shows at a glance. Under each heat line its values, one under each word
(as Inseq's heat maps show numbers), to as many decimals as the line's largest needs; the heat
diverges: a positive value warm, a negative one cool, stronger the larger ``|value|``. Pure:
lines of rich Text from the data, a width and the theme's
:class:`~haf_tui.tui.widgets.text_layout.Palette`."""

from __future__ import annotations

import math
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


def value_texts(scores: Sequence[float]) -> list[str]:
    """Each score as shown under its word: with its sign when the line has a negative one,
    to as many decimals as give its largest two figures (at least 2, at most 6), "—" when
    undefined. Whole, never cut: a column is as wide as its word or its value."""
    defined = [abs(v) for v in scores if not undefined(v)]
    top = max(defined, default=0.0)
    decimals = 2 if top <= 0 or top >= 0.1 else min(6, 1 - math.floor(math.log10(top)))
    signed = any(v < 0 for v in scores if not undefined(v))
    return [
        "—" if undefined(v) else f"{v:+.{decimals}f}" if signed else f"{v:.{decimals}f}"
        for v in scores
    ]


def _valued_line(label: str, words: list[Text], values: Sequence[str], width: int) -> list[Text]:
    """A label then the words, each with its value on the line under it (a column as wide as
    the wider of the two), wrapped in pairs of lines under the label's width."""
    lines: list[Text] = []
    top, bottom = _label(label), Text(" " * LABEL_WIDTH)
    used = LABEL_WIDTH
    for word, value in zip(words, values, strict=False):
        column = max(word.cell_len, len(value))
        if used + 1 + column > width and used > LABEL_WIDTH:
            lines += [top, bottom]
            top, bottom = Text(" " * LABEL_WIDTH), Text(" " * LABEL_WIDTH)
            used = LABEL_WIDTH
        top.append(" ")
        top.append_text(word)
        top.append(" " * (column - word.cell_len))
        bottom.append(" " + value.ljust(column), DIM)
        used += 1 + column
    return [*lines, top, bottom]


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


def _legend(palette: Palette) -> Text:
    """What the heat lines show: the values under the words, and the diverging heat with its
    sign (a swatch of each hue)."""
    legend = prose(("word scores", BOLD), " per method, each word's value under it; heat: ")
    legend.append(" + ", palette.heat(1.0, 1.0))
    legend.append(" positive (warm), ")
    legend.append(" − ", palette.heat(-1.0, 1.0))
    legend.append(
        " negative (cool), none at 0, stronger the larger |value| on its line; underlined: "
        "its top-k"
    )
    return legend


def attribution_lines(data: RationaleData, width: int, palette: Palette) -> list[Text]:
    """The heat lines of every attribution source the instance has (none: no lines); the
    prompted words and HARD above them."""
    n = len(data.tokens)
    sources = [(s, name, data.row(s)) for s, name in HEAT_SOURCES]
    drawn = [(s, name, row) for s, name, row in sources if row is not None and row.scores]
    if not drawn or not n:
        return []
    width = max(width, LABEL_WIDTH + 10)
    out = [_legend(palette)]
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
        styles = [Style() if undefined(v) or v == 0 else palette.heat(v, top) for v in scores]
        values = (value_texts(scores) + ["—"] * n)[:n]
        out += _valued_line(name, _words(data.tokens, styles, row.mask), values, width)
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
