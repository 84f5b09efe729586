"""A server's answer checked against its request and the tokenizer the tool holds (issue 33
§3), after :func:`~haf_tui.inference.server_answers.checked_answer` checked its form.

- the model: the answer's ``model`` is the one the server named on ``/v1/models`` when the
  run began (by name, without folders: :func:`~haf_tui.inference.server.same_model`; a
  server that switches model mid-run is refused, not recorded as the old one);
- at most the ``max_tokens`` asked for; a ``"length"`` finish has at least one token;
- ``usage.prompt_tokens``, where given, a whole number from 0 to the context's size;
- every token, and every key of its top log-probabilities, a piece of the model's vocabulary
  (plain or special), or a piece of a character (``""``, or only U+FFFD: servers print a
  token that holds part of a UTF-8 character so);
- the answer's text is its tokens' texts in order: between them, or after the last, only
  characters of more than one byte, which pieces of a character printed as ``""`` hold.

An answer that breaks any of this is a :class:`BadAnswerError`, like one of the wrong form."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from haf_tui.inference.server import same_model
from haf_tui.inference.server_answers import BadAnswerError, Position

PARTIAL = "\ufffd"
"""What a server may print for a token holding part of a UTF-8 character (or nothing)."""


@dataclass(frozen=True)
class Expected:
    """What an answer must agree with: the request's token cap, the model the server named
    when the run began, the context's size."""

    max_tokens: int
    model: str
    n_ctx: int
    top_logprobs: int = 100
    """The top-k the request asked for (llama-server's shape is held to it)."""


def _short(value: Any) -> str:
    text = "null" if value is None else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def is_partial(token: str) -> bool:
    """Whether a token's text is what a piece of a character prints as."""
    return not token.strip(PARTIAL)


def text_follows_tokens(text: str, tokens: Sequence[str]) -> bool:
    """Whether ``text`` is ``tokens`` in order, with only non-ASCII characters (those that
    pieces of a character printed as ``""`` hold) between or after them."""
    at = 0
    for token in tokens:
        shown = token.strip(PARTIAL)
        if not shown:
            continue
        while not text.startswith(shown, at):
            if at >= len(text) or text[at].isascii():
                return False
            at += 1
        at += len(shown)
    return not any(character.isascii() for character in text[at:])


def check_against_request(
    answer: dict[str, Any],
    choice: dict[str, Any],
    positions: Sequence[Position],
    expected: Expected,
    known: Callable[[str], bool],
    *,
    by_ids: bool = False,
) -> None:
    """Refuse (:class:`BadAnswerError`) an answer that does not agree with ``expected`` or
    holds a token ``known`` does not know (``by_ids``: llama-server's shape, whose tokens and
    text :mod:`~haf_tui.inference.server_content` checks by their ids and bytes instead)."""
    model = answer.get("model")
    if not isinstance(model, str) or not same_model(model, expected.model):
        raise BadAnswerError(
            f"an answer from model {_short(model)}, not {expected.model!r} that it served when "
            "the run began"
        )
    if len(positions) > expected.max_tokens:
        raise BadAnswerError(
            f"{len(positions)} tokens, more than the {expected.max_tokens} asked for"
        )
    if choice.get("finish_reason") == "length" and not positions:
        raise BadAnswerError('a "length" finish without a token')
    usage = answer.get("usage")
    prompt_tokens = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    if prompt_tokens is not None and (
        isinstance(prompt_tokens, bool)
        or not isinstance(prompt_tokens, int)
        or not 0 <= prompt_tokens <= expected.n_ctx
    ):
        raise BadAnswerError(
            f"prompt_tokens of {_short(prompt_tokens)} (not a count from 0 to the context's "
            f"{expected.n_ctx})"
        )
    if by_ids:
        return
    for index, (token, _, top) in enumerate(positions):
        if not (is_partial(token) or known(token)):
            raise BadAnswerError(f"token {index} ({_short(token)}) outside the model's vocabulary")
        for key in top:
            if not (is_partial(key) or known(key)):
                raise BadAnswerError(
                    f"a top token of token {index} ({_short(key)}) outside the model's vocabulary"
                )
    text = choice.get("text", "")
    tokens = [token for token, _, _ in positions]
    if not text_follows_tokens(text, tokens):
        raise BadAnswerError(
            f"the text {_short(text)}, which is not its tokens {_short(''.join(tokens))}"
        )
