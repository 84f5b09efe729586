"""llama-server's log-probabilities (issue 37 §1), read beside the legacy OpenAI shape that
:func:`~haf_tui.inference.server_answers.checked_answer` reads.

llama-server answers ``/v1/completions`` with ``logprobs: {"content": [entry, ...]}``, an
entry per token: ``{"id", "token", "bytes", "logprob", "top_logprobs": [{"id", "token",
"bytes", "logprob"}, ...]}`` (``token`` is the text cut to its whole UTF-8 characters;
``bytes`` the token's bytes). Each entry is checked like a legacy token (a finite
log-probability ≤ 0, the ordering rule against its top-k, the mass rule: the token and its
top-k, of distinct ids, sum to at most 1 in probability) and more, since ids and bytes come
with it: every id a whole number within the vocabulary, every ``bytes`` a list of byte values,
``token`` the whole-character start of ``bytes``, the top-k at most as many as asked, sorted
from the likeliest, with distinct ids.

Against the vocabulary (:func:`check_entries`): an entry's bytes are its id's piece (plain or
special), or, for the token that completes a character split over several tokens, that piece
after the bytes of the tokens before it: llama-server reports no entry for a token that ends
inside a character and gives the next one the whole character's bytes; haf stores such an
entry as one token (the last one's id and log-probability; docs/servers.md says so)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from haf_tui.inference.server_answers import (
    TOLERANCE,
    BadAnswerError,
    Position,
    check_mass,
    checked_answer,
    logprob_of,
    shown,
)

PARTIAL = "\ufffd"
MAX_TOKEN_BYTES = 256
"""The most bytes one entry may carry (a token's piece, or a character's split ones)."""


@dataclass(frozen=True)
class Entry:
    """One token of a llama-server answer: its id, bytes, raw log-probability and top-k
    (id, text, log-probability), likeliest first, with the bytes the server gave each."""

    token_id: int
    data: bytes
    logprob: float
    top: tuple[tuple[int, str, float], ...]
    top_data: tuple[bytes, ...]


@dataclass(frozen=True)
class ReadAnswer:
    """An answer's first choice, its positions (text, log-probability, top-k by text) and,
    for llama-server's shape, its entries (ids and bytes; None for the legacy shape)."""

    choice: dict[str, Any]
    positions: list[Position]
    entries: list[Entry] | None


def is_content_shape(answer: Any) -> bool:
    """Whether an answer's first choice carries llama-server's ``logprobs.content``."""
    choices = answer.get("choices") if isinstance(answer, dict) else None
    first = choices[0] if isinstance(choices, list) and choices else None
    logprobs = first.get("logprobs") if isinstance(first, dict) else None
    return isinstance(logprobs, dict) and "content" in logprobs


def read_answer(answer: Any, top_asked: int) -> ReadAnswer:
    """An answer of either shape, checked (a :class:`BadAnswerError` saying what came back
    otherwise); ``top_asked``: the top-k the request asked for."""
    if not is_content_shape(answer):
        choice, positions = checked_answer(answer, top_asked)
        return ReadAnswer(choice, positions, None)
    choice = answer["choices"][0]
    text = choice.get("text")
    if not isinstance(text, str):
        raise BadAnswerError(f"an answer whose text is {shown(text)}")
    content = choice["logprobs"]["content"]
    if not isinstance(content, list):
        raise BadAnswerError(f"an answer whose logprobs.content is {shown(content)}")
    if text and not content:
        raise BadAnswerError(f"the text {shown(text)} without its tokens")
    entries = [_entry(item, index, top_asked) for index, item in enumerate(content)]
    positions = [
        (e.data.decode("utf-8", errors="replace"), e.logprob, _by_text(e.top)) for e in entries
    ]
    joined = b"".join(e.data for e in entries)
    if not _text_is_bytes(text, joined):
        raise BadAnswerError(
            f"the text {shown(text)}, which is not its tokens' bytes {shown(joined)}"
        )
    return ReadAnswer(choice, positions, entries)


