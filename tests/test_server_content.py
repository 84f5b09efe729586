"""llama-server's log-probabilities (issue 37 §1): its ``logprobs.content`` shape, read beside
the legacy ``tokens``/``token_logprobs``/``top_logprobs`` one, every field checked as hostile
input (types, lengths, finite numbers ≤ 0, ids within the vocabulary, bytes that are their
id's piece). The answers below are recorded from llama-server (built from the pinned sdist)
and llama-cpp-python's server on the embedded GGUF, then cut to a few tokens; the reader runs
over the embedded GGUF's real vocabulary (no model decodes here)."""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from haf_tui.defaults import embedded_model_path
from haf_tui.inference.base import Generation
from haf_tui.inference.chat import RenderedPrompt
from haf_tui.inference.llama import LlamaCppBackend
from haf_tui.inference.server import first_top_logprobs
from haf_tui.inference.server_answers import BadAnswerError
from haf_tui.inference.server_checks import Expected
from haf_tui.inference.server_content import Entry, check_entries, read_answer
from haf_tui.inference.server_reading import AnswerReading

MODEL = "model.gguf"
EXPECTED = Expected(max_tokens=8, model=MODEL, n_ctx=2048, top_logprobs=2)


def _entry(token_id: int, data: bytes, logprob: float, top: list[Any]) -> dict[str, Any]:
    text = data.decode("utf-8", errors="ignore")
    return {"id": token_id, "token": text, "bytes": list(data), "logprob": logprob,
            "top_logprobs": top}  # fmt: skip


def _alt(token_id: int, data: bytes, logprob: float) -> dict[str, Any]:
    text = data.decode("utf-8", errors="ignore")
    return {"id": token_id, "token": text, "bytes": list(data), "logprob": logprob}


