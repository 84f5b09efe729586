"""Server answers are checked before they are stored (issue 24 §3, and §6's 5xx retry).

``haf run --server`` runs in a subprocess, through the real CLI, against a stand-in
OpenAI-compatible server process on 127.0.0.1 (tests/support/bad_server.py) that passes the
probe and then answers badly: each bad answer is a server fault (retried, then one line
naming the server and what it returned; exit 2), never a stored row, with no traceback and
no request task left behind; a 5xx followed by a good answer is retried and the run
finishes; one Ctrl-C stops a run whose server hangs within seconds, and it resumes.

The answer rules themselves (:func:`checked_answer`) are tested without a server first."""

from __future__ import annotations

import asyncio
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from haf_tui.inference.server_answers import BadAnswerError, checked_answer
from tests.support.bad_server import bad_answer, good_answer, stand_in, stats

RUN = ["run", "--dataset", "sample", "--limit", "2", "--stages", "justify"]
RUN += ["--max-new-tokens", "16"]
HAF = ["--suites", "haf", "--server"]


# ------------------------------------------------------------------ the rules, unit by unit


def _answer(tokens: list[str], values: list[Any], tops: Any = None) -> dict[str, Any]:
    logprobs: dict[str, Any] = {"tokens": tokens, "token_logprobs": values}
    if tops is not None:
        logprobs["top_logprobs"] = tops
    return {"choices": [{"text": "".join(tokens), "logprobs": logprobs}]}


def test_a_good_answer_passes_with_its_numbers() -> None:
    choice, positions = checked_answer(good_answer())
    assert choice["text"] == "The text is toxic."
    assert [p[1] for p in positions] == [-0.25, -1.5, -0.5, -2.0, -0.75]
    assert positions[0][2] == {"The": -0.25, " other": -2.25}


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (bad_answer("logprobs-null"), "logprobs is null"),
        (bad_answer("logprob-5"), "of 5.0 (above 0"),
        (bad_answer("logprob-nan"), "of nan (not finite)"),
        (bad_answer("top-null"), "of null (not a number)"),
        (bad_answer("no-token-logprobs"), "token_logprobs is null"),
        (_answer(["a"], [-math.inf]), "of -inf (not finite)"),
        (_answer(["a"], [True]), "of True (not a number)"),
        (_answer(["a"], ["-1"]), "of '-1' (not a number)"),
        (_answer(["a", "b"], [-1.0]), "2 tokens but 1 token log-probabilities"),
        (_answer(["a"], [-1.0], [None]), "top_logprobs[0] of null"),
        (_answer(["a"], [-1.0], [{"b": -2.0}, {}]), "1 tokens but top_logprobs"),
        (_answer(["a"], [-1.0], [{"b": 0.5}]), "top log-probability of token 0 ('b') of 0.5"),
        (_answer(["a"], [-1.0], [{"b": math.nan}]), "of nan (not finite)"),
        ({"choices": []}, "without choices"),
        ({"choices": [{"text": None, "logprobs": {}}]}, "text is null"),
        (
            {"choices": [{"text": "hi", "logprobs": {"tokens": [], "token_logprobs": []}}]},
            "without its tokens",
        ),
        (
            {"choices": [{"text": "hi", "logprobs": {"tokens": [1], "token_logprobs": [-1]}}]},
            "tokens are [1]",
        ),
    ],
)
def test_a_bad_answer_is_refused_saying_what_came(answer: dict[str, Any], said: str) -> None:
    with pytest.raises(BadAnswerError) as raised:
        checked_answer(answer)
    assert said in str(raised.value)
    assert "\n" not in str(raised.value)


def test_a_token_outside_its_top_k_is_at_most_as_likely_as_each_of_them() -> None:
    """The invariant: a token whose text is not a top-k key is no likelier than any of them
    (within 1e-3); a token whose text is a key is not compared (the key may hold another
    token of the same text: servers key the top-k by text)."""
    with pytest.raises(BadAnswerError, match="outside its top-k yet likelier"):
        checked_answer(_answer(["a"], [-0.5], [{"b": -0.1, "c": -2.0}]))
    checked_answer(_answer(["a"], [-2.5], [{"b": -0.5, "c": -2.0}]))  # less likely: fine
    checked_answer(_answer(["a"], [-2.0005], [{"b": -0.5, "c": -2.0}]))  # within 1e-3
    # a sampled top-1 whose text ("" for a partial UTF-8 piece) a less likely piece overwrote
    checked_answer(_answer([""], [-0.5], [{"": -4.0, "x": -1.0}]))
    checked_answer(_answer(["a"], [1e-5], [{"a": 0.0}]))  # float32 rounding above 0
    checked_answer({"choices": [{"text": "", "logprobs": {"tokens": [], "token_logprobs": []}}]})


