"""``haf serve`` on llama.cpp's own llama-server (issue 37 §1), built by ``make llama-server``
from the pinned llama-cpp-python sdist's vendored llama.cpp, as real subprocesses on
127.0.0.1 with the embedded GGUF: identified and probed as llama-server, every suite run on
it, its tokens' log-probabilities within :data:`SERVER_TOLERANCE` of the in-process path,
forced scoring by ``logit_bias``, a killed server's run resumed on another, the API key never
on the process list, SIGTERM a one-line stop. Skipped, with the reason, where llama-server is
not built."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import httpx
import pytest

from haf_tui.config import DecodingSettings
from haf_tui.inference.server import ServerError, identify_server, parse_endpoint
from haf_tui.inference.server_backend import ServerBackend
from haf_tui.inference.server_pool import ServerPool
from haf_tui.messages import ChatMessage
from tests.support.logprob_agreement import assert_tokens_agree, common_prefix
from tests.support.servers import free_port, llama_server_or_skip, serve_command, start_server
from tests.support.servers import stop as stop_server
from tests.test_server_runs import KillAfter, _stored

pytestmark = pytest.mark.real_model
ENGINE: Final = "llama-server"
SERVER_TOLERANCE: Final = 0.3
"""Nats between llama-server's and the in-process path's log-probability of one token, and
of each top alternative: the same llama.cpp, other batch shapes and a prompt cache
(tests/support/logprob_agreement.py). Measured on this VM over 514 tokens (8 texts, greedy,
sampled and 3 forced replies each): median 0.00013, p99 0.134, max 0.247 (docs/servers.md)."""
FIRST_TOLERANCE: Final = 0.01
"""Nats on a greedy reply's first tokens, before the batch shapes' rounding builds up (1e-4
measured; flash attention, llama-server's default that haf turns off, puts 0.08 there)."""
MESSAGES = [
    ChatMessage("user", "Is the following TEXT toxic? TEXT: you are an idiot. Give reasons.")
]
RUN_ARGS = ["run", "--dataset", "sample", "--limit", "1", "--max-new-tokens", "16"]


def _start(
    parallel: int = 2, api_key: str | None = None, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen[bytes], str]:
    llama_server_or_skip()
    extra = ("--api-key", api_key) if api_key else ()
    return start_server(
        n_ctx=2048, parallel=parallel, engine=ENGINE, extra=extra, api_key=api_key, env=env
    )


@pytest.fixture(scope="module")
def llama_server() -> Iterator[str]:
    process, url = _start()
    yield url
    stop_server(process)


def _backend(urls: list[str], per: int = 2) -> ServerBackend:
    from haf_tui.defaults import embedded_model_path

    endpoints = [parse_endpoint(f"{u}#{per}") for u in urls]
    return ServerBackend(embedded_model_path(), endpoints, n_ctx=2048)


def test_it_is_identified_as_llama_server_and_its_logprobs_are_raw(llama_server: str) -> None:
    backend = _backend([llama_server])  # (the probe runs here)
    (info,) = backend.servers()
    from haf_tui.defaults import embedded_model_path

    assert info.kind == "llama-server" and info.model == embedded_model_path().name
    backend.close()


def test_tokens_and_logprobs_agree_with_the_in_process_path(
    llama_server: str, embedded_backend: Any
) -> None:
    """Greedy and sampled replies: every token both paths share within the tolerance, ids
    and offsets equal; the top alternatives agree where not a near tie."""
    backend = _backend([llama_server])
    for settings in (
        DecodingSettings(temperature=0.0, max_new_tokens=24, top_logprobs=3),
        DecodingSettings(temperature=0.8, seed=7, max_new_tokens=24, top_logprobs=3),
    ):
        served = backend.generate(MESSAGES, settings)
        local = embedded_backend.generate(MESSAGES, settings)
        assert served.prompt_text == local.prompt_text
        shared = common_prefix(served.tokens, local.tokens)
        assert shared >= 1
        assert_tokens_agree(served.tokens[:shared], local.tokens[:shared], SERVER_TOLERANCE)
        if settings.temperature == 0.0:
            assert shared >= 8  # greedy: the same reply, at least this far
            pairs = zip(served.tokens[:8], local.tokens[:8], strict=True)
            first = [abs(a.logprob - b.logprob) for a, b in pairs]
            assert max(first) <= FIRST_TOLERANCE, first
    backend.close()


def test_an_answer_that_ends_on_its_own_is_stored_without_its_end_token(
    llama_server: str, embedded_backend: Any
) -> None:
    """llama-server lists the end-of-generation token that ends an answer; in process it is
    never part of the answer: through either path no stored token ends generation, and the
    same reply has the same tokens (``output_tokens`` was 1 higher through llama-server)."""
    backend = _backend([llama_server])
    settings = DecodingSettings(temperature=0.0, max_new_tokens=96, top_logprobs=2)
    messages = [ChatMessage("user", "Say hello in one short sentence.")]
    served = backend.generate(messages, settings)
    local = embedded_backend.generate(messages, settings)
    backend.close()
    assert served.finish_reason == "stop" and len(served.tokens) < settings.max_new_tokens
    for answer in (served, local):
        assert not any(embedded_backend.ends_generation(t.token_id) for t in answer.tokens)
        assert answer.text == b"".join(t.piece for t in answer.tokens).decode()
    shared = common_prefix(served.tokens, local.tokens)
    if served.text == local.text:  # (the same reply: the same count, token for token)
        assert shared == len(served.tokens) == len(local.tokens)


def test_forced_scoring_by_logit_bias_agrees_with_in_process(
    llama_server: str, embedded_backend: Any
) -> None:
    backend = _backend([llama_server])
    settings = DecodingSettings(temperature=0.0, max_new_tokens=8, top_logprobs=2)
    for forced in ("toxic", " not toxic at all"):
        served = backend.score(MESSAGES, forced, settings)
        local = embedded_backend.score(MESSAGES, forced, settings)
        assert served.text == local.text == forced
        assert_tokens_agree(served.tokens, local.tokens, SERVER_TOLERANCE)
    backend.close()


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    from haf_tui.cli import main

    assert main(argv) == 0, capsys.readouterr().err
    return capsys.readouterr().out


def test_the_haf_classify_and_rationales_suites_run_on_it(
    llama_server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from haf_tui.methods.rationales.suite.plan import STAGES as RATIONALE_STAGES
    from haf_tui.store import open_store

    db = tmp_path / "haf.duckdb"
    argv = ["--db", str(db), *RUN_ARGS, "--stages", "justify", "--server", f"{llama_server}#2"]
    _run([*argv, "--suites", "haf,classify,rationales"], capsys)
    _, status, rows, keys, finished = _stored(db)
    assert status == "finished" and finished == 1 and rows == keys > 0
    with open_store(db, read_only=True) as store:
        stages = {stage for (stage,) in store.query("SELECT DISTINCT stage FROM generations")[1]}
    assert {"justify", "classify"} <= stages and stages & set(RATIONALE_STAGES)


def test_the_judge_suite_s_forced_labels_after_its_reply_prefix_score_as_in_process(
    llama_server: str, embedded_backend: Any
) -> None:
    """What a judge run asks (each criterion's labels forced after the reply so far), on
    llama-server against in process."""
    from haf_tui.methods.judge.core.prompts import judge_messages, toxicity_item

    backend = _backend([llama_server])
    messages = judge_messages(toxicity_item("you are an idiot", ["It insults the reader."]))
    settings = DecodingSettings(temperature=0.0, max_new_tokens=4, top_logprobs=2)
    prefix = "1. a\n2. 1\n3. no\n4. no\n5. no\n6. "
    for label in ("none", "some", "sufficient", "ample"):
        served = backend.score(messages, label, settings, reply_prefix=prefix)
        local = embedded_backend.score(messages, label, settings, reply_prefix=prefix)
        assert served.finish_reason == "forced" and served.text == local.text == label
        assert served.prompt_token_count == local.prompt_token_count
        assert_tokens_agree(served.tokens, local.tokens, SERVER_TOLERANCE)
    backend.close()


def test_a_server_killed_mid_run_and_the_run_resumed_on_another(
    llama_server: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from haf_tui.cli import main

    db = tmp_path / "haf.duckdb"
    victim, victim_url = _start(parallel=1)
    argv = ["--db", str(db), *RUN_ARGS, "--limit", "2", "--stages", "justify,internal"]
    try:
        killer = KillAfter(victim, victim_url, answers=3)
        monkeypatch.setattr(ServerPool, "_post", killer.as_method())
        assert main([*argv, "--suites", "haf,classify", "--server", f"{victim_url}#1"]) == 2
    finally:
        stop_server(victim)
    error = capsys.readouterr().err
    assert "no server is left" in error and len(error.strip().splitlines()) == 1
    run_id, status, rows_before, keys_before, _ = _stored(db)
    assert status != "finished" and rows_before == keys_before >= 1
    monkeypatch.undo()
    resume = ["--db", str(db), "run", "--resume", run_id, "--server", f"{llama_server}#2"]
    assert main(resume) == 0, capsys.readouterr().err
    _, status, rows, keys, finished = _stored(db)
    assert status == "finished" and finished == 2 and rows == keys > rows_before


def test_the_api_key_is_asked_for_and_never_on_the_process_list(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    key = "a-key-of-the-test-1234"
    own_tmp = tmp_path / "tmp"  # (its key file's folder: no other test's server writes there)
    own_tmp.mkdir()
    process, url = _start(parallel=1, api_key=key, env={**os.environ, "TMPDIR": str(own_tmp)})
    try:
        command_lines = _command_lines()  # (the test gave haf serve its key on its own line)
        assert not [line for line in command_lines if key in line and "haf_tui.cli" not in line]
        assert any(f"--api-key-file {own_tmp}/haf-serve-key-" in line for line in command_lines)
        monkeypatch.delenv("HAF_SERVE_API_KEY", raising=False)
        with pytest.raises(ServerError, match="wants an API key"):
            identify_server(url)
        monkeypatch.setenv("HAF_SERVE_API_KEY", key)
        assert identify_server(url).kind == "llama-server"
        # read at start, removed once haf serve sees /health answer: a moment after this
        # test's own poll may have seen the server answer (30 s catches "never removed")
        deadline = time.monotonic() + 30
        while list(own_tmp.glob("haf-serve-key-*")) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not list(own_tmp.glob("haf-serve-key-*"))
    finally:
        stop_server(process)


def _command_lines() -> list[str]:
    lines = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                lines.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode())
            except OSError:
                continue
    return lines


def test_the_ready_line_names_llama_server_and_sigterm_stops_it_in_one_line(
    tmp_path: Path,
) -> None:
    llama_server_or_skip()
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root), "HAF_HOME": str(tmp_path)}
    command = serve_command(free_port(), n_ctx=512, parallel=3, engine=ENGINE)
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        assert process.stdout is not None
        ready = process.stdout.readline().decode()
        assert "ready (llama-server, 3 slots, one copy" in ready, ready
        url = ready.rsplit(" ", 1)[-1].strip()
        assert url.endswith("#3") and url.startswith("http://127.0.0.1:")
        assert httpx.get(url.partition("#")[0] + "/health", timeout=5).status_code == 200
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0
        assert process.stdout.read().decode() == "haf serve: stopped (SIGTERM)\n"
        assert process.stderr is not None and b"Traceback" not in process.stderr.read()
        with pytest.raises(httpx.HTTPError):  # the llama-server went with it
            httpx.get(url.partition("#")[0] + "/health", timeout=2)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_asked_for_and_not_found_is_one_line(tmp_path: Path) -> None:
    from haf_tui.defaults import embedded_model_path

    env = {**os.environ, "HAF_HOME": str(tmp_path), "HAF_LLAMA_SERVER": str(tmp_path / "none")}
    argv = ["serve", "--model", str(embedded_model_path()), "--engine", ENGINE, "--port", "0"]
    result = subprocess.run(
        [sys.executable, "-m", "haf_tui.cli", *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        cwd=Path(__file__).resolve().parents[1],
    )
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "HAF_LLAMA_SERVER" in result.stderr
