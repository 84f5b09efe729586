# Over 400 lines: the pool's loop, retries and teacher forcing are one piece (see server_reading).
"""A run on inference servers (issue 16): the tool stays the client, the scheduler and the
store. The chat template is rendered here, by the same renderer as the in-process path (a
vocabulary-only load of the same GGUF), so the stored prompt is what the model saw; the text
goes to each server's OpenAI-compatible ``/v1/completions`` with the generation's seed,
temperature, top-p, top-k, token cap and ``logprobs``; the returned tokens are mapped to text
offsets by the same assembler as in process.

Several endpoints serve at once (``URL#N``: N requests in flight there, default 4), from one
asyncio loop with bounded in-flight requests. A timeout, a refused connection, a 5xx, or an
answer over its request's size cap or whole-request deadline (:mod:`.server_http`) is
retried with backoff on the least busy endpoint still alive; an endpoint that fails
:data:`DEAD_AFTER` times in a row is dropped and its work goes to the others; when none is
left the run stops with one line (it resumes like any interrupted run, nothing duplicated:
a request's result is handed over once, after its answer came). Every answer is checked
before it is used (:mod:`haf_tui.inference.server_answers`, and against its request, the
vocabulary and the model the server named: :mod:`haf_tui.inference.server_checks`): a bad
one is a failure of its server like a 5xx, never a stored row. When the run is asked to
stop, the requests in flight get :data:`STOP_GRACE_SECONDS`, then are cancelled (a hanging
server does not hold the run), as they are when the run stops on an error: no request task
outlives the loop.

Teacher-forced scoring (the classify, rationales and judge suites) goes one forced token per
request: the token is made the only choice by ``logit_bias`` and its raw log-probability is
read as for a sampled one (servers differ on prompt log-probabilities, which would score a
whole label in one request: see :mod:`haf_tui.inference.server`)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import httpx

from haf_tui.config import DecodingSettings
from haf_tui.inference.backend import Backend
from haf_tui.inference.base import (
    GeneratedToken,
    Generation,
    GenerationRequest,
    InferenceError,
    ListSource,
    RequestSource,
    TokenCallback,
    TokenTextAssembler,
)
from haf_tui.inference.chat import RenderedPrompt
from haf_tui.inference.llama import LlamaCppBackend
from haf_tui.inference.server import (
    Endpoint,
    ServerError,
    ServerInfo,
    check_raw_logprobs,
    completion_body,
    identify_server,
    same_model,
)
from haf_tui.inference.server_answers import BadAnswerError
from haf_tui.inference.server_checks import Expected
from haf_tui.inference.server_http import Bounds, OverBoundError, bounded_request, bounds_of
from haf_tui.inference.server_reading import AnswerReading
from haf_tui.messages import ChatMessage

DEAD_AFTER: Final = 3
"""Consecutive failures after which an endpoint is dropped."""
RETRIES: Final = 6
"""Tries of one request, over all endpoints, before the run stops."""
BACKOFF_SECONDS: Final = (0.2, 0.5, 1.0, 2.0, 4.0)
TIMEOUT_SECONDS: Final = 600.0
"""httpx's timeout of each read; the whole request has its own deadline (:mod:`.server_http`)."""
STOP_GRACE_SECONDS: Final = 2.0
"""How long requests in flight may still come back once a run is asked to stop; then they
are cancelled (a server that hangs would hold the run for its whole timeout otherwise)."""
POLL_SECONDS: Final = 0.2
"""How often the loop looks whether the run was asked to stop."""
FORCE_BIAS: Final = 100.0
"""The ``logit_bias`` that makes a server generate the forced token."""


@dataclass
class _Live:
    endpoint: Endpoint
    info: ServerInfo
    in_flight: int = 0
    failures: int = 0
    alive: bool = True
    served: int = 0
    errors: list[str] = field(default_factory=list)


