"""``haf serve`` cannot be killed or exhausted by one request (issue 33 §3), against the real
server (a subprocess on 127.0.0.1 with the embedded GGUF, one per module): a grammar (it
segfaulted llama-cpp-python's server), huge ``logprobs`` (16 MB a token), a prompt past the
context (1.5 GB left in use) are refused with a clean 400 and the server goes on; errors carry
no traceback or path; no ``/docs``; ``/v1/models`` names the file, not its path; the API key;
idle connections past the cap; a non-loopback ``--host`` without a key refused in one line."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import httpx
import pytest

from tests.support.servers import start_server, stop

ROOT = Path(__file__).resolve().parents[1]
KEY = "test-key-0123456789"
N_CTX = 512
CAP = 16
AUTH = {"Authorization": f"Bearer {KEY}"}


class Server:
    """The running server: its process, URL and the file its log goes to."""

    def __init__(self, process: subprocess.Popen[bytes], url: str, log: IO[bytes]):
        self.process = process
        self.url = url
        self.log = log

    def post(self, body: Any, headers: dict[str, str] | None = None) -> httpx.Response:
        return httpx.post(
            f"{self.url}/v1/completions", json=body, headers=headers or AUTH, timeout=60
        )

    def get(self, path: str, headers: dict[str, str] | None = None) -> httpx.Response:
        return httpx.get(f"{self.url}{path}", headers=headers or AUTH, timeout=30)

    def alive(self) -> bool:
        answer = self.post({"prompt": "Hello", "max_tokens": 2, "temperature": 0.0})
        return self.process.poll() is None and answer.status_code == 200

    def log_lines(self) -> list[str]:
        self.log.seek(0)
        return self.log.read().decode(errors="replace").splitlines()

    def rss_mb(self) -> float:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        line = next(ln for ln in status.splitlines() if ln.startswith("VmRSS:"))
        return int(line.split()[1]) / 1024


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    """``haf serve --model embedded --api-key KEY --max-connections 16`` with a 512-token
    context (the last ``--model`` given wins: the embedded one by name)."""
    extra = ["--api-key", KEY, "--max-connections", str(CAP), "--model", "embedded"]
    with tempfile.TemporaryFile() as log:
        process, url = start_server(N_CTX, extra=extra, api_key=KEY, stderr=log)
        try:
            yield Server(process, url, log)
        finally:
            stop(process)


def _clean(answer: httpx.Response, status: int) -> str:
    """The error's message once the answer is OpenAI's error shape, with no internals."""
    assert answer.status_code == status, answer.text
    text = answer.text
    for leak in ("Traceback", "site-packages", 'File "', ".py", ".gguf", str(Path.home())):
        assert leak not in text, text
    error = answer.json()["error"]
    assert set(error) == {"message", "type"}
    return str(error["message"])


GRAMMARS = ["root ::= root", 'root ::= "[a-z']


@pytest.mark.real_model
@pytest.mark.parametrize("grammar", GRAMMARS)
def test_a_grammar_is_refused_and_the_server_goes_on(server: Server, grammar: str) -> None:
    body = {"prompt": "Hello", "max_tokens": 4, "grammar": grammar}
    assert "grammar" in _clean(server.post(body), 400)
    assert server.alive()


@pytest.mark.real_model
@pytest.mark.parametrize("field", ["logprobs", "n_probs"])
def test_huge_logprobs_are_refused(server: Server, field: str) -> None:
    body = {"prompt": "Hello", "max_tokens": 4, field: 49152}
    assert "between 0 and 20" in _clean(server.post(body), 400)
    assert server.post({**body, field: 20}).status_code == 200  # haf's largest


@pytest.mark.real_model
def test_a_prompt_past_the_context_is_refused_before_it_is_run(server: Server) -> None:
    before = server.rss_mb()
    started = time.monotonic()
    huge = {"prompt": "word " * 1_000_000, "max_tokens": 4}  # ~1M tokens, 5 MB
    assert "too large" in _clean(server.post(huge), 413)
    over = {"prompt": "word " * N_CTX, "max_tokens": 4}  # fits the body cap, not the context
    assert "exceed the context" in _clean(server.post(over), 400)
    fits = {"prompt": "word " * (N_CTX // 2), "max_tokens": N_CTX}  # the two together do not
    assert "exceed the context" in _clean(server.post(fits), 400)
    assert time.monotonic() - started < 30  # (refused, not run: generous for a loaded machine)
    assert server.rss_mb() - before < 64
    assert "max_tokens" in _clean(server.post({"prompt": "Hi", "max_tokens": N_CTX + 1}), 400)
    assert server.alive()


@pytest.mark.real_model
def test_errors_say_one_line_without_internals(server: Server) -> None:
    url = f"{server.url}/v1/completions"
    not_json = httpx.post(url, content=b'{"prompt": ', headers={**AUTH, "Content-Type":
                          "application/json"}, timeout=30)  # fmt: skip
    assert "not valid JSON" in _clean(not_json, 400)
    plain = httpx.post(url, content=b"{}", headers={**AUTH, "Content-Type": "text/plain"})
    _clean(plain, 415)  # a browser's form post (no CORS preflight) is not run
    for body in (["a list"], {"prompt": ["a", "b"], "max_tokens": 2},
                 {"prompt": "Hi", "max_tokens": "2"}, {"prompt": "Hi", "max_tokens": True},
                 {"prompt": "Hi", "max_tokens": 2, "temperature": "hot"},
                 {"prompt": "Hi", "max_tokens": 2, "logit_bias": {"999999": 100}},
                 {"prompt": "Hi", "max_tokens": 2, "stream": True}):  # fmt: skip
        _clean(server.post(body), 400)
    _clean(server.get("/v1/completions"), 405)
    assert server.alive()


@pytest.mark.real_model
@pytest.mark.parametrize("path", ["/docs", "/redoc", "/openapi.json", "/v1/chat/completions",
                                  "/v1/embeddings", "/extras/tokenize"])  # fmt: skip
def test_only_the_routes_haf_uses_are_served(server: Server, path: str) -> None:
    _clean(server.get(path), 404)
    _clean(httpx.post(f"{server.url}{path}", json={}, headers=AUTH, timeout=30), 404)


@pytest.mark.real_model
def test_the_model_is_named_by_its_file_not_its_path(server: Server) -> None:
    from haf_tui.defaults import embedded_model_path

    models = server.get("/v1/models")
    assert models.status_code == 200
    assert [m["id"] for m in models.json()["data"]] == [embedded_model_path().name]
    assert "/" not in models.text
    answer = server.post({"prompt": "Hi", "max_tokens": 2, "model": "/etc/passwd"})
    assert answer.status_code == 200 and answer.json()["model"] == embedded_model_path().name


@pytest.mark.real_model
def test_the_api_key_is_required(server: Server) -> None:
    body = {"prompt": "Hi", "max_tokens": 2}
    for headers in ({"X-None": "1"}, {"Authorization": "Bearer wrong-key-0123456789"},
                    {"Authorization": KEY}, {"Authorization": f"Basic {KEY}"}):  # fmt: skip
        assert "API key" in _clean(server.post(body, headers), 401)
        assert "API key" in _clean(server.get("/v1/models", headers), 401)
        _clean(server.get("/docs", headers), 401)  # not even which routes exist
    assert server.post(body, {"Authorization": f"bearer {KEY}"}).status_code == 200


@pytest.mark.real_model
def test_idle_connections_past_the_cap_neither_kill_nor_block_it(server: Server) -> None:
    idle = [socket.create_connection(("127.0.0.1", int(server.url.rsplit(":", 1)[1])))
            for _ in range(300)]  # fmt: skip
    try:
        time.sleep(0.5)
        assert server.alive()  # an idle connection made room for it
        assert len(os.listdir(f"/proc/{server.process.pid}/fd")) < CAP + 64
    finally:
        for sock in idle:
            sock.close()
    assert server.alive()
    logged = [line for line in server.log_lines() if line.strip()]
    assert 1 <= len(logged) <= 21, logged  # the cap's lines, rate-limited
    assert all(line.startswith("haf serve: ") for line in logged), logged


@pytest.mark.real_model
def test_a_connection_that_sends_nothing_is_closed(server: Server) -> None:
    from haf_tui.inference.serve_limits import FIRST_REQUEST_SECONDS

    port = int(server.url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(b"GET /v1/models HTTP/1.1\r\nHost: x\r\n")  # never finishes its head
        sock.settimeout(FIRST_REQUEST_SECONDS + 60)
        started = time.monotonic()
        assert sock.recv(1024) == b""  # closed by the server, no answer
        assert time.monotonic() - started < FIRST_REQUEST_SECONDS + 20  # (never: the timeout)


def _haf_serve(*argv: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "haf_tui.cli", "serve", *argv]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HAF_HOME": str(tmp_path)}
    env.pop("HAF_SERVE_API_KEY", None)
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)


def test_a_non_loopback_host_needs_an_api_key(tmp_path: Path) -> None:
    argv = ["--model", "embedded", "--host", "0.0.0.0", "--port", "0"]  # (others: units)
    result = _haf_serve(*argv, tmp_path=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and "--api-key" in result.stderr, result.stderr
    assert result.stdout == ""  # no server started


def test_a_short_api_key_is_one_line(tmp_path: Path) -> None:
    argv = ["--model", "embedded", "--host", "0.0.0.0", "--api-key", "short", "--port", "0"]
    result = _haf_serve(*argv, tmp_path=tmp_path)
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "at least 8 characters" in result.stderr and result.stdout == ""


def test_haf_s_client_sends_the_key_from_the_environment(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``haf run --server`` against a keyed ``haf serve``: without HAF_SERVE_API_KEY one line
    saying a key is wanted and where it goes; with it, the server is identified and probed."""
    from haf_tui.inference.server import ServerError, check_raw_logprobs, identify_server

    monkeypatch.delenv("HAF_SERVE_API_KEY", raising=False)
    with pytest.raises(ServerError, match="wants an API key; set HAF_SERVE_API_KEY"):
        identify_server(server.url)
    monkeypatch.setenv("HAF_SERVE_API_KEY", KEY)
    info = identify_server(server.url)
    assert info.kind == "llama-cpp-python"
    check_raw_logprobs(info)  # a completion, sent with the key
