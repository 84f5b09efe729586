"""One id, one text in a llama-server answer (tests/test_server_content.py has the shape's
other checks): each top alternative's bytes are its id's piece, and no two tokens of an answer
give one id its plain and its special piece (the end token's empty text and ``<|im_end|>``),
since each alternative's text is stored. The reader runs over the embedded GGUF's real
vocabulary (no model decodes here)."""

from __future__ import annotations

import pytest

from haf_tui.inference.server_answers import BadAnswerError
from tests.test_server_content import (
    FIRST,
    _alt,
    _entry,
    _generation,
    _Reading,
    _set,
    llama_server_answer,
    reading,
)

__all__ = ["reading"]  # (the module's vocabulary, a fixture)

SECOND_TOP = "logprobs.content.1.top_logprobs.0"


@pytest.mark.parametrize(
    ("plain", "special"),
    [(f"{FIRST}.top_logprobs.1", SECOND_TOP), (SECOND_TOP, f"{FIRST}.top_logprobs.1")],
    ids=["plain-first", "special-first"],
)  # fmt: skip
def test_one_id_given_its_plain_and_its_special_piece_by_two_tokens_is_refused(
    reading: _Reading, plain: str, special: str
) -> None:
    """The end token (2) among the first token's alternatives as its plain piece (empty) and
    among the second's as its special one (``<|im_end|>``): each its id's piece, but one id
    with two texts in one answer (llama-server writes every id alike)."""
    answer = llama_server_answer()
    _set(plain, _alt(2, b"", -2.25 if plain.startswith(FIRST) else -0.5))(answer)
    _set(special, _alt(2, b"<|im_end|>", -2.25 if special.startswith(FIRST) else -0.5))(answer)
    with pytest.raises(BadAnswerError, match=r"token 1 gives id 2 the bytes .*, an earlier token "):
        _generation(reading, answer)


def test_an_end_token_written_plain_after_an_alternative_wrote_it_special_is_refused(
    reading: _Reading,
) -> None:
    """The token's own bytes count too (its id not among its own alternatives)."""
    answer = llama_server_answer()
    _set(f"{FIRST}.top_logprobs.1", _alt(2, b"<|im_end|>", -2.25))(answer)
    content = answer["choices"][0]["logprobs"]["content"]
    content.append(_entry(2, b"", -2.0, [_alt(30, b".", -1.0)]))
    with pytest.raises(BadAnswerError, match=r"token 5 gives id 2 the bytes b'', an earlier "):
        _generation(reading, answer)


def test_one_id_given_the_same_piece_by_two_tokens_is_read(reading: _Reading) -> None:
    """The end token's plain piece (empty) among two tokens' alternatives is read."""
    answer = llama_server_answer()
    _set(f"{FIRST}.top_logprobs.1", _alt(2, b"", -2.25))(answer)
    _set(SECOND_TOP, _alt(2, b"", -0.5))(answer)
    assert _generation(reading, answer).text == "The text is toxic."
