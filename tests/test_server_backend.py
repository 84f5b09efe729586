"""Server backends (issue 16): runs generate on real servers — ``haf serve``
(llama-cpp-python's own server, the same pinned build as in process) started here on
127.0.0.1 with the
embedded GGUF — and store what the in-process path stores.

Why llama-cpp-python's server and not llama-server: it installs from the package already
pinned (no second llama.cpp build), starts in seconds, and returns raw log-probabilities."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from haf_tui.config import DecodingSettings
from haf_tui.inference.base import Generation, GenerationRequest, ListSource
from haf_tui.inference.server import ServerError, parse_endpoint
from haf_tui.inference.server_backend import ServerBackend
from haf_tui.messages import ChatMessage
from tests.support.logprob_agreement import FLOAT32_LOG_SOFTMAX, assert_tokens_agree
from tests.support.servers import start_server, stop

pytestmark = pytest.mark.real_model
MESSAGES = [
    ChatMessage("user", "Is the following TEXT toxic? TEXT: you are an idiot. Give reasons.")
]


@pytest.fixture(scope="module")
def two_servers() -> Iterator[list[str]]:
    started = [start_server(), start_server()]
    yield [url for _, url in started]
    for process, _ in started:
        stop(process)


def _backend(urls: list[str], per: int = 2) -> ServerBackend:
    from haf_tui.defaults import embedded_model_path

    return ServerBackend(
        embedded_model_path(), [parse_endpoint(f"{u}#{per}") for u in urls], n_ctx=2048
    )


@pytest.fixture(scope="module")
def as_served() -> Iterator[Any]:
    """The embedded GGUF in process, set up as ``haf serve`` sets up the servers here: the
    same context (2,048), one thread, the CPU, llama.cpp's extra buffer types off."""
    from haf_tui.defaults import embedded_model_path
    from haf_tui.inference.llama import LlamaCppBackend

    backend = LlamaCppBackend(embedded_model_path(), n_ctx=2048, n_threads=1, n_gpu_layers=0)
    yield backend
    backend.close()


def test_tokens_and_logprobs_equal_the_in_process_path(
    two_servers: list[str], as_served: Any
) -> None:
    """The server renders and counts the prompt as in process and, running the same
    computation (the same weights, context, thread count and sampler settings), answers with
    the same reply: the same tokens and offsets, the same top alternatives, and the same
    logprobs up to the rounding of their last step (llama-cpp-python's server takes the
    log-softmax of the logits in float32, haf in float64). A greedy and a seeded sampled
    reply; a different code path (another batch shape, another thread count) is never
    compared here: its kernels may sum in another order on another CPU."""
    backend = _backend(two_servers)
    assert [s.kind for s in backend.servers()] == ["llama-cpp-python"] * 2
    for settings in (
        DecodingSettings(temperature=0.0, max_new_tokens=24, top_logprobs=3),
        DecodingSettings(temperature=0.8, seed=7, max_new_tokens=24, top_logprobs=3),
    ):
        served = backend.generate(MESSAGES, settings)
        local = as_served.generate(MESSAGES, settings)
        assert served.prompt_text == local.prompt_text  # the same renderer
        assert served.prompt_token_count == local.prompt_token_count
        assert served.text == local.text and served.tokens
        assert_tokens_agree(served.tokens, local.tokens, FLOAT32_LOG_SOFTMAX)
    backend.close()


class KillAfterFirst(ListSource):
    """Kills a server when the first result comes back."""

    def __init__(self, requests: list[GenerationRequest], victim: subprocess.Popen[bytes]):
        super().__init__(requests)
        self.victim = victim

    def finished(self, request: GenerationRequest, generation: Generation) -> None:
        super().finished(request, generation)
        if self.victim.poll() is None:
            self.victim.kill()
            self.victim.wait()


