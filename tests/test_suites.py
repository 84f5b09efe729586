"""Suites plug into one scheduler, runner, store and resume: the registry, the classify suite's
label scores (RATIONALES.md §4.1, §8 example 10), and a toy suite registered from outside."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from haf_tui.config import RunConfig
from haf_tui.inference.base import Generation
from haf_tui.messages import ChatMessage
from haf_tui.methods.base import Answer, Reply, SuiteContext, SuiteOutcome, Task
from haf_tui.methods.classify.core.labels import SPELLINGS, classify_messages, label_scores
from haf_tui.methods.declare import Method
from haf_tui.methods.registry import SUITES, UnknownSuiteError, methods, run_stages, suites_named
from haf_tui.pipeline.runner import HafRunner
from haf_tui.store.records import GenerationRecord, InstanceRecord
from tests.test_scheduler import (
    JUSTIFY_ANSWER,
    FlatSimilarity,
    ScriptedBackend,
    _store_with_run,
)


def test_label_scores_of_the_spec_example() -> None:
    scores = label_scores({"toxic": -0.105, "non-toxic": -2.9})
    assert scores.p_toxic == pytest.approx(0.942405, abs=1e-6)
    assert scores.label_mass == pytest.approx(0.955348, abs=1e-6)
    assert scores.predicted == "toxic"


def test_spellings_add_up_by_log_sum_exp_and_a_tie_is_toxic() -> None:
    half = math.log(0.25)
    scores = label_scores({"toxic": half, "Toxic": half, "non-toxic": math.log(0.5)})
    assert scores.logprobs["toxic"] == pytest.approx(math.log(0.5))
    assert scores.p_toxic == pytest.approx(0.5) and scores.predicted == "toxic"
    assert scores.label_mass == pytest.approx(1.0)
    with pytest.raises(ValueError, match="every label"):
        label_scores({"toxic": -1.0})


def test_the_classification_prompt_is_the_spec_s() -> None:
    (message,) = classify_messages("you fool")
    assert message.role == "user"
    assert message.content == (
        "Determine whether the following text is toxic. Give your answer as a single word "
        "from (toxic, non-toxic) and nothing else.\nText: ```you fool``` Answer:"
    )
    assert [s for s, _ in SPELLINGS] == ["toxic", "Toxic", "non-toxic", "Non-toxic"]


def test_the_registry_names_suites_and_refuses_unknown_ones() -> None:
    assert list(SUITES) == ["haf", "classify", "rationales", "judge"]
    assert [s.name for s in suites_named(["classify", "haf"])] == ["haf", "classify"]
    with pytest.raises(UnknownSuiteError, match="unknown suite"):
        suites_named(["haf", "rationale"])
    config = RunConfig(suites=("haf", "classify"), stages=("justify", "internal"))
    assert run_stages(config) == ["justify", "internal", "classify"]


class EchoPlan:
    """Asks the model to repeat the text; nothing follows."""

    def __init__(self, text: str):
        self.text = text

    def start(self) -> Sequence[Task]:
        return [Task("echo", -1, None, (ChatMessage("user", f"Repeat: {self.text}"),))]

    def advance(self, task: Task, reply: Reply) -> tuple[Sequence[Task], object]:
        return [], len(reply.text)

    def planned(self) -> dict[str, int]:
        return {"echo": 1}


class EchoSuite:
    """A toy suite defined outside the package: one folder's worth of code."""

    name = "echo"
    stages = ("echo",)
    titles: ClassVar[dict[str, str]] = {"echo": "echo"}

    def run_stages(self, config: RunConfig) -> tuple[str, ...]:
        return self.stages

    def plan(self, instance: InstanceRecord, config: RunConfig) -> EchoPlan:
        return EchoPlan(instance.text)

    def record(
        self,
        context: SuiteContext,
        instance: InstanceRecord,
        task: Task,
        seed: int,
        generation: Generation,
        carried: object,
    ) -> GenerationRecord:
        assert carried == len(generation.text)  # what the plan read comes along
        return GenerationRecord(
            run_id=context.run_id,
            instance_id=instance.instance_id,
            stage=task.stage,
            sub_index=task.sub_index,
            test=None,
            seed=seed,
            prompt_text=generation.prompt_text,
            prompt_tokens=generation.prompt_token_count,
            output_text=generation.text,
            finish_reason=generation.finish_reason,
            decision="echoed",
            decision_source=None,
            decision_sentence=None,
            decision_start=None,
            decision_end=None,
            decision_confidence=math.nan,
            seconds=generation.seconds,
            tokens=list(generation.tokens),
        )

    def finish(
        self, context: SuiteContext, instance: InstanceRecord, answers: Sequence[Answer]
    ) -> SuiteOutcome:
        (answer,) = answers
        return SuiteOutcome(instance_metrics=[("echo_logprob", answer.logprob_sum, 1)])


