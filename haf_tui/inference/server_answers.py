"""A server's ``/v1/completions`` answer, checked before anything of it is used (issue 24 §3);
the legacy OpenAI shape here, llama-server's ``logprobs.content`` in :mod:`.server_content`.

Every answer, sampled or teacher-forced, must hold: a first choice with its text; its
``logprobs`` with the generated ``tokens`` (texts; at least one when the text is not empty)
and one raw log-probability per token in ``token_logprobs``, each a finite number ≤ 0; and,
where ``top_logprobs`` is given, one object per token of finite log-probabilities ≤ 0.

The ordering rule between a token and its top-k: the top-k are the k likeliest tokens, so a
sampled token that is not among them is at most as likely as each of them: when the token's
text is not a key of its top-k, every top-k value is ≥ its log-probability − :data:`TOLERANCE`.
When its text is a key, nothing is compared: servers key the top-k by token *text*, and
different tokens share a text (partial UTF-8 pieces all print as ``""``), so the value under
that key may be another token's, and a later, less likely one may have overwritten the
likeliest one's (llama-cpp-python fills the dict in descending order). Teacher-forced tokens
obey the same rule (their log-probability is the raw one; the bias acts after it is read).

The mass rule: the probabilities of distinct tokens sum to at most 1, so a token's top-k
(distinct texts: distinct tokens), with the token itself when its text is not among them,
sum to at most 1 + :data:`TOLERANCE` in probability (top-5 log-probabilities of about 0 each,
4.995, are no distribution). The count rule: at most the top-k asked for, and the token's
own besides (llama-cpp-python adds the sampled token to its top-k).

An answer that breaks any of this is a :class:`BadAnswerError`: a server fault (the request
is retried elsewhere), never a stored row."""

from __future__ import annotations

import math
from typing import Any, Final

from haf_tui.inference.server import ServerError

TOLERANCE: Final = 1e-3
"""How far a log-probability may stray above 0, or a sampled token above a top-k value it
should not exceed (float32 rounding in the server)."""

Position = tuple[str, float, dict[str, float]]
"""One generated token: its text, its raw log-probability and its top log-probabilities."""


class BadAnswerError(ServerError):
    """A server answered with something that is not a usable completion; the message says
    what it returned."""


def shown(value: Any) -> str:
    """A returned value as the error line shows it."""
    text = "null" if value is None else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def logprob_of(value: Any, what: str) -> float:
    """``value`` as a log-probability: a finite number ≤ 0 (within the tolerance)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadAnswerError(f"{what} of {shown(value)} (not a number)")
    number = float(value)
    if not math.isfinite(number):
        raise BadAnswerError(f"{what} of {number} (not finite)")
    if number > TOLERANCE:
        raise BadAnswerError(f"{what} of {number} (above 0: not a log-probability)")
    return number


def _top(value: Any, index: int) -> dict[str, float]:
    if not isinstance(value, dict):
        raise BadAnswerError(f"top_logprobs[{index}] of {shown(value)} (not an object)")
    return {
        str(token): logprob_of(number, f"a top log-probability of token {index} ({token!r})")
        for token, number in value.items()
    }


def check_mass(values: list[float], what: str) -> None:
    """Refuse log-probabilities of distinct tokens whose probabilities sum past 1 (beyond
    :data:`TOLERANCE`, the server's rounding)."""
    mass = math.fsum(math.exp(value) for value in values)
    if mass > 1.0 + TOLERANCE:
        raise BadAnswerError(
            f"{what}: log-probabilities of distinct tokens whose probabilities sum to "
            f"{mass:.4g} (more than 1: not a distribution)"
        )


def checked_answer(
    answer: Any, top_asked: int | None = None
) -> tuple[dict[str, Any], list[Position]]:
    """The answer's first choice and its tokens, each checked (a :class:`BadAnswerError`
    naming what came back otherwise); ``top_asked``: the top-k the request asked for."""
    choices = answer.get("choices") if isinstance(answer, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise BadAnswerError(f"an answer without choices ({shown(choices)})")
    choice = choices[0]
    text = choice.get("text")
    if not isinstance(text, str):
        raise BadAnswerError(f"an answer whose text is {shown(text)}")
    logprobs = choice.get("logprobs")
    if not isinstance(logprobs, dict):
        raise BadAnswerError(f"an answer whose logprobs is {shown(logprobs)}")
    texts = logprobs.get("tokens")
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise BadAnswerError(f"an answer whose tokens are {shown(texts)}")
    if text and not texts:
        raise BadAnswerError(f"the text {shown(text)} without its tokens")
    values = logprobs.get("token_logprobs")
    if not isinstance(values, list):
        raise BadAnswerError(f"an answer whose token_logprobs is {shown(values)}")
    if len(values) != len(texts):
        raise BadAnswerError(f"{len(texts)} tokens but {len(values)} token log-probabilities")
    numbers = [logprob_of(v, f"a token log-probability (token {i})") for i, v in enumerate(values)]
    tops_given = logprobs.get("top_logprobs")
    if tops_given is None:
        tops: list[dict[str, float]] = [{} for _ in texts]
    elif not isinstance(tops_given, list) or len(tops_given) != len(texts):
        raise BadAnswerError(f"{len(texts)} tokens but top_logprobs {shown(tops_given)}")
    else:
        tops = [_top(top, i) for i, top in enumerate(tops_given)]
    for index, (token, number, top) in enumerate(zip(texts, numbers, tops, strict=True)):
        if top_asked is not None and len(top) > max(1, top_asked) + 1:
            raise BadAnswerError(
                f"{len(top)} top log-probabilities for token {index}, more than the "
                f"{max(1, top_asked)} asked for (and its own)"
            )
        if top and token not in top and min(top.values()) < number - TOLERANCE:
            raise BadAnswerError(
                f"token {index} ({token!r}) at log-probability {number}, outside its top-k yet "
                f"likelier than their {min(top.values())}"
            )
        check_mass([*top.values(), *([] if token in top else [number])], f"token {index}")
    return choice, list(zip(texts, numbers, tops, strict=True))