def llama_server_answer() -> dict[str, Any]:
    """llama-server's ``/v1/completions`` answer of "The text is toxic." (its ids and bytes
    as the embedded GGUF spells them), two alternatives per token."""
    content = [
        _entry(504, b"The", -0.25, [_alt(504, b"The", -0.25), _alt(550, b" other", -2.25)]),
        _entry(1694, b" text", -1.5, [_alt(550, b" other", -0.5), _alt(1694, b" text", -1.5)]),
        _entry(314, b" is", -0.5, [_alt(314, b" is", -0.5), _alt(550, b" other", -3.0)]),
        _entry(5678, b" toxic", -2.0, [_alt(550, b" other", -0.2), _alt(5678, b" toxic", -2.0)]),
        _entry(30, b".", -0.75, [_alt(30, b".", -0.75), _alt(550, b" other", -2.0)]),
    ]
    return {
        "model": MODEL,
        "object": "text_completion",
        "choices": [
            {
                "text": "The text is toxic.",
                "index": 0,
                "logprobs": {"content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"completion_tokens": 5, "prompt_tokens": 12, "total_tokens": 17},
    }


def legacy_answer() -> dict[str, Any]:
    """The same completion in llama-cpp-python's (OpenAI's legacy) shape."""
    return {
        "model": MODEL,
        "choices": [
            {
                "text": "The text is toxic.",
                "finish_reason": "stop",
                "logprobs": {
                    "tokens": ["The", " text", " is", " toxic", "."],
                    "token_logprobs": [-0.25, -1.5, -0.5, -2.0, -0.75],
                    "top_logprobs": [
                        {"The": -0.25, " other": -2.25},
                        {" other": -0.5, " text": -1.5},
                        {" is": -0.5, " other": -3.0},
                        {" other": -0.2, " toxic": -2.0},
                        {".": -0.75, " other": -2.0},
                    ],
                    "text_offset": [0, 3, 8, 11, 17],
                },
            }
        ],
        "usage": {"prompt_tokens": 12},
    }


class _Reading(AnswerReading):
    def __init__(self, local: LlamaCppBackend):
        self.local = local
        self.chat_format = "chatml"


@pytest.fixture(scope="module")
def reading() -> Iterator[_Reading]:
    local = LlamaCppBackend(embedded_model_path(), vocab_only=True)
    yield _Reading(local)
    local.close()


def _generation(reading: _Reading, answer: dict[str, Any]) -> Generation:
    prompt = RenderedPrompt((), "chatml", False)
    return reading.generation(prompt, answer, 0.1, "http://127.0.0.1:1", EXPECTED)


def test_both_shapes_read_into_the_same_tokens(reading: _Reading) -> None:
    served = _generation(reading, llama_server_answer())
    legacy = _generation(reading, legacy_answer())
    assert served.text == legacy.text == "The text is toxic."
    for mine, theirs in zip(served.tokens, legacy.tokens, strict=True):
        assert mine == theirs
    assert [t.token_id for t in served.tokens] == [504, 1694, 314, 5678, 30]
    assert [t.logprob for t in served.tokens] == [-0.25, -1.5, -0.5, -2.0, -0.75]
    assert served.tokens[3].top_ids == (550, 5678)
    assert served.tokens[3].top_logprobs == (-0.2, -2.0)
    assert [t.char_offset for t in served.tokens] == [0, 3, 8, 11, 17]


def test_a_character_split_over_tokens_is_one_entry_stored_as_one_token(
    reading: _Reading,
) -> None:
    """llama-server gives no entry for 😀's first two tokens (10813, 242): the third (218)
    carries the character's four bytes."""
    answer = llama_server_answer()
    emoji = "😀".encode()
    answer["choices"][0]["text"] = "The😀"
    answer["choices"][0]["logprobs"]["content"][1:] = [
        _entry(218, emoji, -0.5, [_alt(218, b"\x80", -0.5), _alt(550, b" other", -1.0)])
    ]
    generation = _generation(reading, answer)
    assert generation.text == "The😀"
    assert [(t.token_id, t.piece) for t in generation.tokens] == [(504, b"The"), (218, emoji)]
    assert generation.tokens[1].char_offset == 3


def test_the_end_of_text_token_is_read_and_never_stored(reading: _Reading) -> None:
    """llama-server lists the end-of-generation token that ends an answer (its piece empty
    or, printed as special, ``<|im_end|>``); in process it is never part of the answer, so it
    is checked and dropped: the same tokens, text and count as without it."""
    plain = _generation(reading, llama_server_answer())
    for piece in (b"", b"<|im_end|>"):
        answer = llama_server_answer()
        answer["choices"][0]["text"] += piece.decode()
        content = answer["choices"][0]["logprobs"]["content"]
        content.append(_entry(2, piece, -0.1, [_alt(2, piece, -0.1), _alt(30, b".", -3.0)]))
        ended = _generation(reading, answer)
        assert ended.tokens == plain.tokens and ended.text == plain.text == "The text is toxic."
    answer = llama_server_answer()  # (a token that is not the end one stays)
    content = answer["choices"][0]["logprobs"]["content"]
    content.append(_entry(30, b".", -0.1, [_alt(30, b".", -0.1), _alt(2, b"", -3.0)]))
    answer["choices"][0]["text"] += "."
    assert [t.token_id for t in _generation(reading, answer).tokens][-2:] == [30, 30]
    broken = llama_server_answer()  # (an end token still goes through the checks)
    content = broken["choices"][0]["logprobs"]["content"]
    content.append(_entry(2, b"", 0.5, [_alt(2, b"", 0.5)]))
    with pytest.raises(BadAnswerError):
        _generation(reading, broken)


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """A change at ``path`` (keys and list indices joined by '.') of the first choice."""

    def change(answer: dict[str, Any]) -> None:
        here: Any = answer["choices"][0]
        *steps, last = path.split(".")
        for step in steps:
            here = here[int(step)] if isinstance(here, list) else here[step]
        if isinstance(here, list):
            here[int(last)] = value
        else:
            here[last] = value

    return change


def _drop(path: str) -> Callable[[dict[str, Any]], None]:
    def change(answer: dict[str, Any]) -> None:
        here: Any = answer["choices"][0]
        *steps, last = path.split(".")
        for step in steps:
            here = here[int(step)] if isinstance(here, list) else here[step]
        del here[last]

    return change


FIRST = "logprobs.content.0"


def _ids(token_id: int) -> Callable[[dict[str, Any]], None]:
    """The first token's id, and its own top-k entry's, changed to ``token_id``."""

    def change(answer: dict[str, Any]) -> None:
        entry = answer["choices"][0]["logprobs"]["content"][0]
        entry["id"] = entry["top_logprobs"][0]["id"] = token_id

    return change


def _token_short_of_its_bytes(answer: dict[str, Any]) -> None:
    """The first entry's bytes a whole 4-byte character its token leaves out."""
    entry = answer["choices"][0]["logprobs"]["content"][0]
    entry["token"], entry["bytes"] = "", list("😀".encode())


HOSTILE: list[tuple[str, Callable[[dict[str, Any]], None], str]] = [
    ("content-null", _set("logprobs.content", None), "logprobs.content is null"),
    ("content-empty", _set("logprobs.content", []), "without its tokens"),
    ("entry-not-object", _set(FIRST, "The"), "token 0 of 'The' (not an object)"),
    ("id-missing", _drop(f"{FIRST}.id"), "token 0's id of null"),
    ("id-bool", _set(f"{FIRST}.id", True), "token 0's id of True"),
    ("id-float", _set(f"{FIRST}.id", 504.0), "token 0's id of 504.0"),
    ("id-negative", _set(f"{FIRST}.id", -1), "token 0's id of -1 (negative)"),
    ("id-outside", _ids(49152), "id 49152, outside the model's vocabulary"),
    ("top-id-outside", _set(f"{FIRST}.top_logprobs.1.id", 10**9), "outside the model's"),
    ("id-other-piece", _ids(1694), "bytes b'The' that are not token 1694's b' text'"),
    ("bytes-null", _set(f"{FIRST}.bytes", None), "token 0 whose bytes are null"),
    ("bytes-256", _set(f"{FIRST}.bytes", [84, 104, 256]), "whose bytes are [84, 104, 256]"),
    ("bytes-string", _set(f"{FIRST}.bytes", "The"), "whose bytes are 'The'"),
    ("bytes-huge", _set(f"{FIRST}.bytes", [65] * 300), "whose bytes are"),
    ("bytes-negative", _set(f"{FIRST}.bytes", [-1, 84]), "whose bytes are [-1, 84]"),
    ("token-4-bytes-short", _token_short_of_its_bytes, "whose token '' is not its bytes"),
    ("token-null", _set(f"{FIRST}.token", None), "token 0 whose token is null"),
    ("token-not-bytes", _set(f"{FIRST}.token", "A"), "whose token 'A' is not its bytes"),
    ("logprob-nan", _set(f"{FIRST}.logprob", math.nan), "of nan (not finite)"),
    ("logprob-inf", _set(f"{FIRST}.logprob", -math.inf), "of -inf (not finite)"),
    ("logprob-positive", _set(f"{FIRST}.logprob", 0.5), "of 0.5 (above 0"),
    ("logprob-string", _set(f"{FIRST}.logprob", "-0.25"), "of '-0.25' (not a number)"),
    ("top-not-list", _set(f"{FIRST}.top_logprobs", {"The": -0.25}), "top_logprobs of"),
    ("top-too-many", _set(f"{FIRST}.top_logprobs.2", _alt(30, b".", -4.0)), "at most 2"),
    ("top-not-object", _set(f"{FIRST}.top_logprobs.1", 5), "top token 1 of token 0 of 5"),
    ("top-nan", _set(f"{FIRST}.top_logprobs.1.logprob", math.nan), "not finite"),
    ("top-unsorted", _set(f"{FIRST}.top_logprobs.1.logprob", -0.1), "not sorted"),
    ("top-same-id", _set(f"{FIRST}.top_logprobs.1", _alt(504, b"The", -1.0)), "one id twice"),
    ("token-vs-its-top", _set(f"{FIRST}.logprob", -0.75), "but -0.25 in its top_logprobs"),
    ("top-mass-over-1", _set(f"{FIRST}.top_logprobs.1.logprob", -0.3), "sum to 1.52 (more"),
    ("text-not-bytes", _set("text", "The text is nice."), "not its tokens' bytes"),
    ("text-null", _set("text", None), "whose text is null"),
    ("text-beyond-its-tokens", _set("text", "The text is toxic.!"), "not its tokens' bytes"),
    # one id, one text: an alternative's bytes are its id's piece (they are stored as its text)
    (
        "own-id-other-bytes",
        _set(f"{FIRST}.top_logprobs.0", _alt(504, b"Tho", -0.25)),
        "top token 0 of token 0: bytes b'Tho' that are not token 504's b'The'",
    ),
    (
        "other-id-other-bytes",
        _set(f"{FIRST}.top_logprobs.1", _alt(550, b" toxic", -2.25)),
        "top token 1 of token 0: bytes b' toxic' that are not token 550's b' other'",
    ),
]


@pytest.mark.parametrize(("name", "change", "said"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_a_hostile_llama_server_answer_is_refused_in_one_line(
    reading: _Reading, name: str, change: Callable[[dict[str, Any]], None], said: str
) -> None:
    answer = llama_server_answer()
    if name == "top-too-many":
        answer["choices"][0]["logprobs"]["content"][0]["top_logprobs"].append(None)
    change(answer)
    with pytest.raises(BadAnswerError) as raised:
        _generation(reading, answer)
    assert said in str(raised.value) and "\n" not in str(raised.value)


def test_a_token_outside_its_top_k_is_at_most_as_likely_as_their_last(
    reading: _Reading,
) -> None:
    answer = llama_server_answer()
    entry = answer["choices"][0]["logprobs"]["content"][1]
    entry["top_logprobs"] = [_alt(550, b" other", -1.0), _alt(314, b" is", -1.2)]
    entry["logprob"] = -1.5  # less likely than both: fine
    _generation(reading, copy.deepcopy(answer))
    entry["logprob"] = -1.1  # likelier than -1.2 yet outside: refused
    with pytest.raises(BadAnswerError, match="outside its top-k yet likelier"):
        _generation(reading, answer)


def test_bytes_that_end_in_a_piece_yet_split_no_character_are_refused(
    reading: _Reading,
) -> None:
    """Only a character split over tokens may carry bytes before its id's piece."""
    answer = llama_server_answer()
    answer["choices"][0]["logprobs"]["content"][0] = _entry(314, b"xx is", -0.25, [])
    answer["choices"][0]["text"] = "xx is text is toxic."
    with pytest.raises(BadAnswerError, match="not token 314's"):
        _generation(reading, answer)


def test_the_legacy_reader_still_reads_the_legacy_shape_alone() -> None:
    read = read_answer(legacy_answer(), 2)
    assert read.entries is None
    assert read.positions[1] == (" text", -1.5, {" other": -0.5, " text": -1.5})


def test_the_probe_reads_llama_server_s_top_k_by_id(monkeypatch: pytest.MonkeyPatch) -> None:
    from haf_tui.inference import server

    recorded = llama_server_answer()
    monkeypatch.setattr(server, "fetch_json", lambda *a, **k: (200, recorded))
    assert first_top_logprobs("http://127.0.0.1:1", 1.0) == {"#504": -0.25, "#550": -2.25}


def test_a_byte_token_written_as_the_replacement_character_is_read(reading: _Reading) -> None:
    """llama-server (the scalar build, on the demo's texts) wrote a top alternative that is a
    byte of no whole character (token 218, byte 80) as ``"token": "\ufffd"``: read by its
    bytes (the run stopped with "no server is left" before); the replacement character for
    bytes that are a whole character is still refused."""
    answer = llama_server_answer()
    emoji = "😀".encode()
    answer["choices"][0]["text"] = "The😀"
    byte_token = {**_alt(218, b"\x80", -0.5), "token": "\ufffd"}
    answer["choices"][0]["logprobs"]["content"][1:] = [
        _entry(218, emoji, -0.5, [byte_token, _alt(550, b" other", -1.0)])
    ]
    generation = _generation(reading, answer)
    assert generation.tokens[1].top_ids == (218, 550)
    answer["choices"][0]["logprobs"]["content"][1]["top_logprobs"][1]["token"] = "\ufffd"
    with pytest.raises(BadAnswerError, match=r"whose token '.' is not its bytes b' other'"):
        _generation(reading, answer)


def test_bytes_that_start_inside_a_character_are_refused(reading: _Reading) -> None:
    """'€' (e2 82 ac) as token 173 (e2) then token 122 (ac) carrying 82 ac: 82 starts no
    character, so the second entry's bytes are no split character's; refused although the
    answer's bytes joined spell its text."""
    answer = llama_server_answer()
    answer["choices"][0]["text"] = "The€"
    answer["choices"][0]["logprobs"]["content"][1:] = [
        _entry(173, b"\xe2", -0.5, [_alt(173, b"\xe2", -0.5)]),
        _entry(122, b"\x82\xac", -0.5, [_alt(122, b"\xac", -0.5)]),
    ]
    with pytest.raises(BadAnswerError, match="not token 122's"):
        _generation(reading, answer)


def test_ids_run_to_the_vocabulary_s_size_less_one() -> None:
    """An id equal to the vocabulary's size is outside it, refused before its piece is asked
    for (llama.cpp aborts the whole process on an id past its vocabulary); the last id is
    in. A vocabulary of 3 pieces; asking for a piece outside it fails the test."""
    pieces = [b"a", b"b", b"c"]

    def piece(token_id: int, special: bool) -> bytes:
        assert 0 <= token_id < len(pieces), f"the piece of id {token_id} was asked for"
        return pieces[token_id]

    check_entries([Entry(2, b"c", -0.5, ((2, "c", -0.5), (0, "a", -1.0)), (b"c", b"a"))], 3, piece)
    for entry in (
        Entry(3, b"d", -0.5, (), ()),
        Entry(2, b"c", -0.5, ((2, "c", -0.5), (3, "d", -1.0)), (b"c", b"d")),  # in its top-k
    ):
        with pytest.raises(BadAnswerError, match="id 3, outside the model's vocabulary of 3"):
            check_entries([entry], 3, piece)


def test_one_id_written_plain_as_the_token_and_special_among_its_alternatives_is_refused(
    reading: _Reading,
) -> None:
    """Both are pieces of the end token (2: empty plain, ``<|im_end|>`` special), but one
    answer gives its entry one and its top_logprobs the other: the token's stored text and
    its alternative's would differ for one id (llama-server writes both alike: 434 entries,
    2,170 alternatives checked, docs/servers.md)."""
    answer = llama_server_answer()
    content = answer["choices"][0]["logprobs"]["content"]
    content.append(_entry(2, b"", -0.1, [_alt(2, b"<|im_end|>", -0.1), _alt(30, b".", -3.0)]))
    with pytest.raises(BadAnswerError) as raised:
        _generation(reading, answer)
    said = str(raised.value)
    assert said == (
        "token 5 names id 2 with bytes b'', but with b'<|im_end|>' in its top_logprobs "
        "(one id, one token)"
    )
