"""A run stopped after any stage boundary of any suite resumes to what an uninterrupted run
stores, and makes none of its stored generations again (issue 24 §6).

For every suite (HAF with SUF and NEC instances, classify, rationales, judge) a scripted model
(no llama.cpp) first runs the whole run once, one generation at a time, and the order of its
generations gives every stage boundary: each point where the next generation is of another
stage or another instance (and a point in the middle of each stage's stretch of generations:
between SUF/NEC sub-prompts, classify spellings, judge slots). For each point a fresh copy of
the created run is stopped right after that generation (the model sets the stop while it
answers, so exactly those generations are stored), then resumed with a fresh model. The
resume must ask the model for exactly the generations not stored yet (a stored answer is
replayed through its plan, never made again: a resume that skipped replaying a stored
``external`` generation makes it twice), and every table must end up as the uninterrupted
run's.
"""

from __future__ import annotations

import math
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from haf_tui.config import DecodingSettings, ModelSettings, RunConfig
from haf_tui.inference.backend import Backend
from haf_tui.inference.base import GeneratedToken, Generation, TokenCallback, TokenTextAssembler
from haf_tui.messages import ChatMessage
from haf_tui.pipeline.events import ProgressEvent
from haf_tui.pipeline.runner import HafRunner, RunControl
from haf_tui.pipeline.runs import choice_by_name, resolve_dataset
from haf_tui.store import open_store
from haf_tui.store.db import Store
from haf_tui.store.records import InstanceRecord, RunRecord
from tests.support.judge_runs import VaryingJudge, instance_number
from tests.support.rationale_runs import (
    RATIONALE_CONFIG,
    ScriptedRationaleModel,
    rationale_instances,
)
from tests.test_scheduler import FlatSimilarity

RUN_ID = "run"
TABLES = (
    "generations",
    "tokens",
    "reasons",
    "parse_diagnostics",
    "instance_results",
    "instance_metrics",
    "reason_metrics",
    "rationales",
)
VARYING = {"seconds", "created_at", "updated_at"}  # (wall-clock columns)

TOXIC = (
    "The text is toxic.\n\nREASONS:\n1. It insults the reader directly.\n"
    "2. It mocks the reader's family."
)
BENIGN = (
    "The text is not toxic.\n\nREASONS:\n1. It asks a polite question about buses.\n"
    "2. It thanks the driver for the ride."
)
INTERNAL = "No, additional reasons are not required."
EXTERNAL = (
    "Yes, additional reasons are required.\n1. It repeats a stereotype seen elsewhere online."
)
INDIVIDUAL = "Yes, an additional reason is required.\n1. It would upset readers who were there."


class HafModel(Backend):
    """JUSTIFY: toxic for even instance numbers, not toxic for odd ones (so both SUF and NEC
    run); UPHOLD-REASON internal: no new reason; external and UPHOLD-STANCE: one new reason.
    One token per word; each token's logprob depends on the generation's seed."""

    name = "scripted-haf"

    def generate(
        self,
        messages: Sequence[ChatMessage],
        settings: DecodingSettings,
        *,
        on_token: TokenCallback | None = None,
    ) -> Generation:
        prompt = "\n".join(m.content for m in messages)
        if "\nREASON" not in messages[-1].content:
            answer = BENIGN if instance_number(messages) % 2 else TOXIC
        elif "other than what you can identify" in prompt:
            answer = EXTERNAL
        elif "Is any additional reason required to justify" in prompt:
            answer = INDIVIDUAL
        else:
            answer = INTERNAL
        assembler = TokenTextAssembler()
        tokens = []
        for index, word in enumerate(answer.replace(" ", " \0").split("\0")):
            text, byte_offset, char_offset = assembler.add(word.encode())
            logprob = -0.01 * (1 + (settings.seed + index) % 17)
            tokens.append(
                GeneratedToken(index, word.encode(), text, byte_offset, char_offset, logprob)
            )
            if on_token is not None:
                on_token(tokens[-1])
        return Generation(prompt, 10, assembler.finish(), tokens, "stop", 0.01)


class Stopping(Backend):
    """A model that counts what it is asked and sets the run's stop while it answers its
    ``stop_after``-th request (so exactly that many are stored)."""

    def __init__(self, inner: Any, control: RunControl | None = None, stop_after: int = 0):
        self.inner = inner
        self.name = inner.name
        self.control = control
        self.stop_after = stop_after
        self.calls = 0

    def _count(self) -> None:
        self.calls += 1
        if self.control is not None and self.calls == self.stop_after:
            self.control.stop.set()

    def generate(self, *args: Any, **kwargs: Any) -> Generation:
        self._count()
        return self.inner.generate(*args, **kwargs)  # type: ignore[no-any-return]

    def score(self, *args: Any, **kwargs: Any) -> Generation:
        self._count()
        return self.inner.score(*args, **kwargs)  # type: ignore[no-any-return]


def _haf_instances() -> list[InstanceRecord]:
    return [
        InstanceRecord(instance_id=f"i{n}", position=n, text=f"text number {n}", label="x")
        for n in range(3)
    ]


def _prepare_instances(records: list[InstanceRecord]) -> Callable[[Store], str]:
    def prepare(store: Store) -> str:
        store.save_dataset("tiny", "tiny", "test", records)
        return "tiny"

    return prepare


