"""A server's answers and requests at their edges (issue 42 §5), against stand-ins on
127.0.0.1 (vocabulary only: no model runs): an answer holding 3 bytes of a 4-byte character
is refused, whatever its text says (a server that sends it once is retried and the request
goes on; one that always does is dropped after three tries); a prompt that leaves one token
of the context is sent for that one token, and one that fills the context is one line,
never sent with ``max_tokens: 0``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from haf_tui.defaults import embedded_model_path
from haf_tui.inference.base import InferenceError
from haf_tui.inference.server import Endpoint, ServerError
from haf_tui.inference.server_backend import ServerBackend
from tests.test_server_content import _alt, _entry, llama_server_answer
from tests.test_server_hostile import MESSAGES, SETTINGS, StandIn, answer, serve
from tests.test_server_pool_llama_server import LLAMA_SERVER_MODELS

__all__ = ["serve"]  # (the stand-ins' fixture)

EMOJI = "😀".encode()  # F0 9F 98 80: the embedded GGUF's tokens 10813, 242, 218
SHORT = EMOJI[:3]


def _backend(server: StandIn, n_ctx: int = 2048) -> ServerBackend:
    return ServerBackend(embedded_model_path(), [Endpoint(server.url, 1)], n_ctx=n_ctx, check=False)


def _three_of_four(text: str) -> dict[str, Any]:
    """llama-server's answer "The" and then an entry of 😀's first 3 bytes (its last piece
    is token 242's), under ``text``."""
    made = llama_server_answer()
    choice = made["choices"][0]
    choice["text"] = text
    choice["logprobs"]["content"][1:] = [
        _entry(242, SHORT, -0.5, [_alt(242, SHORT, -0.5), _alt(550, b" other", -1.0)])
    ]
    return made


TEXTS = ["The", "The\ufffd", "The😀", "The\ufffd\ufffd\ufffd"]


def test_the_3_byte_entry_ends_with_token_242_s_piece() -> None:
    """(The answer below is one a check of pieces alone lets through: its bytes end with
    the piece of its id, after bytes that start a character.)"""
    from haf_tui.inference.llama import LlamaCppBackend

    local = LlamaCppBackend(embedded_model_path(), vocab_only=True)
    try:
        pieces = [local.token_piece(i) for i in (10813, 242, 218)]
    finally:
        local.close()
    assert b"".join(pieces) == EMOJI and b"".join(pieces[:2]) == SHORT


@pytest.mark.parametrize("text", TEXTS)
def test_3_bytes_of_a_4_byte_character_are_refused_and_the_server_dropped(
    serve: Callable[..., StandIn], text: str
) -> None:
    server = serve(lambda n, body: _three_of_four(text), LLAMA_SERVER_MODELS)
    backend = _backend(server)
    with pytest.raises(ServerError) as raised:
        backend.generate(MESSAGES, SETTINGS)
    line = str(raised.value)
    assert "no server is left" in line and "not its tokens' bytes" in line, line
    assert server.requests == 3  # tried three times, then dropped
    backend.close()


def test_3_bytes_of_a_4_byte_character_once_is_retried(serve: Callable[..., StandIn]) -> None:
    def plan(number: int, body: dict[str, Any]) -> Any:
        return _three_of_four("The") if number == 1 else llama_server_answer()

    server = serve(plan, LLAMA_SERVER_MODELS)
    backend = _backend(server)
    generation = backend.generate(MESSAGES, SETTINGS)
    assert generation.text == "The text is toxic." and server.requests == 2
    assert all(token.piece != SHORT for token in generation.tokens)
    backend.close()


def _prompt_tokens(server: StandIn) -> int:
    backend = _backend(server)
    try:
        return len(backend.tokenize_prompt(backend.render(MESSAGES)))
    finally:
        backend.close()


def test_a_prompt_that_leaves_one_token_is_sent_for_that_token(
    serve: Callable[..., StandIn],
) -> None:
    server = serve(lambda n, body: answer(["The"], finish="length", prompt_tokens=0))
    backend = _backend(server, n_ctx=_prompt_tokens(server) + 1)
    generation = backend.generate(MESSAGES, SETTINGS)
    assert [body["max_tokens"] for body in server.bodies] == [1]
    assert generation.text == "The"
    backend.close()


def test_a_prompt_that_fills_the_context_is_one_line_and_not_sent(
    serve: Callable[..., StandIn],
) -> None:
    server = serve(lambda n, body: answer(["The"], finish="length", prompt_tokens=0))
    size = _prompt_tokens(server)
    backend = _backend(server, n_ctx=size)
    with pytest.raises(InferenceError) as raised:
        backend.generate(MESSAGES, SETTINGS)
    assert str(raised.value) == (
        f"prompt of {size} tokens does not fit the context of {size} tokens: raise --n-ctx"
    )
    assert server.requests == 0  # never asked for 0 tokens
    backend.close()
