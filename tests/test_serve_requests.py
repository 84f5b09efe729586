"""The parts of ``haf serve``'s guard as units (issue 33 §3): what a completion request may
hold (exactly what haf's client sends), the context check at its boundary, the error
sanitising of the app's own answers, the log's rate limit and one-line format, and which
hosts need an API key. The real server's behaviour is in ``test_serve_guard``."""

from __future__ import annotations

import json
import logging
from types import SimpleNamespace
from typing import Any

import pytest

from haf_tui.config import DecodingSettings
from haf_tui.inference.base import InferenceError
from haf_tui.inference.serve import check_exposure, is_loopback
from haf_tui.inference.serve_guard import (
    GuardSettings,
    ServeGuard,
    addressed_to_loopback,
    authorized,
)
from haf_tui.inference.serve_limits import OneLine, RateLimit
from haf_tui.inference.serve_requests import (
    Completion,
    RefusedRequestError,
    check_completion,
    check_context,
)
from haf_tui.inference.server import PROBE_PROMPT, completion_body

N_CTX, N_VOCAB = 512, 1000


def _haf_body(**changes: Any) -> dict[str, Any]:
    settings = DecodingSettings(top_logprobs=20, temperature=5.0, top_p=1.0, seed=0)
    body = completion_body(PROBE_PROMPT, settings, 8)
    body["logit_bias"] = {"999": 100.0}  # as a forced token is sent
    return {**body, **changes}


def _refused(body: Any) -> str:
    with pytest.raises(RefusedRequestError) as refused:
        check_completion(body, N_CTX, N_VOCAB)
    assert refused.value.status == 400
    return refused.value.message


def test_what_hafs_client_sends_is_accepted() -> None:
    assert check_completion(_haf_body(), N_CTX, N_VOCAB) == Completion(PROBE_PROMPT, 8)
    assert check_completion(_haf_body(max_tokens=N_CTX, seed=0, logprobs=0), N_CTX, N_VOCAB)


@pytest.mark.parametrize(
    ("changes", "says"),
    [
        ({"grammar": "root ::= root"}, "grammar"),
        ({"logprobs": 21}, "logprobs"),
        ({"n_probs": 49152}, "n_probs"),
        ({"max_tokens": N_CTX + 1}, "max_tokens"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"max_tokens": True}, "max_tokens"),
        ({"prompt": ["a", "b"]}, "prompt"),
        ({"prompt": ""}, "prompt"),
        ({"temperature": float("nan")}, "temperature"),
        ({"temperature": 5.5}, "temperature"),
        ({"top_k": -1}, "top_k"),
        ({"seed": 1.5}, "seed"),
        ({"stream": True}, "stream"),
        ({"stream": "yes"}, "stream"),
        ({"logit_bias": {str(N_VOCAB): 1.0}}, "vocabulary"),
        ({"logit_bias": {"-1": 1.0}}, "token id"),
        ({"logit_bias": {"1": 1000.0}}, "bias"),
        ({"logit_bias": {str(n): 1.0 for n in range(17)}}, "at most"),
        ({"logit_bias": ["1"]}, "logit_bias"),
        ({"model": "m" * 300}, "model"),
    ],
)
def test_what_haf_would_not_send_is_refused(changes: dict[str, Any], says: str) -> None:
    assert says in _refused(_haf_body(**changes))


def test_a_body_that_is_no_object_is_refused() -> None:
    assert "JSON object" in _refused(["prompt"])


def test_the_prompt_and_max_tokens_fill_the_context_at_most() -> None:
    def count(prompt: str) -> int:
        return len(prompt.split())

    assert check_context(Completion("a " * 500, 12), N_CTX, count) == 500  # exactly full
    with pytest.raises(RefusedRequestError, match="exceed the context of 512"):
        check_context(Completion("a " * 500, 13), N_CTX, count)


@pytest.mark.parametrize(
    ("header", "ok"),
    [(b"Bearer the-key-123", True), (b"bearer the-key-123", True), (b"Bearer the-key-1234", False),
     (b"Bearer ", False), (b"the-key-123", False), (None, False)],
)  # fmt: skip
def test_the_api_key_is_compared_exactly(header: bytes | None, ok: bool) -> None:
    headers = [(b"authorization", header)] if header is not None else []
    assert authorized({"headers": headers}, "the-key-123") is ok
    assert authorized({"headers": headers}, None)  # no key asked: everyone


@pytest.mark.parametrize(
    ("host", "ok"),
    [(b"127.0.0.1:8080", True), (b"localhost:8080", True), (b"LOCALHOST", True),
     (b"[::1]:8080", True), (b"127.9.9.9", True), (None, True), (b"evil.example:8080", False),
     (b"evil.example", False), (b"10.0.0.5:8080", False), (b"[2001:db8::1]:80", False),
     (b"localhost.evil.example", False), (b"127.0.0.1.evil.example", False)],
)  # fmt: skip
def test_without_a_key_only_requests_to_a_loopback_name_are_served(
    host: bytes | None, ok: bool
) -> None:
    headers = [(b"host", host)] if host is not None else []
    assert addressed_to_loopback({"headers": headers}) is ok