def _metrics(store: Any) -> list[tuple[Any, ...]]:
    return store.query("SELECT instance_id, metric, value FROM instance_metrics ORDER BY ALL")[1]


def test_a_suite_registered_from_outside_runs_and_resumes_without_duplicates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    echo = Method(name="echo", title="echo", description="echo's logprob", suite=EchoSuite())
    monkeypatch.setitem(methods(), "echo", echo)
    store, config = _store_with_run(tmp_path / "echo.duckdb", 3, 2)
    config = config.model_copy(update={"suites": ("haf", "echo")})
    runner = HafRunner(store, ScriptedBackend(), FlatSimilarity(), config)
    assert runner.run("run").status == "finished"
    counts = dict(store.query("SELECT stage, count(*) FROM generations GROUP BY stage")[1])
    assert counts["echo"] == 3 and counts["justify"] == 3
    metrics = _metrics(store)
    assert [m for m in metrics if m[1] == "echo_logprob"] == [
        (f"i{n}", "echo_logprob", pytest.approx(-0.1 * len(JUSTIFY_ANSWER.split(" "))))
        for n in range(3)
    ]
    # undo the end of instance i1 (its results, its echo and one follow-up): a resume
    # replays what is stored through the same plans and makes only what is missing
    store.connection.execute("DELETE FROM instance_results WHERE instance_id = 'i1'")
    store.connection.execute("DELETE FROM instance_metrics WHERE instance_id = 'i1'")
    store.connection.execute("DELETE FROM reason_metrics WHERE instance_id = 'i1'")
    for table in ("generations", "tokens", "reasons", "parse_diagnostics"):
        store.connection.execute(
            f"DELETE FROM {table} WHERE instance_id = 'i1' AND stage IN ('echo', 'external')"
        )
    backend = ScriptedBackend()
    resumed = HafRunner(store, backend, FlatSimilarity(), config)
    assert resumed.run("run").status == "finished"
    assert len(backend.prompts) == 2  # the echo and the external prompt, nothing else
    again = _metrics(store)
    assert [m[:2] for m in again] == [m[:2] for m in metrics]  # (read back: sums to 1e-12)
    assert [m[2] for m in again] == pytest.approx([m[2] for m in metrics], abs=1e-12, nan_ok=True)
    keys = store.query("SELECT instance_id, stage, sub_index FROM generations")[1]
    assert len(keys) == len(set(keys))
    store.close()


def test_an_unknown_suite_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from haf_tui.cli import main

    assert main(["--db", str(tmp_path / "haf.duckdb"), "run", "--suites", "haf,nope"]) == 2
    err = capsys.readouterr().err
    assert "unknown suite(s) ['nope']" in err and len(err.strip().splitlines()) == 1


def test_forced_replies_to_one_prompt_go_out_together() -> None:
    from haf_tui.config import DecodingSettings
    from haf_tui.inference.base import GenerationRequest
    from haf_tui.pipeline.scheduler import QueueHooks, RunControl, RunQueue

    def queue(batch: int) -> RunQueue:
        hooks = QueueHooks(lambda i: [], lambda i, t: 0, lambda s: DecodingSettings(), print)
        return RunQueue(
            [], {}, window=4, batch=batch, control=RunControl(), hooks=hooks,
            stream_tokens=False, scorer_capacity=4,
        )  # fmt: skip

    prompt = (ChatMessage("user", "classify this"),)
    spellings = [GenerationRequest(prompt, DecodingSettings(), tag=s, forced=s) for s in "abcd"]
    other = GenerationRequest((ChatMessage("user", "justify"),), DecodingSettings(), tag="j")
    q = queue(batch=8)
    q._ready.extend([*spellings, other])
    assert [r.tag for r in q.take(2, wait=False)] == ["j"]  # the group waits for 4 slots
    assert [r.tag for r in q.take(4, wait=False)] == list("abcd")
    q = queue(batch=2)  # a group larger than a batch is split
    q._ready.extend(spellings)
    assert [r.tag for r in q.take(2, wait=False)] == list("ab")
