"""``haf serve`` (issue 28 §2) as a real subprocess on 127.0.0.1 with the embedded GGUF: one
line when ready with the URL for ``haf run --server``, multi-token prompts answered (the
README's llama-cpp-python command died on them on AMX Xeons), requests decoded at once by
``--parallel`` copies, a ``haf run --server URL/v1`` through it, SIGTERM a one-line stop, and
bad input one line and exit status 2."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.support.servers import serve_command

ROOT = Path(__file__).resolve().parents[1]
PROMPT = "Write a short sentence about the sea, and then another one about the sky."


def _environment(home: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "HAF_HOME": str(home)}


def _haf(*argv: str, home: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "haf_tui.cli", *argv]
    return subprocess.run(
        command, capture_output=True, text=True, env=_environment(home), timeout=timeout
    )


class Served:
    """A ``haf serve`` subprocess and the lines it printed."""

    def __init__(self, home: Path, parallel: int) -> None:
        pytest.importorskip("uvicorn", reason="llama-cpp-python's [server] extra is missing")
        command = serve_command(0, n_ctx=1024, parallel=parallel)  # port 0: any free one
        self.process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=_environment(home),
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put("")  # end of output

    def next_line(self, wait_s: float = 120) -> str:
        return self.lines.get(timeout=wait_s)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, str]]:
    """``haf serve --parallel 2`` on a free port; the URL its ready line gives."""
    served = Served(tmp_path_factory.mktemp("serve"), parallel=2)
    try:
        ready = served.next_line()
        assert ready.startswith("haf serve: SmolLM2"), ready
        assert "ready (2 copies" in ready and "haf run --server http://127.0.0.1:" in ready
        yield served, ready.rsplit(" ", 1)[-1]
    finally:
        served.stop()


@pytest.mark.real_model
def test_multi_token_prompts_are_answered_two_at_once(served: tuple[Served, str]) -> None:
    _, url = served
    body = {"prompt": PROMPT, "max_tokens": 12, "logprobs": 3, "temperature": 0.0}

    def complete(_: int) -> httpx.Response:
        return httpx.post(f"{url}/v1/completions", json=body, timeout=120)

    with ThreadPoolExecutor(4) as pool:  # four requests on two copies: two wait, none fails
        answers = list(pool.map(complete, range(4)))
    assert [a.status_code for a in answers] == [200] * 4
    texts = {a.json()["choices"][0]["text"] for a in answers}
    assert len(texts) == 1  # greedy: every copy gives the same text
    logprobs = answers[0].json()["choices"][0]["logprobs"]
    assert len(logprobs["token_logprobs"]) == len(logprobs["top_logprobs"]) >= 1


@pytest.mark.real_model
@pytest.mark.real_similarity
def test_a_run_through_haf_serve_with_a_v1_url(served: tuple[Served, str], tmp_path: Path) -> None:
    _, url = served
    db = tmp_path / "haf.duckdb"
    argv = ["--db", str(db), "run", "--dataset", "sample", "--limit", "1"]
    argv += ["--max-new-tokens", "12", "--stages", "justify", "--suites", "haf"]
    result = _haf(*argv, "--server", f"{url}/v1#2", home=tmp_path)
    assert result.returncode == 0, result.stderr
    from haf_tui.store import open_store

    with open_store(db, read_only=True) as store:
        ((status,),) = store.query("SELECT status FROM runs")[1]
        ((generations,),) = store.query("SELECT count(*) FROM generations")[1]
    assert status == "finished" and generations >= 1


@pytest.mark.real_model
def test_without_a_key_a_page_that_rebinds_its_name_is_refused(served: tuple[Served, str]) -> None:
    _, url = served
    rebound = httpx.get(f"{url}/v1/models", headers={"Host": "evil.example"}, timeout=30)
    assert rebound.status_code == 403 and "127.0.0.1" in rebound.json()["error"]["message"]
    port = url.rsplit(":", 1)[1]
    named = httpx.get(f"{url}/v1/models", headers={"Host": f"localhost:{port}"}, timeout=30)
    assert named.status_code == 200


@pytest.mark.real_model
def test_sigterm_stops_it_in_one_line(tmp_path: Path) -> None:
    served = Served(tmp_path, parallel=1)
    try:
        assert "ready (one copy" in served.next_line()
        served.process.send_signal(signal.SIGTERM)
        assert served.process.wait(timeout=60) == 0
        assert served.next_line() == "haf serve: stopped (SIGTERM)"
        assert served.next_line() == ""  # nothing after it: no traceback
    finally:
        served.stop()


def test_a_missing_or_non_gguf_model_is_one_line(tmp_path: Path) -> None:
    not_gguf = tmp_path / "notes.gguf"
    not_gguf.write_text("not a model, just some text")
    for model, says in ((tmp_path / "absent.gguf", "model file not found"),
                        (not_gguf, "not a GGUF file")):  # fmt: skip
        result = _haf("serve", "--model", str(model), "--port", "0", home=tmp_path, timeout=60)
        assert result.returncode == 2
        assert result.stderr.count("\n") == 1 and says in result.stderr, result.stderr


def test_gpu_layers_on_a_build_without_offload_is_one_line(tmp_path: Path) -> None:
    from haf_tui.defaults import embedded_model_path
    from haf_tui.inference.llama_load import gpu_offload_supported

    if gpu_offload_supported():
        pytest.skip("this llama.cpp build offloads to a GPU")
    argv = ["serve", "--model", str(embedded_model_path()), "--n-gpu-layers", "8"]
    argv += ["--engine", "llama-cpp-python"]  # (llama-server's own check: test_serve_llama_server)
    result = _haf(*argv, home=tmp_path, timeout=60)
    assert result.returncode == 2 and "no GPU offload" in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1
