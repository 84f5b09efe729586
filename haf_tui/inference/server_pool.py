"""The loop that serves a run's requests on its servers (issue 16; split from
:mod:`.server_backend`, issue 37): from one asyncio loop with bounded in-flight requests. A
timeout, a refused connection, a 5xx, or an answer over its request's size cap or
whole-request deadline (:mod:`.server_http`) is retried with backoff on the least busy
endpoint still alive; an endpoint that fails :data:`DEAD_AFTER` times in a row is dropped and
its work goes to the others; when none is left the run stops with one line (it resumes like
any interrupted run, nothing duplicated: a request's result is handed over once, after its
answer came). Every answer is checked before it is used (:mod:`.server_reading`): a bad one
is a failure of its server like a 5xx, never a stored row. When the run is asked to stop, the
requests in flight get :data:`STOP_GRACE_SECONDS`, then are cancelled (a hanging server does
not hold the run), as they are when the run stops on an error: no request task outlives the
loop.

Teacher-forced scoring (the classify, rationales and judge suites) goes one forced token per
request: the token is made the only choice by ``logit_bias`` and its raw log-probability is
read as for a sampled one (servers differ on prompt log-probabilities, which would score a
whole label in one request: see :mod:`haf_tui.inference.server`). To llama-server the prompt
goes as the token ids the in-process path would evaluate (the local tokenizer's; it takes a
list of ids as they are, adding no BOS), forced tokens included: what it scores is exactly
the in-process sequence, never a re-tokenized text."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import httpx

from haf_tui.inference.base import (
    GeneratedToken,
    Generation,
    GenerationRequest,
    InferenceError,
    RequestSource,
    TokenTextAssembler,
)
from haf_tui.inference.server import Endpoint, ServerError, ServerInfo, completion_body
from haf_tui.inference.server_answers import BadAnswerError
from haf_tui.inference.server_checks import Expected
from haf_tui.inference.server_http import Bounds, OverBoundError, bounded_request, bounds_of
from haf_tui.vocabulary import shown_text

if TYPE_CHECKING:
    from haf_tui.inference.server_backend import ServerBackend

DEAD_AFTER: Final = 3
"""Consecutive failures after which an endpoint is dropped."""
RETRIES: Final = 6
"""Tries of one request, over all endpoints, before the run stops."""
BACKOFF_SECONDS: Final = (0.2, 0.5, 1.0, 2.0, 4.0)
STOP_GRACE_SECONDS: Final = 2.0
"""How long requests in flight may still come back once a run is asked to stop; then they
are cancelled (a server that hangs would hold the run for its whole timeout otherwise)."""
POLL_SECONDS: Final = 0.2
"""How often the loop looks whether the run was asked to stop."""
FORCE_BIAS: Final = 100.0
"""The ``logit_bias`` that makes a server generate the forced token."""


@dataclass
class Live:
    endpoint: Endpoint
    info: ServerInfo
    in_flight: int = 0
    failures: int = 0
    alive: bool = True
    served: int = 0
    errors: list[str] = field(default_factory=list)


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

    def _pick(self) -> Live:
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
        self, client: httpx.AsyncClient, live: Live, request: GenerationRequest, tries: int
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
            if live.info.kind == "llama-server":  # the tokens themselves: as in process
                body["prompt"] = list(prompt_tokens)
            started = time.perf_counter()
            answer = await self._post(client, live, body)
            if isinstance(answer, str):
                return self._failed(live, request, tries, answer)
            expected = Expected(
                max_new, live.info.model, backend.n_ctx, request.settings.top_logprobs
            )
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
        self, client: httpx.AsyncClient, live: Live, request: GenerationRequest, tries: int
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
        head_ids = [*backend.tokenize_prompt(prompt), *prefix_ids]
        prompt_token_count = len(head_ids)
        head = prompt.text + request.reply_prefix
        settings = request.settings.model_copy(update={"temperature": 0.0})
        assembler = TokenTextAssembler()
        tokens: list[GeneratedToken] = []
        done = b""
        started = time.perf_counter()
        for token_id in forced_ids:
            body = completion_body(head + done.decode("utf-8", errors="replace"), settings, 1)
            if live.info.kind == "llama-server":  # the tokens themselves, forced ones included
                body["prompt"] = [*head_ids, *forced_ids[: len(tokens)]]
            body["logit_bias"] = {str(token_id): FORCE_BIAS}
            answer = await self._post(client, live, body)
            if isinstance(answer, str):
                return self._failed(live, request, tries, answer)
            piece = backend.local.token_piece(token_id)
            if live.info.kind == "llama-server" and _ends_inside_a_character(done + piece):
                raise ServerError(
                    f"{live.endpoint.url} (llama-server) reports no log-probability for a token "
                    f"that ends inside a character ({piece!r} of the forced text "
                    f"{request.forced[:40]!r}): score it in process or on haf serve"
                )
            try:
                expected = Expected(1, live.info.model, backend.n_ctx, settings.top_logprobs)
                read = backend.positions(answer, expected)
                if not read.positions:
                    raise BadAnswerError("no token for a forced one")
            except BadAnswerError as exc:  # a server fault: retried elsewhere
                return self._failed(live, request, tries, f"returned {exc}")
            text, logprob, top = read.positions[0]
            if read.entries is not None:
                taken = read.entries[0].token_id == token_id
            else:
                taken = text.encode("utf-8") == piece or text == piece.decode(errors="ignore")
            if not taken:
                raise ServerError(
                    f"{live.endpoint.url} did not take the forced token {piece!r} (gave "
                    f"{text!r}): it must honour logit_bias"
                )
            if read.entries is not None:
                tokens.append(backend.entry_token(assembler, read.entries[0]))
            else:
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
        self, client: httpx.AsyncClient, live: Live, body: dict[str, Any]
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
            shown = shown_text(data[:160].decode("utf-8", errors="replace"))  # (no ESC)
            raise ServerError(f"{live.endpoint.url} refused a request: HTTP {status} {shown}")
        try:
            answer = json.loads(data)
        except (ValueError, RecursionError):  # (RecursionError: brackets nested too deep)
            return "an answer that is not JSON"
        return answer if isinstance(answer, dict) else "an answer that is not an object"

    @staticmethod
    def _failed(
        live: Live, request: GenerationRequest, tries: int, why: str
    ) -> tuple[GenerationRequest, int, None]:
        live.failures += 1
        live.errors.append(why)
        if live.failures >= DEAD_AFTER:
            live.alive = False
        return request, tries, None


def _ends_inside_a_character(data: bytes) -> bool:
    """Whether ``data`` ends inside a UTF-8 character (llama-server reports no entry for the
    token that leaves it so)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.reason == "unexpected end of data"
    return False
