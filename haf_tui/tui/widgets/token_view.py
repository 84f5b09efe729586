"""One generation's output, token by token, coloured by NLL or by a reason's relevance weights,
with a token cursor and a status: the token under it with its logprob and its relevance (and
TokenSAR weight) in its reason, the top-k alternatives, and what the colours mean."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from rich.cells import cell_len
from rich.color import Color
from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from haf_tui.tui.definitions import NLL_COLOURS, RELEVANCE_COLOURS
from haf_tui.tui.widgets.lines_view import LinesView

NLL_MAX = 5.0
Mode = Literal["nll", "relevance"]


@dataclass(frozen=True)
class Token:
    """One generated token: its text, log p and the top-k alternatives."""

    text: str
    logprob: float
    top_texts: Sequence[str] = ()
    top_logprobs: Sequence[float] = ()


@dataclass(frozen=True)
class Span:
    """A reason's tokens: the first position, how many, and their TokenSAR relevances."""

    first: int
    count: int
    relevance: Sequence[float] = field(default_factory=tuple)

    def weight(self, position: int) -> float | None:
        """The token's relevance weight relative to the span's largest (None outside)."""
        i = position - self.first
        if not 0 <= i < self.count:
            return None
        if not self.relevance or i >= len(self.relevance):
            return 1.0
        top = max(self.relevance)
        return 1.0 if top <= 0 else max(0.0, self.relevance[i]) / top

    def relevance_at(self, position: int) -> tuple[float, float] | None:
        """The token's TokenSAR relevance R_i and its weight R_i / Σ R (uniform when Σ R = 0);
        None outside the span or without stored relevances."""
        i = position - self.first
        if not 0 <= i < self.count or i >= len(self.relevance):
            return None
        total = sum(self.relevance)
        weight = self.relevance[i] / total if total > 0 else 1.0 / len(self.relevance)
        return self.relevance[i], weight


def scale(value: float) -> Color:
    """Green (0) → yellow → red (1)."""
    v = min(1.0, max(0.0, value))
    red, green = (int(510 * v), 200) if v < 0.5 else (255, int(200 * (2 - 2 * v)))
    return Color.from_rgb(min(red, 255), green, 60)


class TokenBody(LinesView):
    """The text, wrapped once per change into lines it draws as they scroll into view: new
    text changes the scroll height, never the screen's layout."""

    DEFAULT_CSS = (
        "TokenBody { height: 1fr; padding: 0 1; scrollbar-gutter: stable; overflow-x: hidden; }"
    )

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.text = Text()

    def update(self, text: Text) -> None:
        """Show other text."""
        self.text = text
        self.rebuild()

    def pieces(self, width: int) -> list[Text]:
        """The text."""
        return [self.text]


