"""A stand-in OpenAI-compatible server that passes the probe and then answers badly (issue 24
§3): a real HTTP server process on 127.0.0.1 (``python -m tests.support.bad_server SCENARIO``
prints its port). It answers ``/v1/models`` and the raw-log-probability probe as a healthy
server does, then every other ``/v1/completions`` request by its scenario:

- ``good``: a well-formed answer (tokens, raw log-probabilities, top-k; a teacher-forced
  request, its ``logit_bias`` token, read from the embedded GGUF's vocabulary);
- ``logprobs-null``, ``logprob-5``, ``logprob-nan``, ``top-null`` (a null inside
  ``top_logprobs``), ``no-token-logprobs``: that answer, every time;
- ``http-400``: HTTP 400 to two requests in flight together, answered at the same moment;
- ``http-500-once``: the first request gets HTTP 500, the others a good answer;
- ``hang``: no answer, ever.

``GET /stats`` says how many run requests came and how many were answered well."""

from __future__ import annotations

import contextlib
import json
import math
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import httpx

from haf_tui.inference.server import PROBE_PROMPT

SCENARIOS = (
    "good",
    "logprobs-null",
    "logprob-5",
    "logprob-nan",
    "top-null",
    "no-token-logprobs",
    "http-400",
    "http-500-once",
    "hang",
)
MODEL = "stand-in.gguf"
"""The model the stand-in names on /v1/models and in every answer."""
TOKENS = ["The", " text", " is", " toxic", "."]
LOGPROBS = [-0.25, -1.5, -0.5, -2.0, -0.75]


def good_answer(tokens: list[str] | None = None) -> dict[str, Any]:
    """A well-formed completion of ``tokens`` (default :data:`TOKENS`): each token first in
    its top-2, the runner-up 2 nats below (their probabilities sum to less than 1)."""
    texts = tokens or TOKENS
    values = LOGPROBS[: len(texts)] if tokens is None else [-1.0] * len(texts)
    tops = [
        {token: value, " other": value - 2.0} for token, value in zip(texts, values, strict=True)
    ]
    return {
        "model": MODEL,
        "choices": [
            {
                "text": "".join(texts),
                "finish_reason": "stop",
                "logprobs": {"tokens": texts, "token_logprobs": values, "top_logprobs": tops},
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": len(texts)},
    }


def bad_answer(scenario: str, tokens: list[str] | None = None) -> dict[str, Any]:
    """The answer of a scenario that answers every request the same bad way (the bad value
    on the first token: a forced request has only that one)."""
    answer = good_answer(tokens)
    logprobs = answer["choices"][0]["logprobs"]
    if scenario == "logprobs-null":
        answer["choices"][0]["logprobs"] = None
    elif scenario == "logprob-5":
        logprobs["token_logprobs"][0] = 5.0
    elif scenario == "logprob-nan":
        logprobs["token_logprobs"][0] = math.nan
    elif scenario == "top-null":
        logprobs["top_logprobs"][0][" other"] = None
    elif scenario == "no-token-logprobs":
        del logprobs["token_logprobs"]
    return answer


_VOCAB: list[Any] = []


def forced_text(body: dict[str, Any]) -> list[str] | None:
    """The text of the token a request forces by ``logit_bias`` (from the embedded GGUF's
    vocabulary, as a real server has it), or None: a sampled request."""
    bias = body.get("logit_bias")
    if not bias:
        return None
    if not _VOCAB:
        from haf_tui.defaults import embedded_model_path
        from haf_tui.inference.llama import LlamaCppBackend

        _VOCAB.append(LlamaCppBackend(embedded_model_path(), vocab_only=True))
    (token_id,) = (int(key) for key in bias)
    return [_VOCAB[0].token_piece(token_id).decode("utf-8", errors="ignore")]


class StandIn(BaseHTTPRequestHandler):
    """Answers by ``server.scenario`` (the class attribute set at start)."""

    scenario = "good"
    lock = threading.Lock()
    both = threading.Barrier(2, timeout=60)  # (the second may come late on a loaded machine)
    counts: ClassVar[dict[str, int]] = {"run_requests": 0, "answered": 0}

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, payload: object, status: int = 200) -> None:
        data = json.dumps(payload).encode()  # (NaN as the bare NaN Python's json reads)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path == "/v1/models":
            self._send({"data": [{"id": MODEL, "owned_by": "stand-in"}]})
        elif self.path == "/stats":
            with self.lock:
                self._send(dict(self.counts))
        else:
            self._send({"error": "not found"}, 404)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if body.get("prompt") == PROBE_PROMPT:  # the probe: raw, whatever the temperature
            top = {" Paris": -0.5, " a": -1.5, " the": -2.5}
            logprobs = {"tokens": [" Paris"], "token_logprobs": [-0.5], "top_logprobs": [top]}
            self._send({"choices": [{"text": " Paris", "logprobs": logprobs}]})
            return
        with self.lock:
            self.counts["run_requests"] += 1
            number = self.counts["run_requests"]
        scenario = self.scenario
        if scenario == "hang":
            while True:
                time.sleep(60)
        if scenario == "http-400":  # both at once: each fails while the other is in flight
            with contextlib.suppress(threading.BrokenBarrierError):
                self.both.wait()
            self._send({"error": {"message": "stand-in refuses"}}, 400)
            return
        if scenario == "http-500-once" and number == 1:
            self._send({"error": {"message": "stand-in failed"}}, 500)
            return
        with self.lock:
            tokens = forced_text(body)
        if scenario in ("good", "http-500-once"):
            with self.lock:
                self.counts["answered"] += 1
            self._send(good_answer(tokens))
            return
        self._send(bad_answer(scenario, tokens))


def main() -> None:
    """Serve the scenario named on the command line; print the port."""
    StandIn.scenario = sys.argv[1]
    server = ThreadingHTTPServer(("127.0.0.1", 0), StandIn)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()


@contextmanager
def stand_in(scenario: str) -> Iterator[str]:
    """The stand-in server process for a ``with`` block: its URL."""
    assert scenario in SCENARIOS
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.bad_server", scenario],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = f"http://127.0.0.1:{int(process.stdout.readline())}"
        yield url
    finally:
        process.kill()
        process.wait()


def stats(url: str) -> dict[str, int]:
    """How many run requests the stand-in got, and answered well."""
    return dict(httpx.get(f"{url}/stats", timeout=5).json())


if __name__ == "__main__":
    main()
