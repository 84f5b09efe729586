"""The classify suite through the real path: llama.cpp on the embedded GGUF, teacher-forced
label scores that equal what sampling the same tokens reports, stored in a real DuckDB file,
resumed without duplicates."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from haf_tui.config import DecodingSettings, RunConfig
from haf_tui.inference.base import GenerationRequest, ListSource
from haf_tui.methods.classify.core.labels import SPELLINGS, classify_messages, label_scores
from tests.support.logprob_agreement import assert_tokens_agree, round_trip_prefix

pytestmark = pytest.mark.real_model

GREEDY = DecodingSettings(temperature=0.0, max_new_tokens=6)


def test_a_forced_reply_has_the_logprobs_its_sampling_had(embedded_backend: Any) -> None:
    """Teacher forcing a sampled reply gives its tokens the logprobs sampling reported, up to
    the rounding of another code path (tests/support/logprob_agreement.py)."""
    messages = classify_messages("you are an idiot")
    sampled = embedded_backend.generate(messages, GREEDY)
    reply = round_trip_prefix(embedded_backend, sampled.tokens)
    forced = embedded_backend.score(messages, reply, GREEDY)
    assert forced.finish_reason == "forced" and forced.text == reply
    assert forced.prompt_token_count == sampled.prompt_token_count
    assert_tokens_agree(forced.tokens, sampled.tokens[: len(forced.tokens)])


def test_the_four_spellings_batched_equal_one_at_a_time(embedded_backend: Any) -> None:
    messages = classify_messages("Thanks for the detailed write-up on the bus schedule.")
    source = ListSource(
        [GenerationRequest(messages, GREEDY, tag=s, forced=s) for s, _ in SPELLINGS]
    )
    engine = embedded_backend.concurrent(4)
    saved_before = engine.stats.prompt_tokens_saved
    engine.serve(source)
    assert engine.stats.prompt_tokens_saved > saved_before  # the prompt is shared
    for spelling, _ in SPELLINGS:
        alone = embedded_backend.score(messages, spelling, GREEDY)
        batched = source.results[spelling]
        assert batched.text == spelling
        assert [t.logprob for t in batched.tokens] == pytest.approx(
            [t.logprob for t in alone.tokens], abs=1e-5
        )


@pytest.mark.real_similarity
def test_a_classify_run_stores_scores_that_its_tokens_give_and_resumes(
    tmp_path: Path, embedded_backend: Any, minilm: Any
) -> None:
    from haf_tui.datasets import builtin_sample
    from haf_tui.pipeline.models import LoadedModels
    from haf_tui.pipeline.runs import RunRequest, execute_run, start_or_resume
    from haf_tui.store import open_store

    config = RunConfig(suites=("classify",), limit=2)
    models = LoadedModels(embedded_backend, minilm)
    with open_store(tmp_path / "haf.duckdb") as store:
        started = start_or_resume(
            store, RunRequest(config=config, dataset=builtin_sample(), preloaded=models)
        )
        run_id = started.run_id
        assert execute_run(store, run_id, started.config, models).status == "finished"
        sums = store.query(
            "SELECT instance_id, sub_index, sum(logprob) FROM tokens GROUP BY ALL ORDER BY ALL"
        )[1]
        assert len(sums) == 2 * len(SPELLINGS)
        stored = dict(
            ((i, m), v)
            for i, m, v in store.query("SELECT instance_id, metric, value FROM instance_metrics")[1]
        )
        for instance_id in {i for i, _, _ in sums}:
            lp = {SPELLINGS[k][0]: v for i, k, v in sums if i == instance_id}
            scores = label_scores(lp)
            assert stored[(instance_id, "classify_p_toxic")] == pytest.approx(scores.p_toxic)
            assert stored[(instance_id, "classify_label_mass")] == pytest.approx(scores.label_mass)
            assert stored[(instance_id, "classify_toxic")] == float(scores.predicted == "toxic")
            assert 0.0 < scores.label_mass <= 1.0 and not math.isnan(scores.p_toxic)
        (stance,) = store.query("SELECT DISTINCT stance FROM instance_results")[1]
        assert stance == (None,)  # no HAF suite: no stance
        from rich.console import Console

        from haf_tui.cli.read_commands import suggest_instance

        console = Console(record=True, width=200)
        suggest_instance(store, run_id, console)  # (what haf run says at its end)
        said = console.export_text()
        assert "holds no HAF suite" in said and "--report classification" in said
        # lose the second instance's results and one of its spellings, then resume
        first = sorted({i for i, _, _ in sums})[1]
        before = {k: v for k, v in stored.items() if k[0] == first}
        for table in ("instance_results", "instance_metrics"):
            store.connection.execute(f"DELETE FROM {table} WHERE instance_id = ?", [first])
        for table in ("generations", "tokens"):
            store.connection.execute(
                f"DELETE FROM {table} WHERE instance_id = ? AND sub_index = 2", [first]
            )
        store.update_run(run_id, status="interrupted")
        resumed = start_or_resume(store, RunRequest(resume_run_id=run_id, preloaded=models))
        assert execute_run(store, run_id, resumed.config, models).status == "finished"
        keys = store.query("SELECT instance_id, stage, sub_index FROM generations")[1]
        assert len(keys) == len(set(keys)) == 2 * len(SPELLINGS)
        after = {
            (i, m): v
            for i, m, v in store.query(
                "SELECT instance_id, metric, value FROM instance_metrics WHERE instance_id = ?",
                [first],
            )[1]
        }
        assert after.keys() == before.keys()
        for key, value in before.items():
            assert after[key] == pytest.approx(value, abs=1e-9), key


def test_spellings_after_one_prompt_share_it_and_score_as_alone(embedded_backend: Any) -> None:
    """Forced replies after one prompt in one batch: the longest (the root) evaluates the
    prompt, and its last prompt position's logits give every reply's first token; a
    one-token reply (``toxic``, twice here) takes nothing more, a longer one copies the root's
    prompt and evaluates from its last token on: at least two tokens after a copy, for with
    one the sixth built-in text scored 0.04 nats off (and paper-sample texts up to 0.29).
    Every token's logprob is the single-sequence path's."""
    from haf_tui.datasets import builtin_sample

    replies = ("toxic", "non-toxic", "Non-toxic", "toxic")
    for instance in builtin_sample().instances[:6]:
        messages = classify_messages(instance.text)
        alone = {r: embedded_backend.score(messages, r, GREEDY) for r in set(replies)}
        source = ListSource(
            [GenerationRequest(messages, GREEDY, tag=k, forced=r) for k, r in enumerate(replies)]
        )
        engine = embedded_backend.concurrent(4)
        evaluated = engine.stats.prompt_tokens_evaluated
        engine.serve(source)
        prompt = alone["toxic"].prompt_token_count
        reused = [source.results[k].extra["prompt_tokens_reused"] for k in range(4)]
        assert reused == [prompt, 0, prompt - 1, prompt]  # riders, the root, a branch
        assert engine.stats.prompt_tokens_evaluated - evaluated == prompt + 2 + 3  # not 4 prompts
        for k, reply in enumerate(replies):
            ours, theirs = source.results[k].tokens, alone[reply].tokens
            assert [t.token_id for t in ours] == [t.token_id for t in theirs]
            for mine, single in zip(ours, theirs, strict=True):
                assert mine.logprob == pytest.approx(single.logprob, abs=1e-6), (
                    instance.instance_id,
                    reply,
                )
