"""Guards for the ``--server`` client (issue 33 §2), with no server and no model: the answer
rules refuse an empty or list ``top_logprobs`` for a token; the pool drops an endpoint after
its third failure in a row (not its fourth), a good answer starts the count again, and a run
asked to stop cancels a request still in flight once the grace period is over.

The pool talks to an :class:`httpx.MockTransport` (each endpoint's answers scripted here), and
the backend renders and tokenizes without a GGUF (a stand-in for the local vocabulary)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest

from haf_tui.config import DecodingSettings
from haf_tui.inference import server_backend, server_pool
from haf_tui.inference.base import GenerationRequest, ListSource
from haf_tui.inference.chat import PromptSegment, RenderedPrompt
from haf_tui.inference.server import Endpoint, ServerError, ServerInfo
from haf_tui.inference.server_answers import BadAnswerError, checked_answer
from haf_tui.inference.server_backend import ServerBackend
from haf_tui.inference.server_pool import ServerPool
from haf_tui.messages import ChatMessage

# ------------------------------------------------------------------ the answer rules


def _answer(tops: Any) -> dict[str, Any]:
    logprobs = {"tokens": ["a"], "token_logprobs": [-0.5], "top_logprobs": tops}
    return {"choices": [{"text": "a", "logprobs": logprobs}]}


@pytest.mark.parametrize(
    "tops",
    [
        [[]],  # a token's top-k as an empty list
        [[["a", -0.5]]],  # … as a list of pairs
        [],  # no top-k for the one token
        [{}, {}],  # one too many
        {"a": -0.5},  # an object where the list goes
    ],
)
def test_a_top_logprobs_that_is_no_object_per_token_is_refused(tops: Any) -> None:
    with pytest.raises(BadAnswerError) as raised:
        checked_answer(_answer(tops))
    assert "top_logprobs" in str(raised.value) and "\n" not in str(raised.value)


def test_an_empty_top_k_object_is_a_token_without_alternatives() -> None:
    _, positions = checked_answer(_answer([{}]))
    assert positions == [("a", -0.5, {})]


# ------------------------------------------------------------------ the pool, scripted

GOOD = {
    "model": "m",
    "choices": [
        {
            "text": "ok",
            "finish_reason": "stop",
            "logprobs": {"tokens": ["ok"], "token_logprobs": [-0.1], "top_logprobs": None},
        }
    ],
}


PIECES = (b"", b"ok", b" post")
"""The stand-in vocabulary's token pieces."""


class _Vocabulary:
    """Stands in for the GGUF's vocabulary (``LlamaCppBackend(..., vocab_only=True)``): a
    one-segment prompt of the user's text, two prompt tokens, three pieces."""

    def __init__(self, path: Any, **_: Any):
        self.info = SimpleNamespace(path=Path(path))
        self.chat_format = "plain"
        self.n_vocab = len(PIECES)

    def render(self, messages: Any) -> RenderedPrompt:
        text = "".join(m.content for m in messages)
        return RenderedPrompt((PromptSegment(text, True),), "plain", False)

    def tokenize_prompt(self, prompt: RenderedPrompt) -> list[int]:
        return [1, 2]

    def token_piece(self, token_id: int, **_: Any) -> bytes:
        return PIECES[token_id]

    def close(self) -> None:
        pass


def _backend(monkeypatch: pytest.MonkeyPatch, endpoints: list[Endpoint]) -> ServerBackend:
    """A server backend built as ``haf run --server`` builds it, over the stand-in vocabulary
    and with each server's identity given (no probe)."""
    monkeypatch.setattr(server_backend, "LlamaCppBackend", _Vocabulary)
    monkeypatch.setattr(
        server_backend, "identify_server", lambda *a: ServerInfo(a[-1], "stand-in", "0", "m")
    )
    return ServerBackend("m.gguf", endpoints, check=False)


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """Routes the pool's requests by host to ``served["scripts"][host]`` (the answer to the
    host's n-th request; None: it never answers) and counts them (``served["counts"]``)."""
    counts: dict[str, list[int]] = {}
    scripts: dict[str, Callable[[int], httpx.Response | None]] = {}
    real = httpx.AsyncClient

    async def handle(request: httpx.Request) -> httpx.Response:
        host = request.url.host
        counts.setdefault(host, []).append(len(counts.get(host, [])) + 1)
        answer = scripts[host](len(counts[host]))
        if answer is None:
            await asyncio.sleep(3600)  # (a server that hangs)
            raise AssertionError("unreachable")
        return answer

    def client(*args: Any, **kwargs: Any) -> httpx.AsyncClient:
        return real(*args, transport=httpx.MockTransport(handle), **kwargs)

    monkeypatch.setattr(httpx, "AsyncClient", client)
    state: dict[str, Any] = {"counts": counts, "scripts": scripts}
    yield state


