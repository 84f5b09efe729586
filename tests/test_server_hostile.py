# Over 400 lines because the stand-in server and each hostile answer it sends stay together.
"""Hostile servers (issue 33 §3): every answer is checked against its request and the
tokenizer the tool holds, every request is bounded in size and time, and the served model is
the run's. Stand-in servers on 127.0.0.1 (threads of this process, port 0; each stops itself:
a trickle ends after :data:`DRIP_LIMIT` seconds or when the client hangs up) answer a real
:class:`ServerBackend` (the embedded GGUF's vocabulary only: no model runs here) each bad way;
each bad answer makes the request fail on that server, which is dropped after three in a
row, and the run's line names the server and what was wrong. Nothing bad reaches a
:class:`Generation` (what a run stores)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from haf_tui.config import DecodingSettings, RunConfig
from haf_tui.inference.base import GenerationRequest, ListSource
from haf_tui.inference.server import Endpoint, ServerError, identify_server
from haf_tui.inference.server_backend import ServerBackend
from haf_tui.inference.server_checks import text_follows_tokens
from haf_tui.inference.server_http import (
    START_MAX_BYTES,
    Bounds,
    answer_cap,
    answer_deadline,
    bounds_of,
)
from haf_tui.messages import ChatMessage

MODEL = "stand-in.gguf"
TOKENS = ["The", " text", " is", " toxic", "."]  # (pieces of the embedded GGUF's vocabulary)
MESSAGES = [ChatMessage("user", "Is the following TEXT toxic? TEXT: you are an idiot.")]
SETTINGS = DecodingSettings(temperature=0.0, max_new_tokens=8, top_logprobs=2)
DRIP_LIMIT = 15.0

Plan = Callable[[int, dict[str, Any]], Any]
"""What a stand-in answers the n-th /v1/completions request (from 1) with its body: a JSON
object, or a :class:`Raw`/:class:`Drip`."""


class Raw:
    """A body sent as is, with or without its Content-Length."""

    def __init__(self, data: bytes, *, length: bool = True):
        self.data, self.length = data, length


class Drip:
    """Headers, then one byte every ``every`` seconds (never a whole answer)."""

    def __init__(self, every: float):
        self.every = every


def answer(
    tokens: list[str] = TOKENS,
    *,
    text: str | None = None,
    model: Any = MODEL,
    finish: str = "stop",
    prompt_tokens: Any = 10,
    top: dict[str, float] | None = None,
) -> dict[str, Any]:
    """A completion answer of ``tokens``, well formed unless told otherwise."""
    values = [-0.5] * len(tokens)
    tops = [{token: -0.5, **(top or {" other": -1.5})} for token in tokens]
    return {
        "model": model,
        "choices": [
            {
                "text": "".join(tokens) if text is None else text,
                "finish_reason": finish,
                "logprobs": {"tokens": tokens, "token_logprobs": values, "top_logprobs": tops},
            }
        ],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": len(tokens)},
    }


def _own_tops_only(tokens: list[str]) -> dict[str, Any]:
    """An answer of ``tokens`` whose top log-probabilities hold only ``" other"`` (each token
    less likely than it)."""
    made = answer(tokens, top={" other": -0.25})
    logprobs = made["choices"][0]["logprobs"]
    logprobs["token_logprobs"] = [-2.0] * len(tokens)
    for top, token in zip(logprobs["top_logprobs"], tokens, strict=True):
        del top[token]
    return made


class StandIn(ThreadingHTTPServer):
    """A stand-in server: ``models`` for /v1/models (or a Raw, a Drip), ``plan`` for
    completions; counts the completion requests."""

    daemon_threads = True

    def __init__(self, plan: Plan, models: Any):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.plan, self.models = plan, models
        self.requests = 0
        self.bodies: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: StandIn

    def log_message(self, *args: Any) -> None:
        pass

    def _reply(self, reply: Any) -> None:
        try:
            if isinstance(reply, Drip):
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b"{")
                self.wfile.flush()
                ends = time.monotonic() + DRIP_LIMIT
                while time.monotonic() < ends and not self.server.stopping.wait(reply.every):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                return
            raw = reply if isinstance(reply, Raw) else Raw(json.dumps(reply).encode())
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            if raw.length:
                self.send_header("Content-Length", str(len(raw.data)))
            else:
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            self.wfile.write(raw.data)
        except (BrokenPipeError, ConnectionResetError):
            return  # (the client hung up: as it should, once over a bound)

    def do_GET(self) -> None:
        if self.path == "/v1/models":
            self._reply(self.server.models)
        else:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with self.server.lock:
            self.server.requests += 1
            self.server.bodies.append(body)
            number = self.server.requests
        self._reply(self.server.plan(number, body))


def _models(model: str = MODEL) -> dict[str, Any]:
    return {"object": "list", "data": [{"id": model, "owned_by": "stand-in"}]}


@pytest.fixture
def serve() -> Iterator[Callable[..., StandIn]]:
    """Starts stand-ins for a test; stops them (and their trickles) at its end."""
    started: list[StandIn] = []

    def start(plan: Plan = lambda n, body: answer(), models: Any = None) -> StandIn:
        server = StandIn(plan, _models() if models is None else models)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stopping.set()
        server.shutdown()
        server.server_close()


def _backend(*servers: StandIn, **bounds: Any) -> ServerBackend:
    from haf_tui.defaults import embedded_model_path

    endpoints = [Endpoint(server.url, 1) for server in servers]
    return ServerBackend(embedded_model_path(), endpoints, n_ctx=2048, check=False, **bounds)


def _refused(backend: ServerBackend, said: str, *, forced: str | None = None) -> str:
    """The one line a request that every try answers badly ends with; it names the server
    and ``said``."""
    with pytest.raises(ServerError) as raised:
        if forced is None:
            backend.generate(MESSAGES, SETTINGS)
        else:
            backend.score(MESSAGES, forced, SETTINGS)
    line = str(raised.value)
    assert "\n" not in line and "no server is left" in line, line
    assert backend.endpoints[0].endpoint.url in line and said in line, line
    return line


# ------------------------------------------------------------------ answers vs the request


def test_a_good_answer_is_taken(serve: Callable[..., StandIn]) -> None:
    backend = _backend(serve())
    generation = backend.generate(MESSAGES, SETTINGS)
    assert generation.text == "The text is toxic." and len(generation.tokens) == 5
    assert all(token.token_id >= 0 for token in generation.tokens)
    assert generation.prompt_token_count == 10
    backend.close()


def test_the_request_names_the_model_except_to_llama_cpp_python(
    serve: Callable[..., StandIn],
) -> None:
    """OpenAI's API asks for the model (llama-server answers with a default name without
    it); llama-cpp-python's server would echo any name while serving its default, so it is
    asked for none and names the model it serves."""
    server = serve()
    _backend(server).generate(MESSAGES, SETTINGS)
    assert server.bodies[-1]["model"] == MODEL
    folder = f"/models/{MODEL}"  # (an answer naming it without the folder is the same model)
    plain = serve(models={"data": [{"id": folder, "owned_by": "me"}]})
    backend = _backend(plain)
    assert backend.servers()[0].kind == "llama-cpp-python"
    backend.generate(MESSAGES, SETTINGS)
    assert "model" not in plain.bodies[-1]


@pytest.mark.parametrize(
    "good",
    [
        answer([*TOKENS, *TOKENS[:3]], finish="length"),  # the 8 asked for
        answer(prompt_tokens=0),
        answer(prompt_tokens=2048),  # the context's size
        answer(["", "", "本"], text="日本"),  # a character's pieces print as "" (or U+FFFD)
        answer(["\ufffd", "\ufffd", " ok"], text="🙂 ok"),
        answer(["<|im_end|>"], text="<|im_end|>"),  # a special piece
    ],
)
def test_answers_at_the_edges_are_taken(serve: Callable[..., StandIn], good: Any) -> None:
    backend = _backend(serve(lambda n, body: good))
    backend.generate(MESSAGES, SETTINGS)
    backend.close()


@pytest.mark.parametrize(
    ("bad", "said"),
    [
        (answer([*TOKENS, *TOKENS[:4]]), "9 tokens, more than the 8 asked for"),
        (answer(text="The text is kind."), "the text 'The text is kind.', which is not its"),
        (_own_tops_only(["The", "zqxzqxzqxzqx"]), "returned token 1 ('zqxzqxzqxzqx') outside"),
        (answer(top={"zqxzqxzqxzqx": -2.0}), "a top token of token 0 ('zqxzqxzqxzqx') outside"),
        (answer(prompt_tokens=-1), "prompt_tokens of -1 (not a count from 0"),
        (answer(prompt_tokens=2049), "prompt_tokens of 2049 (not a count from 0 to the context's"),
        (answer(prompt_tokens="12"), "prompt_tokens of '12'"),
        (answer([], finish="length"), 'a "length" finish without a token'),
        (answer(model=None), "an answer from model null, not 'stand-in.gguf'"),
        (answer(top={" other": -0.01}), "probabilities sum to 1.597 (more than 1"),
        (answer(top={f" {c}": -9.0 for c in "abcdefghijklmnopqrst"}), "21 top log-probabilities"),
    ],
)
def test_an_answer_that_disagrees_with_its_request_is_refused(
    serve: Callable[..., StandIn], bad: dict[str, Any], said: str
) -> None:
    server = serve(lambda n, body: bad)
    backend = _backend(server)
    _refused(backend, said)
    assert server.requests == 3  # tried three times, then the server was dropped
    backend.close()


@pytest.mark.parametrize("depth", [5_000, 100_000])
def test_an_answer_of_deeply_nested_brackets_is_refused_in_one_line(
    serve: Callable[..., StandIn], depth: int
) -> None:
    """Brackets nested too deep for Python's json (a RecursionError, which failed the run:
    issue 42 §6) are an answer that is not JSON, as any other garbage: retried, then the
    server is dropped in one line."""
    server = serve(lambda n, body: Raw(b"[" * depth + b"]" * depth))
    backend = _backend(server, max_answer_bytes=4 * depth)
    _refused(backend, "an answer that is not JSON")
    assert server.requests == 3
    backend.close()


def test_a_forced_request_answered_with_more_than_its_one_token_is_refused(
    serve: Callable[..., StandIn],
) -> None:
    backend = _backend(serve(lambda n, body: answer(["The", " text"])))
    _refused(backend, "2 tokens, more than the 1 asked for", forced="The")
    backend.close()


def test_a_server_that_switches_model_mid_run_is_dropped_its_answers_unused(
    serve: Callable[..., StandIn],
) -> None:
    server = serve(lambda n, body: answer(model=MODEL if n <= 2 else "other.gguf"))
    backend = _backend(server)
    requests = [GenerationRequest(MESSAGES, SETTINGS, tag=n) for n in range(5)]
    source = ListSource(requests)
    with pytest.raises(ServerError) as raised:
        backend.concurrent(1).serve(source)
    line = str(raised.value)
    assert server.url in line and "an answer from model 'other.gguf', not 'stand-in.gguf'" in line
    assert set(source.results) == {0, 1}  # only the old model's answers came back
    backend.close()


def test_servers_of_different_models_are_refused_at_start(serve: Callable[..., StandIn]) -> None:
    first, second = serve(), serve(models=_models("/elsewhere/other.gguf"))
    with pytest.raises(ServerError, match="the servers serve different models") as raised:
        _backend(first, second)
    assert second.url in str(raised.value) and "other.gguf" in str(raised.value)
    _backend(first, serve(models=_models(f"/another/folder/{MODEL}"))).close()  # same file


def test_the_text_follows_its_tokens() -> None:
    assert text_follows_tokens("The text", ["The", " text"])
    assert text_follows_tokens("café", ["caf", ""])  # a character's pieces print as ""
    assert text_follows_tokens("é!", ["\ufffd", "\ufffd", "!"])
    assert text_follows_tokens("", [])
    assert not text_follows_tokens("cafe", ["caf", ""])  # an ASCII letter no token holds
    assert not text_follows_tokens("The  text", ["The", " text"])
    assert not text_follows_tokens("The", ["The", " text"])
    assert not text_follows_tokens(" text The", ["The", " text"])


# ------------------------------------------------------------------ bounds on size and time


def test_the_bounds_are_sized_from_the_request() -> None:
    assert answer_cap(640, 5) == (1 << 20) + 640 * 8 * 512  # 3.5 MiB
    assert answer_cap(50_000, 5) == (1 << 20) + 50_000 * 8 * 512
    assert answer_deadline(1) == 601.0 and answer_deadline(640) == 1240.0
    assert bounds_of({"max_tokens": 640, "logprobs": 5}) == Bounds(1240.0, answer_cap(640, 5))


@pytest.mark.parametrize("length", [True, False], ids=["announced", "streamed"])
def test_an_answer_over_its_size_cap_is_refused(
    serve: Callable[..., StandIn], length: bool
) -> None:
    padded = json.dumps(answer()).encode()[:-1] + b" " * 200_000 + b"}"  # valid, padded
    server = serve(lambda n, body: Raw(padded, length=length))
    backend = _backend(server, max_answer_bytes=65_536)
    said = "announced an answer of 200," if length else "sent an answer over the 65,536 bytes"
    _refused(backend, said)
    _backend(server, max_answer_bytes=300_000).generate(MESSAGES, SETTINGS)  # under it: taken


def test_a_trickling_answer_is_cut_at_the_whole_request_s_deadline(
    serve: Callable[..., StandIn],
) -> None:
    backend = _backend(serve(lambda n, body: Drip(0.2)), deadline=1.0)
    began = time.monotonic()
    _refused(backend, "did not answer within 1 s (the whole request's deadline)")
    # 3 tries of 1 s and their backoff (3.7 s); under one drip's 15 s: not forever
    assert time.monotonic() - began < 14


def test_a_trickling_or_padded_models_answer_is_one_line_within_its_bounds(
    serve: Callable[..., StandIn],
) -> None:
    dripping = serve(models=Drip(0.2))
    began = time.monotonic()
    with pytest.raises(ServerError, match="did not answer within 1 s") as raised:
        identify_server(dripping.url, Bounds(1.0, START_MAX_BYTES))
    assert time.monotonic() - began < 12  # (1 s; under one drip's 15 s, loaded or not)
    assert dripping.url in str(raised.value) and "/v1/models" in str(raised.value)
    padded = serve(models=Raw(json.dumps(_models()).encode() + b" " * 5000, length=False))
    with pytest.raises(ServerError, match="over the 4,096 bytes"):
        identify_server(padded.url, Bounds(5.0, 4096))


@pytest.mark.parametrize(
    "models",
    [{"data": "x"}, {"data": [1]}, [1, 2], {"data": [{"name": "m"}]}, {"data": [{"id": 3}]}],
)
def test_a_models_answer_of_another_shape_is_one_line(
    serve: Callable[..., StandIn], models: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from haf_tui.cli import main

    url = serve(models=models).url
    with pytest.raises(ServerError, match="a /v1/models answer of another shape"):
        identify_server(url)
    db = tmp_path / "haf.duckdb"
    assert main(["--db", str(db), "run", "--dataset", "sample", "--server", url]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and url in error[0] and "another shape" in error[0], error


def test_a_models_answer_nested_too_deep_for_json_is_one_line(
    serve: Callable[..., StandIn],
) -> None:
    """Brackets nested too deep for Python's json (a RecursionError: issue 42 §6) are no
    JSON: the server is not one, in one line."""
    url = serve(models=Raw(b"[" * 3000 + b"]" * 3000)).url
    with pytest.raises(ServerError, match="no OpenAI-compatible /v1/models answer"):
        identify_server(url)


# ------------------------------------------------------------------ the model of a resume


def _stored_run(db: Path, *, sha256: str | None, versions: dict[str, str]) -> Any:
    from haf_tui.store import open_store
    from haf_tui.store.records import RunRecord

    with open_store(db) as store:
        store.create_run(
            RunRecord(
                run_id="r1",
                status="interrupted",
                dataset_id="d",
                n_planned=1,
                config_json=RunConfig().model_dump_json(),
                model_file="SmolLM2-135M-Instruct.Q4_1.gguf",
                model_sha256=sha256,
                similarity_model="g",
                similarity_kind="bi-encoder",
                versions=versions,
            )
        )
        return store.get_run("r1")


def _resume(db: Path, backend: ServerBackend) -> dict[str, str]:
    """``start_or_resume`` of run r1 on ``backend``; the run's versions after it."""
    from haf_tui.pipeline.models import LoadedModels
    from haf_tui.pipeline.runs import RunRequest, start_or_resume
    from haf_tui.store import open_store

    models = LoadedModels(backend, similarity=None)  # type: ignore[arg-type]
    with open_store(db) as store:
        start_or_resume(store, RunRequest(resume_run_id="r1", preloaded=models))
        return store.get_run("r1").versions