def _prepare_judge(store: Store) -> str:
    """A finished HAF run of two instances, and its explanations as the judge's dataset."""
    store.save_dataset("tiny", "tiny", "test", _haf_instances()[:2])
    config = RunConfig(dataset_id="tiny")
    _create_run(store, "source", config, 2)
    runner = HafRunner(store, Stopping(HafModel()), FlatSimilarity(), config)
    assert runner.run("source").status == "finished"
    dataset = resolve_dataset(choice_by_name("run:source", None, store), store)
    store.save_dataset(dataset.dataset_id, dataset.name, dataset.source, dataset.instances)
    return dataset.dataset_id


@dataclass(frozen=True)
class SuiteCase:
    config: RunConfig
    model: Callable[[], Any]
    prepare: Callable[[Store], str]


CASES = {
    "haf": SuiteCase(RunConfig(), HafModel, _prepare_instances(_haf_instances())),
    "classify": SuiteCase(
        RunConfig(suites=("classify",)),
        ScriptedRationaleModel,
        _prepare_instances(_haf_instances()[:2]),
    ),
    "rationales": SuiteCase(
        RATIONALE_CONFIG.with_settings("rationales", random_seeds=1),
        ScriptedRationaleModel,
        _prepare_instances(rationale_instances()[1:]),  # (the insult, and a text without masks)
    ),
    "judge": SuiteCase(RunConfig(suites=("judge",)), VaryingJudge, _prepare_judge),
}


def _create_run(store: Store, run_id: str, config: RunConfig, n_planned: int) -> None:
    store.create_run(
        RunRecord(
            run_id=run_id,
            status="created",
            dataset_id=config.dataset_id,
            n_planned=n_planned,
            config_json=config.model_dump_json(),
            model_file="scripted.gguf",
            similarity_model="flat",
            similarity_kind="bi-encoder",
        )
    )


def _created_run(folder: Path, case: SuiteCase) -> tuple[Path, RunConfig]:
    """A database holding the suite's dataset and the run, created and not started."""
    path = folder / "created.duckdb"
    with open_store(path) as store:
        dataset_id = case.prepare(store)
        config = case.config.model_copy(
            update={"dataset_id": dataset_id, "model": ModelSettings(n_parallel=1)}
        )
        _create_run(store, RUN_ID, config, len(store.instances(dataset_id, None)))
    return path, config


def _value(value: Any) -> Any:
    """A cell to compare: floats to 9 decimals (a resume reads stored values back), NaN named."""
    if isinstance(value, float):
        return "nan" if math.isnan(value) else round(value, 9)
    if isinstance(value, list | tuple):
        return tuple(_value(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _value(v)) for k, v in value.items()))
    return value


def _tables(store: Store) -> dict[str, list[tuple[Any, ...]]]:
    tables = {}
    for table in TABLES:
        columns, rows = store.query(f"SELECT * FROM {table}")
        kept = [i for i, c in enumerate(columns) if c not in VARYING]
        tables[table] = sorted((tuple(_value(row[i]) for i in kept) for row in rows), key=repr)
    return tables


def _stopping_points(order: list[tuple[str, str]]) -> list[int]:
    """How many generations are stored at each stage boundary (after generation n when
    generation n + 1 is of another stage or instance), and in the middle of each stretch of
    one stage of one instance that has more than one generation."""
    ends = [n for n in range(1, len(order)) if order[n] != order[n - 1]]
    starts = [0, *ends]
    middles = [
        (a + b + 1) // 2 for a, b in zip(starts, [*ends, len(order)], strict=True) if b - a > 1
    ]
    return sorted({*ends, *middles} - {len(order)})


@pytest.mark.parametrize("suite", list(CASES))
def test_a_run_stopped_at_any_stage_boundary_resumes_to_the_uninterrupted_rows(
    suite: str, tmp_path: Path
) -> None:
    case = CASES[suite]
    created, config = _created_run(tmp_path, case)

    whole_path = tmp_path / "whole.duckdb"
    shutil.copy(created, whole_path)
    order: list[tuple[str, str]] = []

    def note(event: ProgressEvent) -> None:
        if event.kind == "generation":
            order.append((event.instance_id, event.stage))

    whole_model = Stopping(case.model())
    with open_store(whole_path) as store:
        runner = HafRunner(store, whole_model, FlatSimilarity(), config, listener=note)
        assert runner.run(RUN_ID).status == "finished"
        expected = _tables(store)
    assert whole_model.calls == len(order)
    assert {stage for _, stage in order} == set(runner.stages)  # every stage ran

    points = _stopping_points(order)
    for stored in points:
        path = tmp_path / f"stopped-{stored}.duckdb"
        shutil.copy(created, path)
        control = RunControl()
        with open_store(path) as store:
            stopping = Stopping(case.model(), control, stop_after=stored)
            stopped = HafRunner(store, stopping, FlatSimilarity(), config, control=control)
            assert stopped.run(RUN_ID).status == "interrupted", stored
            assert len(store.generation_keys(RUN_ID)) == stored
            resuming = Stopping(case.model())
            resumed = HafRunner(store, resuming, FlatSimilarity(), config)
            assert resumed.run(RUN_ID).status == "finished", stored
            where = f"{suite}: stopped after {order[stored - 1]}, generation {stored}"
            # every stored generation was replayed, none made again
            assert resuming.calls == len(order) - stored, where
            got = _tables(store)
        for table in TABLES:
            assert got[table] == expected[table], f"{where}: {table} differs"
        path.unlink()