async def _leaky_app(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 500, "headers": []})
    await send({"type": "http.response.body", "body": b"Traceback ... site-packages/x.py"})


async def _failing_app(scope: Any, receive: Any, send: Any) -> None:
    raise RuntimeError("/home/someone/model.gguf: boom")


@pytest.mark.parametrize("app", [_leaky_app, _failing_app])
async def test_the_apps_own_errors_are_answered_without_internals(app: Any) -> None:
    settings = GuardSettings(N_CTX, N_VOCAB, None, lambda prompt: 1, "m.gguf")
    guard = ServeGuard(app, settings)
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": json.dumps(_haf_body()).encode()}

    async def send(message: Any) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/v1/completions",
             "headers": [(b"content-type", b"application/json")]}  # fmt: skip
    await guard(scope, receive, send)
    assert [m["type"] for m in sent] == ["http.response.start", "http.response.body"]
    assert sent[0]["status"] == 500
    assert json.loads(sent[1]["body"]) == {
        "error": {"message": "the server failed on this request", "type": "server_error"}
    }


def test_the_log_is_rate_limited(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1000.0]
    monkeypatch.setattr("haf_tui.inference.serve_limits.time.monotonic", lambda: now[0])
    limit = RateLimit(per_minute=3)

    def record(message: str) -> logging.LogRecord:
        return logging.LogRecord("x", logging.WARNING, __file__, 1, message, None, None)

    assert [limit.filter(record(f"m{n}")) for n in range(5)] == [True] * 3 + [False] * 2
    now[0] += 59.9
    assert not limit.filter(record("still this minute"))
    now[0] += 0.1
    after = record("next minute")
    assert limit.filter(after)
    assert after.getMessage() == "(3 log lines dropped in the last minute) next minute"


def test_a_log_record_is_one_line_without_a_traceback() -> None:
    try:
        raise OSError("Too many open files")
    except OSError:
        import sys

        record = logging.LogRecord(
            "asyncio", logging.ERROR, __file__, 1, "accept failed\non %s", ("fd",), sys.exc_info()
        )
    line = OneLine().format(record)
    assert line == "haf serve: ERROR accept failed on fd: OSError: Too many open files"


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"])
def test_loopback_hosts_need_no_key(host: str) -> None:
    assert is_loopback(host)
    check_exposure(host, None)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "", "192.0.2.1", "no-such-host.invalid"])
def test_other_hosts_need_a_key(host: str) -> None:
    assert not is_loopback(host)
    with pytest.raises(InferenceError, match="--api-key"):
        check_exposure(host, None)
    check_exposure(host, "a-key-of-some-length")


class _Transport:
    """A transport that records whether it was aborted."""

    def __init__(self) -> None:
        self.aborted = False

    def abort(self) -> None:
        self.aborted = True

    def close(self) -> None:
        self.aborted = True

    def is_closing(self) -> bool:
        return self.aborted

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 1), "sockname": ("127.0.0.1", 2)}.get(name, default)


async def test_past_the_cap_the_longest_waiting_on_its_client_goes_else_the_new_one() -> None:
    pytest.importorskip("uvicorn")
    import asyncio

    import h11
    import uvicorn
    from uvicorn.server import ServerState

    from haf_tui.inference.serve_limits import capped_protocol

    protocol = capped_protocol(2, first_request_s=60)
    config = uvicorn.Config(app=_leaky_app, http=protocol, log_config=None)
    state = ServerState()
    loop = asyncio.get_running_loop()

    def connect() -> tuple[Any, _Transport]:
        connection, transport = protocol(config, state, {}, loop), _Transport()
        connection.connection_made(transport)
        return connection, transport

    def answering(connection: Any) -> None:  # its request whole, its answer not yet sent
        connection.conn = SimpleNamespace(their_state=h11.DONE)
        connection.cycle = SimpleNamespace(response_complete=False)

    (first, first_t), (second, second_t) = connect(), connect()
    third, third_t = connect()  # past the cap: the oldest waiting one (no request yet) goes
    assert first_t.aborted and not second_t.aborted and not third_t.aborted
    assert state.connections == {second, third}
    answering(second)
    third.conn = SimpleNamespace(their_state=h11.SEND_BODY)  # still sending its body
    third.cycle = SimpleNamespace(response_complete=False)
    fourth, fourth_t = connect()  # the one still sending goes, not the one being answered
    assert third_t.aborted and not second_t.aborted and not fourth_t.aborted
    answering(fourth)
    _, fifth_t = connect()  # every other one answered: the new one goes
    assert fifth_t.aborted and not second_t.aborted and not fourth_t.aborted
    assert state.connections == {second, fourth}
    fourth.cycle = SimpleNamespace(response_complete=True)  # answered: between two requests
    sixth, sixth_t = connect()
    assert fourth_t.aborted and not second_t.aborted and not sixth_t.aborted
    for connection in (first, second, third, fourth, sixth):
        connection.cycle, connection.conn = None, h11.Connection(h11.SERVER)
        connection.connection_lost(None)