class ServerBackend(AnswerReading, Backend):
    """Generation on OpenAI-compatible servers, with the local GGUF's template and tokenizer
    (no layers on a GPU here: the servers decide their own)."""

    def __init__(
        self,
        model_path: str | Path,
        endpoints: Sequence[Endpoint],
        *,
        chat_format: str | None = None,
        n_ctx: int = 4096,
        timeout: float = TIMEOUT_SECONDS,
        check: bool = True,
        deadline: float | None = None,
        max_answer_bytes: int | None = None,
    ):
        if not endpoints:
            raise ServerError("no server given")
        self.local = LlamaCppBackend(model_path, chat_format=chat_format, n_ctx=n_ctx,
                                     vocab_only=True)  # fmt: skip
        self.info = self.local.info
        self.chat_format = self.local.chat_format
        self.n_ctx = n_ctx
        self.timeout = timeout
        self.deadline, self.max_answer_bytes = deadline, max_answer_bytes
        """Each request's bounds (None: sized from the request, :mod:`.server_http`)."""
        infos = [identify_server(e.url) for e in endpoints]
        for info in infos[1:]:
            if not same_model(info.model, infos[0].model):
                raise ServerError(
                    f"the servers serve different models: {infos[0].url} {infos[0].model!r}, "
                    f"{info.url} {info.model!r}"
                )
        if check:
            for info in infos:
                check_raw_logprobs(info)
        self.endpoints = [_Live(e, i) for e, i in zip(endpoints, infos, strict=True)]
        self.name = f"{self.info.path.name} on {len(endpoints)} server(s)"

    def servers(self) -> list[ServerInfo]:
        """Who serves the run."""
        return [live.info for live in self.endpoints]

    def render(self, messages: Sequence[ChatMessage]) -> RenderedPrompt:
        """The prompt, rendered as in process."""
        return self.local.render(messages)

    def tokenize_prompt(self, prompt: RenderedPrompt) -> list[int]:
        """The prompt's tokens, as in process."""
        return self.local.tokenize_prompt(prompt)

    def forced_tokens(self, text: str) -> list[int]:
        """The tokens of a reply's text, as in process."""
        return self.local.forced_tokens(text)

    def tokens_needed(self, messages: Sequence[ChatMessage], replies: Sequence[str] = ()) -> int:
        """The prompt's and the longest forced reply's tokens, as in process."""
        return self.local.tokens_needed(messages, replies)

    def close(self) -> None:
        """Free the local vocabulary."""
        self.local.close()

    def concurrent(self, n_parallel: int) -> ServerPool:
        """Serve with every endpoint's own concurrency (``n_parallel`` is not used: each
        endpoint says how many requests it takes)."""
        return ServerPool(self)

    def generate(
        self,
        messages: Sequence[ChatMessage],
        settings: DecodingSettings,
        *,
        on_token: TokenCallback | None = None,
    ) -> Generation:
        """One generation on the least busy endpoint."""
        return self._one_request(GenerationRequest(messages, settings, tag=0, on_token=on_token))

    def score(
        self,
        messages: Sequence[ChatMessage],
        forced: str,
        settings: DecodingSettings,
        *,
        on_token: TokenCallback | None = None,
        reply_prefix: str = "",
    ) -> Generation:
        """The raw logprobs of ``forced`` after ``reply_prefix``, on the least busy endpoint
        (one token at a time, each forced by ``logit_bias``)."""
        return self._one_request(
            GenerationRequest(
                messages,
                settings,
                tag=0,
                on_token=on_token,
                forced=forced,
                reply_prefix=reply_prefix,
            )
        )

    def _one_request(self, request: GenerationRequest) -> Generation:
        source = ListSource([request])
        ServerPool(self).serve(source)
        return source.results[0]