def _requests(n: int) -> list[GenerationRequest]:
    settings = DecodingSettings(temperature=0.0, max_new_tokens=4)
    return [
        GenerationRequest([ChatMessage("user", f"post {i}")], settings, tag=i) for i in range(n)
    ]


def _response(status: int, body: bytes) -> httpx.Response:
    """A response as a server streams it (a client may read it in pieces, with a size cap)."""
    headers = {"content-type": "application/json", "content-length": str(len(body))}
    return httpx.Response(status, headers=headers, stream=httpx.ByteStream(body))


def _fails(_: int) -> httpx.Response:
    return _response(500, b"down")


def _good(_: int) -> httpx.Response:
    return _response(200, json.dumps(GOOD).encode())


def test_an_endpoint_is_dropped_at_its_third_failure_in_a_row(
    served: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``bad`` fails every request: it gets three, then the pool gives its work to ``good``;
    every request is answered."""
    served["scripts"].update({"bad": _fails, "good": _good})
    backend = _backend(monkeypatch, [Endpoint("http://bad:1", 1), Endpoint("http://good:1", 1)])
    source = ListSource(_requests(8))
    ServerPool(backend).serve(source)
    assert sorted(source.results) == list(range(8))
    assert len(served["counts"]["bad"]) == 3
    bad, good = backend.endpoints
    assert not bad.alive and good.alive and bad.errors == ["HTTP 500"] * 3


def test_a_good_answer_starts_the_count_of_failures_again(
    served: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One endpoint that fails twice, answers, fails twice, answers…: never three failures
    in a row, so it is never dropped (six failures in all) and the run finishes."""
    served["scripts"]["flaky"] = lambda n: _good(n) if n % 3 == 0 else _fails(n)
    backend = _backend(monkeypatch, [Endpoint("http://flaky:1", 1)])
    source = ListSource(_requests(3))
    ServerPool(backend).serve(source)
    assert sorted(source.results) == [0, 1, 2]
    (flaky,) = backend.endpoints
    assert flaky.alive and len(flaky.errors) == 6 and flaky.failures == 0


def test_three_failures_in_a_row_with_no_other_endpoint_stop_the_run_in_one_line(
    served: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    served["scripts"]["bad"] = _fails
    backend = _backend(monkeypatch, [Endpoint("http://bad:1", 1)])
    with pytest.raises(ServerError, match="no server is left") as raised:
        ServerPool(backend).serve(ListSource(_requests(1)))
    assert "\n" not in str(raised.value) and len(served["counts"]["bad"]) == 3


class _StopSoon(ListSource):
    """Asks the run to stop once its request is in flight."""

    def __init__(self, requests: list[GenerationRequest]):
        super().__init__(requests)
        self.asked_at: float | None = None

    def take(self, limit: int, *, wait: bool) -> list[GenerationRequest]:
        taken = super().take(limit, wait=wait)
        if taken:
            self.asked_at = time.monotonic()
        return taken

    def stop_requested(self) -> bool:
        return self.asked_at is not None


def test_a_stop_cancels_a_request_in_flight_after_the_grace_period(
    served: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server never answers; the run is asked to stop: the pool returns after the grace
    period (not the request's timeout), with the request cancelled and no result."""
    monkeypatch.setattr(server_pool, "STOP_GRACE_SECONDS", 0.5)
    served["scripts"]["hangs"] = lambda _: None
    backend = _backend(monkeypatch, [Endpoint("http://hangs:1", 1)])
    source = _StopSoon(_requests(1))
    failed: list[BaseException] = []

    def serve() -> None:
        try:
            ServerPool(backend).serve(source)
        except BaseException as exc:  # (reported below)
            failed.append(exc)

    worker = threading.Thread(target=serve, daemon=True)
    started = time.monotonic()
    worker.start()
    worker.join(timeout=20)
    assert not worker.is_alive(), "a request in flight held the stopped run"
    assert not failed, failed
    assert time.monotonic() - started < 10
    assert source.results == {} and len(served["counts"]["hangs"]) == 1
    assert backend.endpoints[0].in_flight == 0  # (its task ended: cancelled)