def _text_is_bytes(text: str, joined: bytes) -> bool:
    """Whether ``text`` is the tokens' bytes, decoded (a character the answer ends inside
    of, which has no entry, may follow them)."""
    try:
        decoded = joined.decode("utf-8")
    except UnicodeDecodeError:
        return False
    if not text.startswith(decoded):
        return False
    rest = text[len(decoded) :]
    return not rest or (len(rest) == 1 and not rest.isascii()) or set(rest) == {PARTIAL}


def _by_text(top: Sequence[tuple[int, str, float]]) -> dict[str, float]:
    """The top-k keyed by text, as the legacy shape keys it (the likeliest of a shared text)."""
    keyed: dict[str, float] = {}
    for _, text, value in top:
        keyed.setdefault(text, value)
    return keyed


def _whole_number(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadAnswerError(f"{what} of {shown(value)} (not a whole number)")
    if value < 0:
        raise BadAnswerError(f"{what} of {value} (negative)")
    return value


def _bytes(item: dict[str, Any], what: str) -> bytes:
    """An entry's ``bytes`` (a list of byte values), and its ``token`` their whole-character
    start."""
    values = item.get("bytes")
    if (
        not isinstance(values, list)
        or len(values) > MAX_TOKEN_BYTES
        or not all(isinstance(b, int) and not isinstance(b, bool) and 0 <= b <= 255 for b in values)
    ):
        raise BadAnswerError(f"{what} whose bytes are {shown(values)}")
    data = bytes(values)
    token = item.get("token")
    if not isinstance(token, str):
        raise BadAnswerError(f"{what} whose token is {shown(token)}")
    start = token.encode("utf-8")
    # bytes that are no whole character (a byte token): llama-server writes its token as the
    # replacement character, as a lenient UTF-8 decoder reads those bytes
    replaced = token == data.decode("utf-8", errors="replace")
    if not replaced and (not data.startswith(start) or len(data) - len(start) > 3):
        raise BadAnswerError(f"{what} whose token {shown(token)} is not its bytes {shown(data)}")
    return data


def _entry(item: Any, index: int, top_asked: int) -> Entry:
    what = f"token {index}"
    if not isinstance(item, dict):
        raise BadAnswerError(f"{what} of {shown(item)} (not an object)")
    token_id = _whole_number(item.get("id"), f"{what}'s id")
    data = _bytes(item, what)
    value = logprob_of(item.get("logprob"), f"a token log-probability ({what})")
    tops = item.get("top_logprobs", [])
    if not isinstance(tops, list) or len(tops) > max(top_asked, 1):
        raise BadAnswerError(f"{what}'s top_logprobs of {shown(tops)} (not a list of at most "
                             f"{max(top_asked, 1)})")  # fmt: skip
    top: list[tuple[int, str, float]] = []
    top_data: list[bytes] = []
    for rank, alternative in enumerate(tops):
        where = f"top token {rank} of {what}"
        if not isinstance(alternative, dict):
            raise BadAnswerError(f"{where} of {shown(alternative)} (not an object)")
        top_id = _whole_number(alternative.get("id"), f"{where}'s id")
        alternative_data = _bytes(alternative, where)
        top_value = logprob_of(alternative.get("logprob"), f"a top log-probability ({where})")
        if top and top_value > top[-1][2] + TOLERANCE:
            raise BadAnswerError(f"{what}'s top_logprobs not sorted from the likeliest")
        top.append((top_id, alternative_data.decode("utf-8", errors="replace"), top_value))
        top_data.append(alternative_data)
    ids = [t[0] for t in top]
    if len(set(ids)) != len(ids):
        raise BadAnswerError(f"{what}'s top_logprobs name one id twice ({shown(ids)})")
    listed = dict((t[0], t[2]) for t in top)
    if token_id in listed and abs(listed[token_id] - value) > TOLERANCE:
        raise BadAnswerError(
            f"{what} at log-probability {value}, but {listed[token_id]} in its top_logprobs"
        )
    if top and token_id not in listed and top[-1][2] < value - TOLERANCE:
        raise BadAnswerError(
            f"{what} at log-probability {value}, outside its top-k yet likelier than their "
            f"{top[-1][2]}"
        )
    check_mass([*listed.values(), *([] if token_id in listed else [value])], what)
    return Entry(token_id, data, value, tuple(top), tuple(top_data))


def _same_token(data: bytes, alternative: bytes) -> bool:
    """Whether an entry's bytes and those its top-k gives its own id are one token's: the
    same, or the entry's a character split over tokens that ends with the alternative's
    (the entry carries the whole character, the alternative its id's piece)."""
    if data == alternative:
        return True
    return bool(alternative) and data.endswith(alternative) and _split_start(data, alternative)


def check_entries(
    entries: Sequence[Entry], n_vocab: int, piece: Callable[[int, bool], bytes]
) -> None:
    """Refuse (:class:`BadAnswerError`) an entry whose id is outside the vocabulary of
    ``n_vocab`` tokens or whose bytes are not its id's piece (``piece(id, special)``), or a
    character split over tokens that ends with it; or a top alternative whose bytes are not
    its id's piece (a run stores each alternative's text: one id, one text), or an id given
    other bytes than an earlier token gave it (the plain and the special piece of one id)."""
    given: dict[int, bytes] = {}  # (each id's bytes as the answer gave them first)
    for index, entry in enumerate(entries):
        ids = [entry.token_id, *(t[0] for t in entry.top)]
        outside = [i for i in ids if i >= n_vocab]
        if outside:
            raise BadAnswerError(
                f"token {index} names id {outside[0]}, outside the model's vocabulary of {n_vocab}"
            )
        whole = _check_piece(entry, index, piece)
        for rank, ((top_id, _, _), data) in enumerate(zip(entry.top, entry.top_data, strict=True)):
            if data not in (piece(top_id, False), piece(top_id, True)):
                raise BadAnswerError(
                    f"top token {rank} of token {index}: bytes {shown(data)} that are not "
                    f"token {top_id}'s {shown(piece(top_id, False))}"
                )
            if top_id == entry.token_id and not _same_token(entry.data, data):
                raise BadAnswerError(
                    f"token {index} names id {top_id} with bytes {shown(entry.data)}, but "
                    f"with {shown(data)} in its top_logprobs (one id, one token)"
                )
        _check_given(entry, index, given, whole)


def _check_given(entry: Entry, index: int, given: dict[int, bytes], whole: bool) -> None:
    """Refuse an id this entry gives other bytes than an earlier one did (its own bytes
    count when they are its id's piece (``whole``), not a character split over tokens);
    note the ids it gives first."""
    said = [*zip((t[0] for t in entry.top), entry.top_data, strict=True)]
    for token_id, data in [*([(entry.token_id, entry.data)] if whole else []), *said]:
        first = given.setdefault(token_id, data)
        if first != data:
            raise BadAnswerError(
                f"token {index} gives id {token_id} the bytes {shown(data)}, an earlier token "
                f"gave it {shown(first)} (one id, one text)"
            )


def _check_piece(entry: Entry, index: int, piece: Callable[[int, bool], bytes]) -> bool:
    """Refuse an entry whose bytes are not its id's piece, or a character split over tokens
    that ends with it; whether they are its id's piece whole (not a split character)."""
    pieces = {piece(entry.token_id, False), piece(entry.token_id, True)}
    if entry.data in pieces:
        return True
    if not any(p and entry.data.endswith(p) and _split_start(entry.data, p) for p in pieces):
        raise BadAnswerError(
            f"token {index}: bytes {shown(entry.data)} that are not token "
            f"{entry.token_id}'s {shown(piece(entry.token_id, False))}"
        )
    return False


def _split_start(data: bytes, last: bytes) -> bool:
    """Whether ``data`` without its last piece ends inside a UTF-8 character (the tokens of
    a split character that llama-server reports with the one that completes it)."""
    head = data[: len(data) - len(last)]
    if not head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.reason == "unexpected end of data"
    return False