class TokenView(Vertical):
    """The token-by-token view; the screen drives it (``show``, ``move``, ``toggle_*``)."""

    DEFAULT_CSS = """
    TokenView {
        height: 1fr;
        min-height: 5;
        border: round $primary-darken-2;
    }
    TokenView > #tv-status {
        height: 4; padding: 0 1; background: $panel; text-wrap: nowrap; text-overflow: ellipsis;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.tokens: list[Token] = []
        self.spans: dict[int, Span] = {}
        self.reason_index: int | None = None
        self.prompt = ""
        self.cursor = 0
        self.mode: Mode = "nll"
        self.show_prompt = False
        self.title = ""

    def compose(self) -> ComposeResult:
        """The text (scrolls) and the status line."""
        yield TokenBody(id="tv-body")
        yield Static(id="tv-status")

    def show(
        self,
        title: str,
        tokens: list[Token],
        spans: dict[int, Span],
        reason_index: int | None,
        prompt: str,
    ) -> None:
        """Show one generation (keeps the colouring mode and the prompt toggle)."""
        self.title, self.tokens, self.spans = title, tokens, spans
        self.reason_index, self.prompt = reason_index, prompt
        span = spans.get(reason_index) if reason_index is not None else None
        self.cursor = span.first if span is not None and span.count else 0
        self.refresh_view()

    def move(self, delta: int) -> None:
        """Move the token cursor."""
        if self.tokens:
            self.cursor = min(len(self.tokens) - 1, max(0, self.cursor + delta))
            self.refresh_view()

    def toggle_mode(self) -> None:
        """Colour by NLL, or by the selected reason's relevance weights."""
        self.mode = "relevance" if self.mode == "nll" else "nll"
        self.refresh_view()

    def toggle_prompt(self) -> None:
        """Show the generation's prompt instead of its output (or back)."""
        self.show_prompt = not self.show_prompt
        self.refresh_view()

    def output_text(self) -> str:
        """The output as the concatenated token texts."""
        return "".join(token.text for token in self.tokens)

    def body_text(self) -> Text:
        """What the body shows now."""
        if self.show_prompt:
            return Text(self.prompt)
        text = Text()
        selected = self.spans.get(self.reason_index) if self.reason_index is not None else None
        for position, token in enumerate(self.tokens):
            style = self._token_style(position, token, selected)
            if position == self.cursor:
                style += Style(reverse=True)
            text.append(token.text, style)
        return text

    def _token_style(self, position: int, token: Token, selected: Span | None) -> Style:
        in_selected = selected is not None and selected.weight(position) is not None
        emphasis = Style(bold=True, underline=True) if in_selected else Style()
        if self.mode == "nll":
            colour = scale(-token.logprob / NLL_MAX)
            return Style(color="black", bgcolor=colour) + emphasis
        spans = [selected] if selected is not None else list(self.spans.values())
        for span in spans:
            weight = span.weight(position) if span is not None else None
            if weight is not None:
                return Style(color="black", bgcolor=scale(1.0 - weight)) + emphasis
        return Style(dim=True)

    def status_text(self, width: int | None = None) -> Text:
        """The status, four lines cut with … (never wrapped): the token under the cursor with
        its logprob and NLL; its relevance; the top-k alternatives, as many whole as ``width``
        (the status's columns) holds; the node and the colours."""
        line = Text(no_wrap=True, overflow="ellipsis")
        if self.show_prompt:
            line.append(f"{self.title} · prompt ({len(self.prompt)} chars) · v: output")
            return line
        if not self.tokens:
            line.append(f"{self.title} · no tokens")
            return line
        token = self.tokens[self.cursor]
        line.append(f"token {self.cursor + 1}/{len(self.tokens)}  ")
        line.append(f"logprob {token.logprob:.3f}  NLL {-token.logprob:.3f}  ")
        line.append(repr(token.text), style="bold")  # (last: a long token is cut, no number)
        line.append("\n" + self.relevance_text())
        line.append("\n" + top_line(token, width))
        colours = NLL_COLOURS if self.mode == "nll" else RELEVANCE_COLOURS
        line.append(f"\n{self.title} · {colours}", style="dim")
        return line

    def cursor_relevance(self) -> tuple[int, tuple[float, float] | None] | None:
        """The reason the cursor token is in (the selected one first) with the token's
        relevance and weight there (None when not stored); None outside every reason."""
        order = sorted(self.spans, key=lambda index: index != self.reason_index)
        for index in order:
            span = self.spans[index]
            if span.weight(self.cursor) is not None:
                return index, span.relevance_at(self.cursor)
        return None

    def relevance_text(self) -> str:
        """``relevance 0.420 (weight 0.31, reason 2)``, or why there is none."""
        found = self.cursor_relevance()
        if found is None:
            return "relevance — (in no reason)"
        index, values = found
        if values is None:
            return f"relevance — (not stored; reason {index + 1})"
        return f"relevance {values[0]:.3f} (weight {values[1]:.2f}, reason {index + 1})"

    def refresh_view(self) -> None:
        """Re-render the body and the status line; keep the cursor token in view."""
        self.query_one(TokenBody).update(self.body_text())
        self.refresh_status()
        self.scroll_to_cursor()

    def refresh_status(self) -> None:
        """Re-render the status at the width it has now."""
        status = self.query_one("#tv-status", Static)
        status.update(self.status_text(status.content_size.width or None), layout=False)

    def on_resize(self) -> None:
        """The status holds as many whole alternatives as its new width does."""
        self.refresh_status()

    def cursor_line(self, width: int) -> int:
        """The line (of the body wrapped to ``width``) that holds the cursor token: the
        text up to the end of the cursor's word, wrapped the same way, has that many lines."""
        if self.show_prompt or not self.tokens or width <= 0:
            return 0
        output = self.output_text()
        end = sum(len(token.text) for token in self.tokens[: self.cursor + 1])
        while end < len(output) and not output[end].isspace():
            end += 1
        prefix = Text(output[:end].rstrip())
        return max(len(prefix.wrap(self.app.console, width)) - 1, 0)

    def scroll_to_cursor(self) -> None:
        """Scroll the body so that the cursor token's line is visible."""
        body = self.query_one(TokenBody)
        line, height = (
            self.cursor_line(body.text_width),
            max(body.scrollable_content_region.height, 1),
        )
        top = round(body.scroll_y)
        if line < top:
            body.scroll_to(y=line, animate=False, immediate=True)
        elif line >= top + height:
            body.scroll_to(y=line - height + 1, animate=False, immediate=True)


def top_line(token: Token, width: int | None) -> str:
    """``top: 'The' -0.06  ' article' -0.26``: the token's alternatives, each whole (a number is
    never cut), as many as ``width`` columns hold, then how many more there are."""
    parts = [
        f"{text!r} {lp:.2f}" for text, lp in zip(token.top_texts, token.top_logprobs, strict=False)
    ]
    if not parts:
        return "top: —"
    for shown in range(len(parts), -1, -1):
        more = len(parts) - shown
        line = "top: " + "  ".join([*parts[:shown], *([f"(+{more} more)"] if more else [])])
        if width is None or cell_len(line) <= width:
            return line
    return line
