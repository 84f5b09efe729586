"""Server endpoints (issue 16, first part): who answers and whether its log-probabilities are
raw: against ``haf serve`` (llama-cpp-python's own server) on 127.0.0.1 serving the embedded
GGUF, reached with and without ``/v1`` at the end of its URL, and a
small stand-in server whose log-probabilities follow the temperature (processed)."""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from haf_tui.inference.server import (
    ServerError,
    check_raw_logprobs,
    identify_server,
    logprobs_are_raw,
    parse_endpoint,
    server_base_url,
    server_kind,
)
from tests.support.servers import free_port, running_server


@pytest.fixture(scope="module")
def llama_server() -> Iterator[str]:
    """``haf serve`` (llama-cpp-python's server) on 127.0.0.1 with the embedded model."""
    with running_server(n_ctx=512) as (_, url):
        yield url


@pytest.mark.real_model
def test_llama_cpp_python_s_server_is_identified_and_raw(llama_server: str) -> None:
    info = identify_server(llama_server)
    assert info.kind == "llama-cpp-python"
    assert info.model.endswith(".gguf") and info.version != "unknown"
    check_raw_logprobs(info)  # does not raise
    assert info.as_record()["url"] == llama_server


@pytest.mark.real_model
@pytest.mark.parametrize("suffix", ["/v1", "/v1/", "/"])
def test_a_v1_url_names_the_same_server(llama_server: str, suffix: str) -> None:
    # vLLM's documentation gives http://host:8000/v1; it failed with "no OpenAI-compatible
    # /v1/models answer" (issue 28 §2)
    info = identify_server(llama_server + suffix)
    assert info.url == llama_server and info.kind == "llama-cpp-python"
    check_raw_logprobs(info)


def test_server_urls_are_normalised_in_one_place() -> None:
    for url in ("http://h:8000", "http://h:8000/", "http://h:8000/v1", "http://h:8000/v1/"):
        assert server_base_url(url) == "http://h:8000"
        assert parse_endpoint(f"{url}#3") == parse_endpoint("http://h:8000#3")
    assert server_base_url("https://h/api/v1") == "https://h/api"
    assert server_base_url("http://h:8000/v10") == "http://h:8000/v10"


class _Processed(BaseHTTPRequestHandler):
    """A stand-in OpenAI server whose top log-probabilities are taken after temperature."""

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, payload: object) -> None:
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path == "/v1/models":
            self._send({"data": [{"id": "m", "owned_by": "vllm"}]})
        else:
            self.send_response(404)
            self.end_headers()

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        logits = {" Paris": 3.0, " a": 1.0, " the": 0.5}
        scaled = {t: v / body["temperature"] for t, v in logits.items()}
        norm = math.log(sum(math.exp(v) for v in scaled.values()))
        top = {t: v - norm for t, v in scaled.items()}
        self._send({"choices": [{"text": " Paris", "logprobs": {"top_logprobs": [top]}}]})


def test_a_server_with_processed_logprobs_is_refused_with_its_flag() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Processed)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        info = identify_server(url)
        assert info.kind == "vllm"
        with pytest.raises(ServerError, match="--logprobs-mode raw_logprobs"):
            check_raw_logprobs(info)
    finally:
        server.shutdown()
        server.server_close()


def test_an_address_without_a_server_is_one_line() -> None:
    with pytest.raises(ServerError, match="no OpenAI"):
        identify_server(f"http://127.0.0.1:{free_port()}")


def test_kinds_and_the_raw_rule() -> None:
    assert server_kind({"data": [{"owned_by": "llamacpp"}]}, None, None) == "llama-server"
    assert server_kind({"data": [{"owned_by": "me"}]}, None, None) == "llama-cpp-python"
    assert server_kind({"data": [{"owned_by": "x"}]}, {"version": "0.9"}, None) == "vllm"
    assert server_kind({"data": [{"owned_by": "x"}]}, None, None) == "openai-compatible"
    assert logprobs_are_raw({"a": -1.0, "b": -2.0}, {"a": -1.0005, "c": -3.0})
    assert not logprobs_are_raw({"a": -1.0}, {"a": -1.5})
    assert not logprobs_are_raw({"a": -1.0}, {"b": -1.0})