def test_the_probabilities_of_a_token_and_its_top_k_sum_to_at_most_1() -> None:
    """Distinct tokens' probabilities sum to ≤ 1 (within the rounding): five top-k values
    near 0 (4.995 in probability) are refused; the token counts when its text is not a key
    (another token), not when it is (the same one)."""
    near_zero = {key: -0.001 for key in "abcde"}
    with pytest.raises(BadAnswerError, match=r"token 0: .* sum to 4\.995 \(more than 1"):
        checked_answer(_answer(["a"], [-0.001], [near_zero]))
    half = math.log(0.5)
    checked_answer(_answer(["a"], [half], [{"b": half}]))  # 0.5 + 0.5: at 1
    checked_answer(_answer(["a"], [half], [{"a": half, "b": half}]))  # the token is a key
    with pytest.raises(BadAnswerError, match=r"sum to 1\.00[2-9]"):
        checked_answer(_answer(["a"], [half + 0.002], [{"b": half + 0.002}]))  # past rounding
    with pytest.raises(BadAnswerError, match=r"token 1: .* sum to 1\.82"):  # b, a and c
        checked_answer(_answer(["a", "b"], [-0.5, -0.5], [{"a": -0.5}, {"a": -0.5, "c": -0.5}]))


def test_at_most_the_top_k_asked_for_and_the_token_s_own() -> None:
    tops = [{key: -6.0 for key in "abcdefghijklmnopqrstu"}]  # 21, when 5 were asked for
    with pytest.raises(BadAnswerError, match="21 top log-probabilities for token 0, more than "
                       "the 5 asked for"):  # fmt: skip
        checked_answer(_answer(["a"], [-0.5], tops), top_asked=5)
    six = [{key: -6.0 for key in "abcdef"}]  # llama-cpp-python adds the token's own
    checked_answer(_answer(["a"], [-0.5], six), top_asked=5)
    with pytest.raises(BadAnswerError, match="7 top log-probabilities"):
        checked_answer(_answer(["a"], [-0.5], [{key: -6.0 for key in "abcdefg"}]), top_asked=5)
    with pytest.raises(BadAnswerError, match=r"3 top log-probabilities .* the 1 asked for"):
        checked_answer(_answer(["a"], [-0.5], [{key: -6.0 for key in "abc"}]), top_asked=0)


# ------------------------------------------------------------------ haf run, for real


