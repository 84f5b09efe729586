"""Attribution as researchers read it (issue 43 §4): under each heat line of the rationales
view its values, one under each word (whole, at 80 columns too); a diverging heat for signed
scores (positive warm, negative cool, strength by |value|) with the sign in its legend; and
the P column says when the model's answer was cut to k and every occurrence of a kept word is
marked. Plain lines from hand-made data, and pictures of the view at 80×24 and 200×50."""

from __future__ import annotations

from typing import Any

import pytest
from rich.style import Style
from rich.text import Text
from textual.app import App, ComposeResult
from textual.pilot import Pilot

from haf_tui.methods.rationales.suite.records import RationaleRecord
from haf_tui.methods.rationales.tui.attribution_lines import value_texts
from haf_tui.methods.rationales.tui.data import RationaleData, rationale_data
from haf_tui.methods.rationales.tui.view import RationaleView, rationale_lines
from haf_tui.tui.widgets.text_layout import Palette

WORDS = ["You", "are", "a", "complete", "idiot", "and", "you", "know", "it"]
SCORES = {
    "occlusion": [-1.03, 0.01, 0.10, 0.04, -0.2, 0.0, -0.5, 0.02, 0.003],
    "attention": [0.05, 0.02, 0.01, 0.1, 0.5, 0.01, 0.05, 0.01, 0.02],
    "saliency": [0.0012, 0.0003, 0.0001, 0.0021, 0.0045, 0.0001, 0.0002, 0.0001, 0.0003],
    "input_x_gradient": [-0.3, 0.1, 0.05, 0.2, 1.4, -0.01, 0.0, 0.01, 0.02],
}
LABELS = {
    "occlusion": "occlusion:",
    "attention": "attention:",
    "saliency": "saliency:",
    "input_x_gradient": "input×grad:",
}
ANSWER = "you, are, idiot, complete, know, it, a, and, the"
PALETTE = Palette.of({"background": "#000000", "error": "#ff0000", "primary": "#0000ff"})


def record(source: str, mask: list[int], **values: Any) -> RationaleRecord:
    return RationaleRecord("run", "i", source, mask=mask, size=sum(mask), **values)


def example() -> RationaleData:
    """A text whose answer named 8 of its words (k = 2), and all four attribution sources."""
    extra = {"post_tokens": WORDS, "rationales": [[0, 0, 0, 1, 1, 0, 0, 0, 0]] * 2}
    rows = [
        record(
            "prompt_predicted", [1, 1, 0, 0, 0, 0, 1, 0, 0], label_shown="toxic", k=2,
            words=[w.strip() for w in ANSWER.split(",")], out_of_text=["the"],
        ),
        record("occlusion", [0, 0, 1, 1, 0, 0, 0, 0, 0], k=2, scores=SCORES["occlusion"]),
    ]  # fmt: skip
    rows += [
        record(source, [0, 0, 0, 0, 1, 0, 0, 0, 0], k=1, scores=SCORES[source])
        for source in ("attention", "saliency", "input_x_gradient")
    ]
    return rationale_data("i", " ".join(WORDS), extra, rows, {"rationale_toxic": 1.0}, {1: ANSWER})


def values_under_words(lines: list[Text], label: str) -> list[str]:
    """The value under each word of a heat line (its pairs of lines, wrapped or not)."""
    plain = [t.plain for t in lines]
    row = next(i for i, line in enumerate(plain) if line.startswith(label))
    found: list[str] = []
    while len(found) < len(WORDS):
        top, bottom, cursor = plain[row] + " ", plain[row + 1], len(label)
        while len(found) < len(WORDS):
            at = top.find(" " + WORDS[len(found)] + " ", cursor)
            if at < 0:
                break  # (the rest on the next pair of lines)
            found.append(bottom[at + 1 :].split(" ")[0])
            cursor = at + len(WORDS[len(found) - 1]) + 1
        row += 2
    return found


@pytest.mark.parametrize("width", [80, 60, 200])
def test_each_word_has_its_own_value_under_it_whole_at_any_width(width: int) -> None:
    lines = rationale_lines(example(), width, PALETTE)
    for source, label in LABELS.items():
        expected = value_texts(SCORES[source])
        assert values_under_words(lines, label) == expected, (width, source)
    for line in lines:
        if line.plain.startswith(" " * 12) or any(
            line.plain.startswith(x) for x in LABELS.values()
        ):
            assert line.cell_len <= width, line.plain


