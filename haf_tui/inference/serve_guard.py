"""The ASGI layer in front of llama-cpp-python's server app in ``haf serve``: only the two
routes haf's client uses (``GET /v1/models``, ``POST /v1/completions``; no ``/docs``, chat,
embeddings or tokenizer routes), the API key when one is set, the body read up to a cap and
checked (:mod:`haf_tui.inference.serve_requests`) before the model sees it, without a key
only requests addressed to a loopback name (no DNS rebinding from a web page), and every error
answered as OpenAI's ``{"error": {"message", "type"}}`` with no traceback, path or library
in it (the app's own error bodies are replaced)."""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any, Final

from haf_tui.inference.serve_requests import (
    RefusedRequestError,
    check_completion,
    check_context,
    max_body_bytes,
)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

ROUTES: Final[dict[str, str]] = {"/v1/models": "GET", "/v1/completions": "POST"}
GENERIC: Final[dict[int, str]] = {
    400: "invalid request",
    401: "missing or wrong API key",
    403: "without an API key this server answers only requests addressed to 127.0.0.1, [::1] "
    "or localhost",
    404: "not found",
    405: "method not allowed",
    413: "request too large",
    415: "the body must be JSON (Content-Type: application/json)",
}
log = logging.getLogger("haf_tui.serve")


@dataclass(frozen=True)
class GuardSettings:
    """The context (tokens), the vocabulary size, the API key (None: none asked), how to
    count a prompt's tokens as the model will (in a worker thread) and the model's name
    (every request names it: an answer names the model it was given, else its path)."""

    n_ctx: int
    n_vocab: int
    api_key: str | None
    count_tokens: Callable[[str], int]
    model_name: str


def error_body(status: int, message: str) -> bytes:
    """OpenAI's error shape: a message and a type, nothing else."""
    kind = "invalid_request_error" if status < 500 else "server_error"
    return json.dumps({"error": {"message": message, "type": kind}}).encode()


async def send_error(send: Send, status: int, message: str) -> None:
    """A complete JSON error response."""
    body = error_body(status, message)
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _header(scope: Scope, name: bytes) -> bytes:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return bytes(value)
    return b""


def authorized(scope: Scope, api_key: str | None) -> bool:
    """Whether the request carries ``Authorization: Bearer <api_key>`` (always, with no key)."""
    if api_key is None:
        return True
    scheme, _, given = _header(scope, b"authorization").partition(b" ")
    expected = api_key.encode()
    return scheme.lower() == b"bearer" and hmac.compare_digest(given.strip(), expected)


def addressed_to_loopback(scope: Scope) -> bool:
    """Whether the request's ``Host`` names a loopback address or ``localhost`` (or is absent):
    a web page that rebinds its own name to 127.0.0.1 sends its own name, and is refused."""
    host = _header(scope, b"host").decode("latin-1").strip().lower()
    if not host:
        return True
    if host.startswith("["):
        name = host[1 : host.find("]")] if "]" in host else host
    else:
        name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


async def read_body(receive: Receive, limit: int) -> bytes:
    """The request body; a 413 :class:`RefusedRequestError` as soon as it passes ``limit``."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise RefusedRequestError(400, "the client went away")
        chunk = bytes(message.get("body", b""))
        size += len(chunk)
        if size > limit:
            raise RefusedRequestError(413, f"request too large (at most {limit} bytes)")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives the already read body once, then the client's next event."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


def _sanitising(send: Send) -> tuple[Send, Callable[[], bool]]:
    """A ``send`` that passes successful responses and replaces an error response's body
    with a generic one; and whether a response was started."""
    state = {"started": False, "status": 0}

    async def sanitised(message: Message) -> None:
        if message["type"] == "http.response.start":
            state["started"] = True
            state["status"] = int(message["status"])
            if state["status"] < 400:
                await send(message)
            return
        status = state["status"]
        if status < 400 or message["type"] != "http.response.body":
            await send(message)
        elif not message.get("more_body", False):
            log.warning("the model's server answered %d", status)
            await send_error(send, status, GENERIC.get(status, "the server failed on this request"))

    return sanitised, lambda: bool(state["started"])


class ServeGuard:
    """The ASGI app that checks each request, then hands it to ``app``."""

    def __init__(self, app: ASGIApp, settings: GuardSettings):
        self.app = app
        self.settings = settings
        self.max_body = max_body_bytes(settings.n_ctx)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        sanitised, started = _sanitising(send)
        try:
            receive = await self._checked(scope, receive)
            await self.app(scope, receive, sanitised)
        except RefusedRequestError as refused:
            await send_error(send, refused.status, refused.message)
        except Exception as exc:  # the app's own failure: one log line, a generic answer
            log.warning("a request failed: %s", type(exc).__name__)
            if not started():
                await send_error(send, 500, "the server failed on this request")

    async def _checked(self, scope: Scope, receive: Receive) -> Receive:
        """Refuse what haf's client would not send; the ``receive`` to hand on."""
        if not authorized(scope, self.settings.api_key):
            raise RefusedRequestError(401, GENERIC[401])
        if self.settings.api_key is None and not addressed_to_loopback(scope):
            raise RefusedRequestError(403, GENERIC[403])
        method = ROUTES.get(str(scope.get("path", "")))
        if method is None:
            raise RefusedRequestError(404, GENERIC[404])
        if scope.get("method") != method:
            raise RefusedRequestError(405, GENERIC[405])
        if method == "GET":
            return receive
        content_type = _header(scope, b"content-type").split(b";")[0].strip().lower()
        if content_type != b"application/json":
            raise RefusedRequestError(415, GENERIC[415])
        body = await read_body(receive, self.max_body)
        try:
            parsed = json.loads(body)
        except (ValueError, RecursionError) as exc:
            raise RefusedRequestError(400, "the body is not valid JSON") from exc
        n_ctx = self.settings.n_ctx
        request = check_completion(parsed, n_ctx, self.settings.n_vocab)
        import anyio.to_thread

        await anyio.to_thread.run_sync(check_context, request, n_ctx, self.settings.count_tokens)
        parsed["model"] = self.settings.model_name
        return _replay(json.dumps(parsed).encode(), receive)
