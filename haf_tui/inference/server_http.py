"""Requests to a server with bounds on size and time (issue 33 §3).

A server is hostile until checked: an answer padded to hundreds of megabytes, or headers
followed by one byte every few seconds (httpx's timeout is per read, so a trickle never trips
it), would hold or swell the run. Every request here has a deadline for the whole of it
(connect, headers and body) and a cap on the body's size, both sized from the request:

- ``/v1/completions``: :func:`answer_cap` bytes (:data:`FIXED_BYTES`, 1 MiB, plus
  :data:`PER_ENTRY_BYTES`, 512, per token asked for × (top log-probabilities + 3): a token's
  text, its entry in ``tokens``, its log-probability and offset, and its top-k; 640 tokens
  with 5 top log-probabilities: 3.5 MiB) within :func:`answer_deadline` seconds
  (:data:`COMPLETION_BASE_SECONDS`, 600, plus :data:`PER_TOKEN_SECONDS`, 1, per token asked
  for: a request may wait behind others on a server that serves one at a time);
- ``/v1/models``, ``/version``, ``/props`` and the start-up probe: :data:`START_MAX_BYTES`
  (1 MiB) within :data:`START_DEADLINE_SECONDS` (30 s).

A request over either bound raises :class:`OverBoundError` (its line says which bound; the
callers name the server), whatever httpx's per-read timeout."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any, Final, TypeVar

import httpx

from haf_tui.defaults import API_KEY_VARIABLE
from haf_tui.inference.base import InferenceError

FIXED_BYTES: Final = 1 << 20
"""What any completion answer may take besides its tokens (ids, usage, model name, ...)."""
PER_ENTRY_BYTES: Final = 512
"""A generous bound on one token's entry in an answer (its text JSON-escaped, a number)."""
COMPLETION_BASE_SECONDS: Final = 600.0
PER_TOKEN_SECONDS: Final = 1.0
START_MAX_BYTES: Final = 1 << 20
START_DEADLINE_SECONDS: Final = 30.0

T = TypeVar("T")


class OverBoundError(InferenceError):
    """A request that took longer than its deadline or sent more than its cap."""


def answer_cap(max_tokens: int, top_logprobs: int) -> int:
    """The most bytes a ``/v1/completions`` answer of ``max_tokens`` tokens with
    ``top_logprobs`` top log-probabilities each may take."""
    return FIXED_BYTES + max(1, max_tokens) * (max(1, top_logprobs) + 3) * PER_ENTRY_BYTES


def answer_deadline(max_tokens: int) -> float:
    """How long a ``/v1/completions`` request of ``max_tokens`` tokens may take, in all."""
    return COMPLETION_BASE_SECONDS + PER_TOKEN_SECONDS * max(1, max_tokens)


@dataclass(frozen=True)
class Bounds:
    """A request's deadline (seconds, the whole request) and body cap (bytes)."""

    deadline: float
    max_bytes: int


def bounds_of(body: dict[str, Any]) -> Bounds:
    """The bounds of a ``/v1/completions`` request, from its own ``max_tokens`` and
    ``logprobs``."""
    max_tokens = int(body.get("max_tokens") or 1)
    top = int(body.get("logprobs") or 1)
    return Bounds(answer_deadline(max_tokens), answer_cap(max_tokens, top))


START_BOUNDS: Final = Bounds(START_DEADLINE_SECONDS, START_MAX_BYTES)


def _size(count: int) -> str:
    return f"{count / (1 << 20):.1f} MiB" if count >= 1 << 20 else f"{count:,} bytes"


def request_headers() -> dict[str, str]:
    """The headers of every request: no compression (the cap counts the bytes as they come)
    and the API key when :data:`API_KEY_VARIABLE` holds one."""
    headers = {"Accept-Encoding": "identity"}
    key = os.environ.get(API_KEY_VARIABLE, "").strip()
    if key:
        headers["Authorization"] = f"Bearer {key}"
    return headers


async def bounded_request(
    client: httpx.AsyncClient,
    method: str,
    url: str,
    bounds: Bounds,
    *,
    body: dict[str, Any] | None = None,
) -> tuple[int, bytes]:
    """The status and body of one request, read within ``bounds`` (an
    :class:`OverBoundError` otherwise; httpx's own errors pass through)."""
    headers = request_headers()
    try:
        async with asyncio.timeout(bounds.deadline):
            async with client.stream(method, url, json=body, headers=headers) as response:
                length = response.headers.get("content-length", "")
                if length.isdigit() and int(length) > bounds.max_bytes:
                    raise OverBoundError(
                        f"announced an answer of {_size(int(length))}, over the "
                        f"{_size(bounds.max_bytes)} this request may take"
                    )
                data = bytearray()
                async for chunk in response.aiter_raw():
                    data += chunk
                    if len(data) > bounds.max_bytes:
                        raise OverBoundError(
                            f"sent an answer over the {_size(bounds.max_bytes)} this request "
                            "may take"
                        )
                return response.status_code, bytes(data)
    except TimeoutError as exc:
        raise OverBoundError(
            f"did not answer within {bounds.deadline:g} s (the whole request's deadline)"
        ) from exc


def run_coroutine(coroutine: Coroutine[Any, Any, T]) -> T:
    """``coroutine``'s result from synchronous code (in a thread of its own when this one
    already runs an event loop)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    outcome: list[T] = []
    failure: list[BaseException] = []

    def work() -> None:
        try:
            outcome.append(asyncio.run(coroutine))
        except BaseException as exc:  # (handed back to the caller's thread)
            failure.append(exc)

    thread = threading.Thread(target=work, name="haf-server-request")
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return outcome[0]


def fetch_json(
    method: str, url: str, bounds: Bounds = START_BOUNDS, *, body: dict[str, Any] | None = None
) -> tuple[int, Any]:
    """One bounded request from synchronous code: its status and its JSON (None: not JSON).
    httpx's errors and :class:`OverBoundError` pass through."""

    async def request() -> tuple[int, bytes]:
        async with httpx.AsyncClient(timeout=bounds.deadline) as client:
            return await bounded_request(client, method, url, bounds, body=body)

    status, data = run_coroutine(request())
    try:
        return status, json.loads(data)
    except (ValueError, RecursionError):  # (RecursionError: brackets nested too deep)
        return status, None