def test_values_keep_their_sign_and_enough_decimals() -> None:
    assert value_texts(SCORES["occlusion"])[:3] == ["-1.03", "+0.01", "+0.10"]
    assert value_texts(SCORES["attention"])[:2] == ["0.05", "0.02"]  # (no sign: none negative)
    assert value_texts(SCORES["saliency"])[:2] == ["0.0012", "0.0003"]  # (two figures)
    assert value_texts([float("nan"), 2.5]) == ["—", "2.50"]


def _background(line: Text, word: str) -> tuple[int, int, int]:
    start = line.plain.index(" " + word + " ") + 1
    style = Style()
    for span in line.spans:
        if span.start <= start < span.end:
            style += span.style if isinstance(span.style, Style) else Style.parse(span.style)
    assert style.bgcolor is not None, word
    rgb = style.bgcolor.get_truecolor()
    return rgb.red, rgb.green, rgb.blue


def test_signed_scores_diverge_and_the_legend_says_which_sign_is_which() -> None:
    lines = rationale_lines(example(), 200, PALETTE)
    occlusion = next(t for t in lines if t.plain.startswith("occlusion:"))
    negative, positive = _background(occlusion, "You"), _background(occlusion, "a")
    assert negative[2] > negative[0] and positive[0] > positive[2]  # cool −, warm +
    strongest = _background(occlusion, "You")
    assert strongest[2] > _background(occlusion, "you")[2]  # |−1.03| > |−0.50|
    zero = occlusion.plain.index(" and ") + 1  # (a_i 0: neither sign)
    assert not any(
        isinstance(span.style, Style) and span.style.bgcolor and span.start <= zero < span.end
        for span in occlusion.spans
    )
    (legend,) = [t for t in lines if t.plain.startswith("word scores")]
    assert " +  positive (warm)" in legend.plain and " −  negative (cool)" in legend.plain
    assert "larger |value|" in legend.plain and "stronger = larger;" not in legend.plain
    plus = legend.plain.index(" + ")
    minus = legend.plain.index(" − ")
    assert _swatch(legend, plus)[0] > _swatch(legend, plus)[2]
    assert _swatch(legend, minus)[2] > _swatch(legend, minus)[0]


def _swatch(line: Text, at: int) -> tuple[int, int, int]:
    for span in line.spans:
        style = span.style
        if span.start <= at < span.end and isinstance(style, Style) and style.bgcolor:
            rgb = style.bgcolor.get_truecolor()
            return rgb.red, rgb.green, rgb.blue
    raise AssertionError(f"no colour at {at}")


def test_the_p_column_says_the_answer_was_cut_to_k_and_every_occurrence_is_marked() -> None:
    text = "\n".join(t.plain for t in rationale_lines(example(), 200, PALETTE))
    assert (
        "P: the answer named 8 of the text's words, cut to its first k = 2 (you, are); "
        "every occurrence of those is marked (3 words)"
    ) in text
    uncut = example()
    rows = tuple(
        RationaleRecord(**{**r.__dict__, "words": ["you", "are"]})
        if r.source == "prompt_predicted"
        else r
        for r in uncut.rows
    )
    plain = "\n".join(
        t.plain for t in rationale_lines(RationaleData(**{**uncut.__dict__, "rows": rows}), 200)
    )
    assert "cut to its first" not in plain


# ---------------------------------------------------------------- pictures


class HeatApp(App[None]):
    """The rationales view alone, showing :func:`example`, scrolled to its heat lines."""

    def compose(self) -> ComposeResult:
        yield RationaleView(id="view")

    def on_mount(self) -> None:
        self.theme = "textual-dark"
        self.query_one(RationaleView).show(example())


@pytest.mark.parametrize("size", [(80, 24), (200, 50)])
def test_heat_lines_with_values_snapshot(snap_compare: Any, size: tuple[int, int]) -> None:
    async def scroll(pilot: Pilot[Any]) -> None:
        await pilot.pause()
        view = pilot.app.query_one(RationaleView)
        text = view.plain().splitlines()
        view.scroll_to(y=next(i for i, t in enumerate(text) if t.startswith("word scores")),
                       animate=False, immediate=True)  # fmt: skip
        await pilot.pause()

    assert snap_compare(HeatApp(), terminal_size=size, run_before=scroll)