def _sha256() -> str:
    from haf_tui.defaults import embedded_model_path
    from haf_tui.pipeline.models import file_sha256

    return file_sha256(embedded_model_path())


def test_a_resume_with_another_gguf_is_refused(
    serve: Callable[..., StandIn], tmp_path: Path
) -> None:
    from haf_tui.pipeline.served import ServedModelError

    db = tmp_path / "haf.duckdb"
    _stored_run(db, sha256="0" * 64, versions={})
    with pytest.raises(ServedModelError, match="run r1 was made with SmolLM2") as raised:
        _resume(db, _backend(serve()))
    assert "sha256 000000000000…" in str(raised.value) and "is another file" in str(raised.value)


def test_a_resume_on_a_server_of_another_model_is_refused_and_one_of_its_model_recorded(
    serve: Callable[..., StandIn], tmp_path: Path
) -> None:
    from haf_tui.pipeline.served import ServedModelError

    db = tmp_path / "haf.duckdb"
    first = f"llama-cpp-python 0.3 · /models/{MODEL} · http://127.0.0.1:1"
    _stored_run(db, sha256=_sha256(), versions={"duckdb": "1.1", "server 1": first})
    other = serve(models=_models("other.gguf"))
    with pytest.raises(ServedModelError, match=r"serves 'other\.gguf', but run r1 was served"):
        _resume(db, _backend(other))
    same = serve()
    versions = _resume(db, _backend(same))
    assert versions["server 1"] == first  # what served before stays
    assert versions["server 2"].endswith(f"· {MODEL} · {same.url}")  # what serves now
    assert _resume(db, _backend(same)) == versions  # recorded once