def _haf(db: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "haf_tui.cli", "--db", str(db), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def _stored(db: Path) -> tuple[str, str, int, int]:
    """The run's id and status, its generation rows and distinct generation keys."""
    from haf_tui.store import open_store

    with open_store(db, read_only=True) as store:
        ((run_id, status),) = store.query("SELECT run_id, status FROM runs")[1]
        ((rows, keys),) = store.query(
            "SELECT count(*), count(DISTINCT (instance_id, stage, sub_index)) FROM generations"
        )[1]
    return str(run_id), str(status), int(rows), int(keys)


def _clean(stderr: str) -> None:
    assert "Traceback" not in stderr, stderr
    assert "Task exception was never retrieved" not in stderr, stderr


@pytest.mark.parametrize(
    ("scenario", "suites", "said"),
    [
        ("logprobs-null", "haf", "returned an answer whose logprobs is null"),
        ("logprob-5", "haf", "returned a token log-probability (token 0) of 5.0 (above 0"),
        ("logprob-5", "classify", "returned a token log-probability (token 0) of 5.0"),  # forced
        ("logprob-nan", "haf", "returned a token log-probability (token 0) of nan (not finite)"),
        ("top-null", "haf", "returned a top log-probability of token 0 (' other') of null"),
        ("top-null", "classify", "of null (not a number)"),  # forced
        ("no-token-logprobs", "haf", "returned an answer whose token_logprobs is null"),
        ("http-400", "haf", "refused a request: HTTP 400"),
    ],
)
@pytest.mark.real_model
@pytest.mark.real_similarity
def test_a_bad_answer_stops_the_run_in_one_line_storing_nothing(
    tmp_path: Path, scenario: str, suites: str, said: str
) -> None:
    db = tmp_path / "haf.duckdb"
    with stand_in(scenario) as url:
        done = _haf(db, *RUN, "--suites", suites, "--server", f"{url}#2")
    _clean(done.stderr)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert len(lines) == 1 and url in lines[0] and said in lines[0], lines
    _, status, rows, _ = _stored(db)
    assert rows == 0 and status != "finished"


@pytest.mark.real_model
@pytest.mark.real_similarity
def test_a_500_then_a_good_answer_is_retried_and_the_run_finishes(tmp_path: Path) -> None:
    db = tmp_path / "haf.duckdb"
    with stand_in("http-500-once") as url:
        done = _haf(db, *RUN, "--suites", "haf", "--server", f"{url}#2")
        seen = stats(url)
    assert done.returncode == 0, done.stderr
    _clean(done.stderr)
    assert seen == {"run_requests": 3, "answered": 2}  # the 500's request came again
    _, status, rows, keys = _stored(db)
    assert status == "finished" and rows == keys == 2


@pytest.mark.real_model
@pytest.mark.real_similarity
def test_one_ctrl_c_stops_a_run_on_a_hanging_server_and_it_resumes(tmp_path: Path) -> None:
    db = tmp_path / "haf.duckdb"
    with stand_in("hang") as url:
        process = subprocess.Popen(
            [sys.executable, "-m", "haf_tui.cli", "--db", str(db), *RUN, *HAF, f"{url}#2"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        try:
            deadline = time.monotonic() + 240  # (the model loads under load: generous)
            while stats(url)["run_requests"] < 2 and time.monotonic() < deadline:
                assert process.poll() is None, process.communicate()
                time.sleep(0.2)
            assert stats(url)["run_requests"] == 2  # both requests hang in flight
            process.send_signal(signal.SIGINT)
            sent = time.monotonic()
            out, err = process.communicate(timeout=120)
            stopped_after = time.monotonic() - sent
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    assert process.returncode == 130, (out, err)
    # (2 s of grace, then the process ends; a bound for a loaded machine, which still
    # catches waiting out the request: 600 s × 6 retries)
    assert stopped_after < 30, stopped_after
    _clean(err)
    run_id, status, rows, _ = _stored(db)
    assert status == "interrupted" and rows == 0
    assert f"haf run --resume {run_id}" in out

    with stand_in("good") as url:
        done = _haf(db, "run", "--resume", run_id, "--server", f"{url}#2")
    assert done.returncode == 0, done.stderr
    _clean(done.stderr)
    assert _stored(db) == (run_id, "finished", 2, 2)


def test_two_requests_failing_together_leave_no_task_behind(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A refusal (HTTP 400) on one request while another in flight fails as well: the run
    stops with the first one's line, and the other's error is retrieved, not reported by
    asyncio as "Task exception was never retrieved" (deterministic: both fail at once)."""
    import gc
    from types import SimpleNamespace

    from haf_tui.config import DecodingSettings
    from haf_tui.inference.base import GenerationRequest, ListSource
    from haf_tui.inference.server import Endpoint, ServerError, ServerInfo
    from haf_tui.inference.server_pool import Live, ServerPool
    from haf_tui.messages import ChatMessage

    url = "http://127.0.0.1:9"
    live = Live(Endpoint(url, 2), ServerInfo(url, "openai-compatible", "unknown", "m"))
    pool = ServerPool(SimpleNamespace(endpoints=[live], timeout=5.0))  # type: ignore[arg-type]

    async def refused(*args: object) -> None:
        await asyncio.sleep(0.05)
        raise ServerError(f"{url} refused a request: HTTP 400")

    pool._one = refused  # type: ignore[method-assign,assignment]
    settings = DecodingSettings(max_new_tokens=4)
    requests = [GenerationRequest([ChatMessage("user", "hi")], settings, tag=n) for n in range(2)]
    with caplog.at_level("ERROR", logger="asyncio"), pytest.raises(ServerError, match="400"):
        pool.serve(ListSource(requests))
    gc.collect()
    assert "never retrieved" not in caplog.text
