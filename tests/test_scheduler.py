"""The run scheduler with test doubles: one at a time and batched give the same rows, stages of
different instances are in flight together within a bounded window, stop/resume and a
scoring failure behave. The real backend runs in ``test_batched_real`` and the pipeline tests."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from haf_tui.config import DecodingSettings, ModelSettings, RunConfig
from haf_tui.inference.backend import Backend
from haf_tui.inference.base import (
    GeneratedToken,
    Generation,
    RequestSource,
    TokenCallback,
    TokenTextAssembler,
)
from haf_tui.messages import ChatMessage
from haf_tui.pipeline.events import ProgressEvent
from haf_tui.pipeline.runner import HafRunner, RunControl
from haf_tui.store import open_store
from haf_tui.store.db import Store
from haf_tui.store.records import InstanceRecord, RunRecord

JUSTIFY_ANSWER = "The text is toxic.\n\nREASONS:\n1. It insults the reader.\n2. It mocks them."
FOLLOWUP_ANSWER = "No, additional reasons are not required."


class ScriptedBackend(Backend):
    """Answers JUSTIFY with a stance and reasons, every follow-up with NO; words as tokens."""

    name = "scripted"

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def generate(
        self,
        messages: Sequence[ChatMessage],
        settings: DecodingSettings,
        *,
        on_token: TokenCallback | None = None,
    ) -> Generation:
        prompt = "\n".join(m.content for m in messages)
        self.prompts.append(messages[-1].content)
        answer = FOLLOWUP_ANSWER if "\nREASON" in messages[-1].content else JUSTIFY_ANSWER
        assembler = TokenTextAssembler()
        tokens = []
        for index, word in enumerate(answer.replace(" ", " \0").split("\0")):
            text, byte_offset, char_offset = assembler.add(word.encode())
            tokens.append(
                GeneratedToken(index, word.encode(), text, byte_offset, char_offset, -0.1)
            )
            if on_token is not None:
                on_token(tokens[-1])
        return Generation(prompt, 10, assembler.finish(), tokens, "stop", 0.01)


class BatchingDouble(Backend):
    """A concurrent backend double: takes up to ``n_parallel`` requests, generates them, then
    takes again; records which instances were in flight together."""

    def __init__(self, backend: ScriptedBackend, n_parallel: int):
        self.backend = backend
        self.n_parallel = n_parallel
        self.batches: list[list[str]] = []

    def concurrent(self, n_parallel: int) -> BatchingDouble:
        return self

    def generate(self, *args: object, **kwargs: object) -> Generation:  # pragma: no cover
        raise AssertionError("the runner should serve through the batch")

    def serve(self, source: RequestSource) -> None:
        while requests := source.take(self.n_parallel, wait=True):
            self.batches.append([r.tag.task.stage for r in requests])  # type: ignore[attr-defined]
            for request in requests:
                generation = self.backend.generate(
                    request.messages, request.settings, on_token=request.on_token
                )
                source.finished(request, generation)


class FlatSimilarity:
    name = "flat"

    def __init__(self, fail: bool = False):
        self.fail = fail

    def similarities(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        if self.fail:
            raise RuntimeError("similarity model crashed")
        return [0.5 for _ in pairs]


def _store_with_run(path: Path, instances: int, n_parallel: int) -> tuple[Store, RunConfig]:
    store = open_store(path)
    records = [
        InstanceRecord(instance_id=f"i{n}", position=n, text=f"text number {n}", label="toxic")
        for n in range(instances)
    ]
    store.save_dataset("tiny", "tiny", "test", records)
    config = RunConfig(
        dataset_id="tiny",
        model=ModelSettings(n_parallel=n_parallel),
        decoding=DecodingSettings(max_new_tokens=32),
    )
    store.create_run(
        RunRecord(
            run_id="run",
            status="created",
            dataset_id="tiny",
            n_planned=instances,
            config_json=config.model_dump_json(),
            model_file="scripted",
            similarity_model="flat",
            similarity_kind="bi-encoder",
        )
    )
    return store, config


def _rows(store: Store) -> list[tuple[object, ...]]:
    return store.query(
        "SELECT instance_id, stage, sub_index, seed, output_text FROM generations ORDER BY ALL"
    )[1]


def _run(tmp_path: Path, backend: Backend, n_parallel: int, name: str) -> tuple[Store, HafRunner]:
    store, config = _store_with_run(tmp_path / f"{name}.duckdb", 5, n_parallel)
    runner = HafRunner(store, backend, FlatSimilarity(), config)
    assert runner.run("run").status == "finished"
    return store, runner


def test_batched_and_one_at_a_time_store_the_same_rows(tmp_path: Path) -> None:
    single_store, _ = _run(tmp_path, ScriptedBackend(), 1, "single")
    batching = BatchingDouble(ScriptedBackend(), 4)
    batched_store, _ = _run(tmp_path, batching, 4, "batched")  # type: ignore[arg-type]
    assert _rows(batched_store) == _rows(single_store)
    assert single_store.query("SELECT count(*) FROM instance_results")[1][0][0] == 5
    assert batched_store.query("SELECT count(*) FROM instance_results")[1][0][0] == 5
    # stages of different instances were in flight together, follow-ups first
    assert any(len(set(batch)) > 1 for batch in batching.batches)
    assert all(len(batch) <= 4 for batch in batching.batches)


def test_one_at_a_time_keeps_instance_order(tmp_path: Path) -> None:
    backend = ScriptedBackend()
    _run(tmp_path, backend, 1, "order")
    justify_positions = [i for i, p in enumerate(backend.prompts) if "\nREASON" not in p]
    # each instance's follow-ups come before the next instance's JUSTIFY
    gaps = {b - a for a, b in itertools.pairwise(justify_positions)}
    assert len(gaps) == 1 and gaps.pop() > 1


def test_a_stopped_batched_run_resumes_without_duplicates(tmp_path: Path) -> None:
    store, config = _store_with_run(tmp_path / "stop.duckdb", 6, 3)
    control = RunControl()
    seen = 0

    def stop_after_a_few(event: object) -> None:
        nonlocal seen
        if getattr(event, "kind", "") == "generation":
            seen += 1
            if seen == 4:
                control.stop.set()

    batching = BatchingDouble(ScriptedBackend(), 3)
    runner = HafRunner(
        store,
        batching,  # type: ignore[arg-type]
        FlatSimilarity(),
        config,
        listener=stop_after_a_few,  # type: ignore[arg-type]
        control=control,
    )
    assert runner.run("run").status == "interrupted"
    partial = len(_rows(store))
    resumed = HafRunner(store, batching, FlatSimilarity(), config)  # type: ignore[arg-type]
    assert resumed.run("run").status == "finished"
    rows = _rows(store)
    assert partial < len(rows) and len(rows) == len({r[:3] for r in rows})
    assert store.query("SELECT count(*) FROM instance_results")[1][0][0] == 6


def test_a_scoring_failure_fails_the_run_without_hanging(tmp_path: Path) -> None:
    store, config = _store_with_run(tmp_path / "fail.duckdb", 6, 3)
    runner = HafRunner(
        store,
        BatchingDouble(ScriptedBackend(), 3),  # type: ignore[arg-type]
        FlatSimilarity(fail=True),
        config,
    )
    outcome: list[BaseException] = []

    def target() -> None:
        try:
            runner.run("run")
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=target)
    thread.start()
    thread.join(timeout=30)
    assert not thread.is_alive(), "the run hung after the scorer failed"
    assert outcome and "similarity model crashed" in str(outcome[0])
    assert store.get_run("run").status == "failed"


@pytest.mark.parametrize("n_parallel", [1, 3])
def test_cancel_abandons_generations_in_flight(tmp_path: Path, n_parallel: int) -> None:
    store, config = _store_with_run(tmp_path / "cancel.duckdb", 4, n_parallel)
    control = RunControl()

    def cancel_on_first_token(event: object) -> None:
        if getattr(event, "kind", "") == "token":
            control.cancel()

    runner = HafRunner(
        store,
        BatchingDouble(ScriptedBackend(), n_parallel)  # type: ignore[arg-type]
        if n_parallel > 1
        else ScriptedBackend(),
        FlatSimilarity(),
        config,
        listener=cancel_on_first_token,  # type: ignore[arg-type]
        control=control,
        stream_tokens=True,
    )
    assert runner.run("run").status == "interrupted"
    assert _rows(store) == []


def test_running_time_is_stored_as_instances_finish_not_only_at_the_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run killed (SIGKILL) mid-way keeps the time it ran up to its last finished
    instance: each finished instance adds the time since the last one to seconds_running."""
    import haf_tui.pipeline.runner as runner_module

    monkeypatch.setattr(runner_module, "ACCOUNT_SECONDS", 0.0)
    store, config = _store_with_run(tmp_path / "t.duckdb", instances=3, n_parallel=1)
    stored_mid_run: list[float] = []

    def listen(event: ProgressEvent) -> None:
        if event.kind == "instance":
            stored_mid_run.append(store.get_run("run").seconds_running)

    runner = HafRunner(store, ScriptedBackend(), FlatSimilarity(), config, listener=listen)
    summary = runner.run("run")
    assert summary.status == "finished" and len(stored_mid_run) == 3
    assert all(seconds > 0 for seconds in stored_mid_run)  # (before: 0 until the run ended)
    assert stored_mid_run == sorted(stored_mid_run)
    total = store.get_run("run").seconds_running
    assert total == pytest.approx(summary.seconds, abs=0.05)
    store.close()