class ServerPool:
    """Serves a :class:`RequestSource` on a backend's endpoints from one asyncio loop."""

    def __init__(self, backend: ServerBackend):
        self.backend = backend
        self.n_parallel = sum(live.endpoint.concurrency for live in backend.endpoints)

    def serve(self, source: RequestSource) -> None:
        """Generate everything ``source`` hands out, until it says there is no more."""
        asyncio.run(self._serve(source))

    def _capacity(self) -> int:
        return sum(
            max(0, live.endpoint.concurrency - live.in_flight)
            for live in self.backend.endpoints
            if live.alive
        )

    def _pick(self) -> _Live:
        alive = [live for live in self.backend.endpoints if live.alive]
        if not alive:
            reasons = "; ".join(
                f"{live.endpoint.url}: {live.errors[-1] if live.errors else 'failed'}"
                for live in self.backend.endpoints
            )
            raise ServerError(f"no server is left ({reasons}): resume the run when one is up")
        return min(alive, key=lambda live: live.in_flight / live.endpoint.concurrency)

    async def _serve(self, source: RequestSource) -> None:
        """The loop: hand requests to the least busy endpoints, collect their answers, retry
        the failed ones after a backoff. When the source asks to stop, what is in flight gets
        :data:`STOP_GRACE_SECONDS` to come back; whatever is still in flight then, or when
        anything goes wrong, is cancelled (and awaited: no task is left behind)."""
        retry: list[tuple[float, GenerationRequest, int]] = []  # (due at, request, tries)
        in_flight: set[asyncio.Task[tuple[GenerationRequest, int, Generation | None]]] = set()
        stop_at: float | None = None
        limits = httpx.Limits(max_connections=self.n_parallel + 2)
        async with httpx.AsyncClient(timeout=self.backend.timeout, limits=limits) as client:
            try:
                while True:
                    now = time.monotonic()
                    if stop_at is None and source.stop_requested():
                        stop_at = now + STOP_GRACE_SECONDS
                    if stop_at is not None and (not in_flight or now >= stop_at):
                        return  # (what is in flight is cancelled: it resumes)
                    work = [] if stop_at is not None else self._work(source, retry, in_flight)
                    if not work and not in_flight and not retry:
                        return
                    for request, tries in work:
                        live = self._pick()
                        live.in_flight += 1
                        in_flight.add(asyncio.create_task(self._one(client, live, request, tries)))
                    # (a retry already due waits for room: for an answer, or the next poll)
                    until = min([POLL_SECONDS, *(due - now for due, _, _ in retry if due > now)])
                    if stop_at is not None:
                        until = min(until, stop_at - now)
                    if not in_flight:
                        await asyncio.sleep(max(until, 0.0))
                        continue
                    done, _ = await asyncio.wait(
                        in_flight, timeout=max(until, 0.0), return_when=asyncio.FIRST_COMPLETED
                    )
                    for task in done:
                        in_flight.discard(task)
                        self._collect(source, retry, *task.result())
            finally:
                for task in in_flight:
                    task.cancel()
                await asyncio.gather(*in_flight, return_exceptions=True)

    def _work(
        self,
        source: RequestSource,
        retry: list[tuple[float, GenerationRequest, int]],
        in_flight: set[asyncio.Task[tuple[GenerationRequest, int, Generation | None]]],
    ) -> list[tuple[GenerationRequest, int]]:
        """What to send now: retries that are due first, then what the source has ready."""
        room = self._capacity()
        if room == 0 and not in_flight:
            self._pick()  # none alive: says so (the work left resumes)
        now = time.monotonic()
        work: list[tuple[GenerationRequest, int]] = []
        for entry in sorted(retry, key=lambda entry: entry[0]):
            if len(work) < room and entry[0] <= now:
                retry.remove(entry)
                work.append((entry[1], entry[2]))
        if len(work) < room:
            idle = not in_flight and not work and not retry
            # the source hands out a group of forced replies whole when the endpoints have
            # room for it: after a dead endpoint has taken its share away, an idle pool asks
            # for as many as all of them took (one group may then go over the live
            # endpoints' own limits once, rather than never go)
            asked = max(room, self.n_parallel) if idle else room
            taken = source.take(asked - len(work), wait=idle)
            work += [(request, 0) for request in taken]
        return work

    @staticmethod
    def _collect(
        source: RequestSource,
        retry: list[tuple[float, GenerationRequest, int]],
        request: GenerationRequest,
        tries: int,
        generation: Generation | None,
    ) -> None:
        """A request came back: its generation to the source, or it is retried later."""
        if generation is not None:
            if request.on_token is not None:
                for token in generation.tokens:
                    request.on_token(token)
            source.finished(request, generation)
            return
        if tries >= RETRIES:
            raise ServerError(f"a request failed {tries} times on every server: resume the run")
        backoff = BACKOFF_SECONDS[min(tries, len(BACKOFF_SECONDS) - 1)]
        retry.append((time.monotonic() + backoff, request, tries + 1))

    async def _one(
        self, client: httpx.AsyncClient, live: _Live, request: GenerationRequest, tries: int
    ) -> tuple[GenerationRequest, int, Generation | None]:
        backend = self.backend
        try:
            if request.forced is not None:
                return await self._forced(client, live, request, tries)
            prompt = backend.render(request.messages)
            prompt_tokens = backend.tokenize_prompt(prompt)
            max_new = min(request.settings.max_new_tokens, backend.n_ctx - len(prompt_tokens))
            if max_new < 1:
                raise InferenceError(
                    f"prompt of {len(prompt_tokens)} tokens does not fit the context of "
                    f"{backend.n_ctx} tokens: raise --n-ctx"
                )
            body = completion_body(prompt.text, request.settings, max_new)
            started = time.perf_counter()
            answer = await self._post(client, live, body)
            if isinstance(answer, str):
                return self._failed(live, request, tries, answer)
            expected = Expected(max_new, live.info.model, backend.n_ctx)
            try:
                generation = backend.generation(
                    prompt, answer, time.perf_counter() - started, live.endpoint.url, expected
                )
            except BadAnswerError as exc:  # a server fault: retried elsewhere
                return self._failed(live, request, tries, f"returned {exc}")
            live.failures = 0
            live.served += 1
            return request, tries, generation
        finally:
            live.in_flight -= 1

    async def _forced(
        self, client: httpx.AsyncClient, live: _Live, request: GenerationRequest, tries: int
    ) -> tuple[GenerationRequest, int, Generation | None]:
        """Teacher forcing on a server: for each of the forced text's tokens (the local
        tokenizer's, as in process), one token generated after the prompt, the reply prefix
        and the tokens before it, with ``logit_bias`` making it that token; its reported
        log-probability is the raw one (the bias acts in the sampler, after it is read)."""
        backend = self.backend
        assert request.forced is not None
        prompt = backend.render(request.messages)
        forced_ids = backend.forced_tokens(request.forced)
        prefix_ids = backend.forced_tokens(request.reply_prefix) if request.reply_prefix else []
        prompt_token_count = len(backend.tokenize_prompt(prompt)) + len(prefix_ids)
        head = prompt.text + request.reply_prefix
        settings = request.settings.model_copy(update={"temperature": 0.0})
        assembler = TokenTextAssembler()
        tokens: list[GeneratedToken] = []
        done = b""
        started = time.perf_counter()
        for token_id in forced_ids:
            body = completion_body(head + done.decode("utf-8", errors="replace"), settings, 1)
            body["logit_bias"] = {str(token_id): FORCE_BIAS}
            answer = await self._post(client, live, body)
            if isinstance(answer, str):
                return self._failed(live, request, tries, answer)
            try:
                expected = Expected(1, live.info.model, backend.n_ctx)
                _, positions = backend.positions(answer, expected)
                if not positions:
                    raise BadAnswerError("no token for a forced one")
            except BadAnswerError as exc:  # a server fault: retried elsewhere
                return self._failed(live, request, tries, f"returned {exc}")
            text, logprob, top = positions[0]
            piece = backend.local.token_piece(token_id)
            if text.encode("utf-8") != piece and text != piece.decode("utf-8", errors="ignore"):
                raise ServerError(
                    f"{live.endpoint.url} did not take the forced token {piece!r} (gave "
                    f"{text!r}): it must honour logit_bias"
                )
            tokens.append(backend.token(assembler, text, logprob, top, token_id))
            done += piece
        live.failures = 0
        live.served += 1
        generation = Generation(
            prompt_text=head,
            prompt_token_count=prompt_token_count,
            text=assembler.finish(),
            tokens=tokens,
            finish_reason="forced",
            seconds=time.perf_counter() - started,
            chat_format=backend.chat_format,
            extra={"server": live.endpoint.url, "folded_system": prompt.folded_system},
        )
        return request, tries, generation

    async def _post(
        self, client: httpx.AsyncClient, live: _Live, body: dict[str, Any]
    ) -> dict[str, Any] | str:
        """The server's answer, or why a retry may help (a timeout, a refused or dropped
        connection, a 5xx, an answer over its deadline or size cap: :mod:`.server_http`);
        any other refusal is a one-line :class:`ServerError`. The request names the model the
        server named on ``/v1/models`` (OpenAI's API asks for it; llama-server answers with a
        default name without it), except to llama-cpp-python's server, which would echo any
        name given while serving its default: asked for none, it names the model it serves."""
        if live.info.kind != "llama-cpp-python":
            body = {**body, "model": live.info.model}
        sized = bounds_of(body)
        bounds = Bounds(
            self.backend.deadline or sized.deadline,
            self.backend.max_answer_bytes or sized.max_bytes,
        )
        url = f"{live.endpoint.url}/v1/completions"
        try:
            status, data = await bounded_request(client, "POST", url, bounds, body=body)
        except httpx.HTTPError as exc:
            return type(exc).__name__
        except OverBoundError as exc:
            return str(exc)
        if status >= 500:
            return f"HTTP {status}"
        if status != 200:
            shown = data[:160].decode("utf-8", errors="replace")
            raise ServerError(f"{live.endpoint.url} refused a request: HTTP {status} {shown}")
        try:
            answer = json.loads(data)
        except ValueError:
            return "an answer that is not JSON"
        return answer if isinstance(answer, dict) else "an answer that is not an object"

    @staticmethod
    def _failed(
        live: _Live, request: GenerationRequest, tries: int, why: str
    ) -> tuple[GenerationRequest, int, None]:
        live.failures += 1
        live.errors.append(why)
        if live.failures >= DEAD_AFTER:
            live.alive = False
        return request, tries, None