def test_a_killed_server_s_work_moves_to_the_others(two_servers: list[str]) -> None:
    victim, victim_url = start_server()
    try:
        backend = _backend([victim_url, two_servers[0]], per=2)
        settings = DecodingSettings(temperature=0.0, max_new_tokens=12, top_logprobs=1)
        prompts = [[ChatMessage("user", f"Say something about the number {n}.")] for n in range(8)]
        requests = [GenerationRequest(m, settings, tag=n) for n, m in enumerate(prompts)]
        source = KillAfterFirst(requests, victim)
        backend.concurrent(4).serve(source)
        assert sorted(source.results) == list(range(8))  # nothing lost, each once
        dead, alive = backend.endpoints
        assert not dead.alive and alive.alive
        assert alive.served + dead.served == 8 and dead.errors
        # the same answers as a healthy server gives
        again = backend.generate(prompts[5], settings)
        assert again.text == source.results[5].text
        backend.close()
    finally:
        stop(victim)


def test_no_server_left_is_one_line(two_servers: list[str]) -> None:
    victim, url = start_server()
    backend = _backend([url], per=1)
    stop(victim)
    settings = DecodingSettings(temperature=0.0, max_new_tokens=4)
    with pytest.raises(ServerError, match="no server is left"):
        backend.generate(MESSAGES, settings)
    backend.close()


def test_endpoint_specs() -> None:
    assert parse_endpoint("http://h:1#3").concurrency == 3
    assert parse_endpoint("http://h:1/").url == "http://h:1"
    for bad in ("h:1", "http://h:1#x", "http://h:1#0"):
        with pytest.raises(ServerError):
            parse_endpoint(bad)


def test_haf_run_on_two_servers_stores_what_in_process_stores(
    two_servers: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from haf_tui.cli import main
    from haf_tui.store import open_store

    db = tmp_path / "haf.duckdb"
    argv = ["--db", str(db), "run", "--dataset", "sample", "--limit", "2"]
    argv += ["--max-new-tokens", "24", "--stages", "justify,internal", "--suites", "haf,classify"]
    argv += [arg for url in two_servers for arg in ("--server", f"{url}#2")]
    assert main(argv) == 0, capsys.readouterr().err
    with open_store(db, read_only=True) as store:
        ((run_id, versions),) = store.query("SELECT run_id, versions FROM runs")[1]
        counts = store.query(
            "SELECT count(*), count(DISTINCT (instance_id, stage, sub_index)) FROM generations"
        )[1]
        tokens = store.query("SELECT count(*) FROM tokens WHERE logprob <= 0")[1]
        metrics = store.query("SELECT count(*) FROM instance_metrics")[1]
        forced = store.query("SELECT count(*) FROM generations WHERE finish_reason = 'forced'")[1]
    assert "server 1" in versions and "server 2" in versions and "llama-cpp-python" in versions
    assert counts[0][0] == counts[0][1] >= 2
    assert tokens[0][0] > 0 and metrics[0][0] > 0
    assert forced[0][0] >= 2 * 4  # classify: four label spellings per instance
    assert run_id


def test_forced_labels_score_as_in_process(two_servers: list[str], as_served: Any) -> None:
    from haf_tui.methods.judge.core.prompts import judge_messages, toxicity_item

    backend = _backend(two_servers)
    messages = judge_messages(toxicity_item("you are an idiot", ["It insults the reader."]))
    settings = DecodingSettings(temperature=0.0, max_new_tokens=4, top_logprobs=2)
    prefix = "1. a\n2. 1\n3. no\n4. no\n5. no\n6. "
    for label in ("none", "some", "sufficient", "ample"):
        served = backend.score(messages, label, settings, reply_prefix=prefix)
        local = as_served.score(messages, label, settings, reply_prefix=prefix)
        assert served.finish_reason == "forced" and served.text == local.text == label
        assert [t.token_id for t in served.tokens] == [t.token_id for t in local.tokens]
        assert [t.logprob for t in served.tokens] == pytest.approx(
            [t.logprob for t in local.tokens], abs=1e-4
        )
        assert served.prompt_text.endswith(prefix)
        assert served.prompt_token_count == local.prompt_token_count
    backend.close()
