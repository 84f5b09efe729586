"""Where the text's tokens lie in the classification prompt
(``attribution_model.prompt_tokens``), on a stand-in vocabulary whose pieces are written
here: a SentencePiece-style tokenizer that puts a space before a segment's first piece, and a
BOS that llama.cpp adds before the rendered segments, still give each token its span in the
text (the embedded and the tiny test GGUFs have neither)."""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from haf_tui.methods.rationales.suite.attribution_model import prompt_tokens

TEXT = "hi you"
BOS = 1
PIECES: dict[int, bytes] = {
    10: b"<|user|>",
    11: b" Classify",
    12: b" ```",
    13: b"hi",
    14: b" you",
    15: b"```",
    16: b" now",
    17: b"<|end|>",
}


@dataclass(frozen=True)
class Segment:
    text: str
    plain: bool


class Vocabulary:
    """Renders any messages as three segments (the template's, the user's, the template's)
    and tokenizes them by :data:`PIECES`, adding a BOS to the whole prompt."""

    def __init__(self) -> None:
        self.segments = {
            "<|user|>": [10],
            f"Classify ```{TEXT}``` now": [11, 12, 13, 14, 15, 16],
            "<|end|>": [17],
        }
        self.llm = SimpleNamespace(tokenize=self._tokenize)

    def render(self, messages: Any) -> Any:
        texts = list(self.segments)
        return SimpleNamespace(segments=[Segment(t, plain=(i == 1)) for i, t in enumerate(texts)])

    def _tokenize(self, data: bytes, add_bos: bool, special: bool) -> list[int]:
        return list(self.segments[data.decode()])

    def tokenize_prompt(self, rendered: Any) -> list[int]:
        return [BOS, *(i for ids in self.segments.values() for i in ids)]

    def token_piece(self, token_id: int) -> bytes:
        return PIECES[token_id]


def test_a_leading_space_and_a_bos_leave_each_token_its_span_in_the_text() -> None:
    tokens = prompt_tokens(Vocabulary(), TEXT)  # type: ignore[arg-type]
    assert tokens.ids == (BOS, 10, 11, 12, 13, 14, 15, 16, 17)
    by_id = dict(zip(tokens.ids, tokens.spans, strict=True))
    assert by_id == {
        BOS: None, 10: None, 11: None, 12: None, 13: (0, 2), 14: (2, 6), 15: None, 16: None,
        17: None,
    }  # fmt: skip
