"""The request loop (``server_pool``): work goes to the least busy endpoint; and what it
sends llama-server and takes back, against a
stand-in on 127.0.0.1 that names itself llama-server (``owned_by: llamacpp``) and answers in
its ``logprobs.content`` shape with the embedded GGUF's real pieces (vocabulary only: no model
runs): the prompt goes as the in-process token ids, each forced token after the ones before
it, by ``logit_bias``; a server that does not take the forced token, or a forced token that
ends inside a character (llama-server reports no entry for it), is one line."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from haf_tui.config import DecodingSettings
from haf_tui.inference.base import GenerationRequest, ListSource
from haf_tui.inference.server import Endpoint, ServerError
from haf_tui.inference.server_backend import ServerBackend
from haf_tui.messages import ChatMessage
from tests.test_server_content import MODEL, llama_server_answer
from tests.test_server_hostile import StandIn, _backend, answer, serve

__all__ = ["serve"]  # (the stand-ins' fixture)

MESSAGES = [ChatMessage("user", "Is the following TEXT toxic? TEXT: you are an idiot.")]
SETTINGS = DecodingSettings(temperature=0.0, max_new_tokens=8, top_logprobs=2)
LLAMA_SERVER_MODELS = {"object": "list", "data": [{"id": MODEL, "owned_by": "llamacpp"}]}


@pytest.fixture
def backend_on(
    serve: Callable[..., StandIn],
) -> Iterator[Callable[[Callable[[int, dict[str, Any]], Any]], tuple[ServerBackend, StandIn]]]:
    made: list[ServerBackend] = []

    def start(plan: Callable[[int, dict[str, Any]], Any]) -> tuple[ServerBackend, StandIn]:
        from haf_tui.defaults import embedded_model_path

        server = serve(plan, LLAMA_SERVER_MODELS)
        backend = ServerBackend(
            embedded_model_path(), [Endpoint(server.url, 1)], n_ctx=2048, check=False
        )
        made.append(backend)
        assert backend.servers()[0].kind == "llama-server"
        return backend, server

    yield start
    for backend in made:
        backend.close()


def forced_answer(token_id: int, piece: bytes) -> dict[str, Any]:
    """llama-server's answer of one token, ``token_id``, its bytes ``piece``."""
    text = piece.decode("utf-8", errors="ignore")
    entry = {"id": token_id, "token": text, "bytes": list(piece), "logprob": -0.5}
    entry["top_logprobs"] = [dict(entry)]
    return {
        "model": MODEL,
        "choices": [{"text": text, "finish_reason": "length", "logprobs": {"content": [entry]}}],
        "usage": {"prompt_tokens": 12},
    }


def biased(backend: ServerBackend) -> Callable[[int, dict[str, Any]], Any]:
    """A server that honours ``logit_bias``: it answers the biased token."""

    def plan(number: int, body: dict[str, Any]) -> Any:
        (token_id,) = (int(key) for key in body["logit_bias"])
        return forced_answer(token_id, backend.local.token_piece(token_id))

    return plan


def test_a_sampled_prompt_goes_as_the_in_process_token_ids(
    backend_on: Callable[..., tuple[ServerBackend, StandIn]],
) -> None:
    backend, server = backend_on(lambda n, body: llama_server_answer())
    generation = backend.generate(MESSAGES, SETTINGS)
    assert generation.text == "The text is toxic."
    (body,) = server.bodies
    assert body["prompt"] == backend.tokenize_prompt(backend.render(MESSAGES))


def test_each_forced_token_is_asked_after_the_prompt_and_the_forced_ones_before_it(
    backend_on: Callable[..., tuple[ServerBackend, StandIn]],
) -> None:
    holder: list[ServerBackend] = []
    backend, server = backend_on(lambda n, body: biased(holder[0])(n, body))
    holder.append(backend)
    forced = backend.forced_tokens("non-toxic")
    assert len(forced) > 1  # (else the ids before a token would not be checked)
    generation = backend.score(MESSAGES, "non-toxic", SETTINGS)
    head = backend.tokenize_prompt(backend.render(MESSAGES))
    assert [body["prompt"] for body in server.bodies] == [
        [*head, *forced[:i]] for i in range(len(forced))
    ]
    assert [body["logit_bias"] for body in server.bodies] == [{str(i): 100.0} for i in forced]
    assert [t.token_id for t in generation.tokens] == forced
    assert generation.text == "non-toxic"


def test_a_server_that_does_not_take_the_forced_token_is_one_line(
    backend_on: Callable[..., tuple[ServerBackend, StandIn]],
) -> None:
    backend, _ = backend_on(lambda n, body: forced_answer(30, b"."))  # (always ".")
    with pytest.raises(ServerError, match="did not take the forced token") as raised:
        backend.score(MESSAGES, "toxic", SETTINGS)
    assert "\n" not in str(raised.value)


def test_a_forced_token_that_ends_inside_a_character_is_one_line(
    backend_on: Callable[..., tuple[ServerBackend, StandIn]],
) -> None:
    holder: list[ServerBackend] = []
    backend, _ = backend_on(lambda n, body: biased(holder[0])(n, body))
    holder.append(backend)
    assert backend.local.token_piece(backend.forced_tokens("😀")[0]) != "😀".encode()
    with pytest.raises(ServerError, match="ends inside a character") as raised:
        backend.score(MESSAGES, "😀", SETTINGS)
    assert "\n" not in str(raised.value) and "score it in process" in str(raised.value)


def test_requests_go_to_the_least_busy_endpoint(serve: Callable[..., StandIn]) -> None:
    """Two endpoints of one slot each, two requests at once: one each (the busier one, full
    already, would take both)."""
    first, second = serve(lambda n, body: answer()), serve(lambda n, body: answer())
    backend = _backend(first, second)
    source = ListSource([GenerationRequest(MESSAGES, SETTINGS, tag=n) for n in range(2)])
    backend.concurrent(2).serve(source)
    backend.close()
    assert set(source.results) == {0, 1}
    assert (first.requests, second.requests) == (1, 1)
