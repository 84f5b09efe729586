"""A run that evaluates texts in order until N went through every stage (``until_complete``,
``haf run --demo``'s rule, issue 34 §10): the texts after them are left out, the run is
finished with the texts it evaluated, and a resume keeps to the same rule."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from haf_tui.config import DecodingSettings, ModelSettings, RunConfig
from haf_tui.inference.base import Generation, TokenCallback
from haf_tui.messages import ChatMessage
from haf_tui.pipeline.events import ProgressEvent
from haf_tui.pipeline.runner import HafRunner
from haf_tui.store import open_store
from haf_tui.store.db import Store
from haf_tui.store.records import InstanceRecord, RunRecord
from tests.test_scheduler import BatchingDouble, FlatSimilarity, ScriptedBackend

STOPS = "I cannot say anything about that."
"""A JUSTIFY answer with no stance and no reasons: the instance stops after JUSTIFY."""


class SomeStop(ScriptedBackend):
    """The scripted answers, except that texts saying 'stops' get no stance at JUSTIFY."""

    def generate(
        self,
        messages: Sequence[ChatMessage],
        settings: DecodingSettings,
        *,
        on_token: TokenCallback | None = None,
    ) -> Generation:
        generation = super().generate(messages, settings, on_token=on_token)
        last = messages[-1].content
        if "stops" in last and "\nREASON" not in last:
            return Generation(generation.prompt_text, 10, STOPS, [], "stop", 0.01)
        return generation


def _store(
    path: Path, texts: list[str], until: int, n_parallel: int = 1
) -> tuple[Store, RunConfig]:
    store = open_store(path)
    records = [
        InstanceRecord(instance_id=f"i{n}", position=n, text=text, label="toxic")
        for n, text in enumerate(texts)
    ]
    store.save_dataset("tiny", "tiny", "test", records)
    config = RunConfig(
        dataset_id="tiny",
        model=ModelSettings(n_parallel=n_parallel),
        decoding=DecodingSettings(max_new_tokens=32),
        until_complete=until,
    )
    store.create_run(
        RunRecord(
            run_id="run", status="created", dataset_id="tiny", n_planned=len(texts),
            config_json=config.model_dump_json(), model_file="scripted",
            similarity_model="flat", similarity_kind="bi-encoder",
        )
    )  # fmt: skip
    return store, config


def _through(store: Store) -> list[str]:
    return [
        row[0]
        for row in store.query(
            "SELECT instance_id FROM generations GROUP BY instance_id "
            "HAVING count(DISTINCT stage) = 4 ORDER BY instance_id"
        )[1]
    ]


TEXTS = ["a text that stops", "text one", "another that stops", "text three", "text four",
         "text five", "text six", "text seven"]  # fmt: skip


def test_texts_are_taken_in_order_until_enough_went_through_every_stage(tmp_path: Path) -> None:
    store, config = _store(tmp_path / "h.duckdb", TEXTS, until=2)
    summary = HafRunner(store, SomeStop(), FlatSimilarity(), config).run("run")
    assert summary.status == "finished"
    assert (summary.instances_done, summary.instances_total) == (4, 4)
    assert _through(store) == ["i1", "i3"]
    done = store.query("SELECT instance_id FROM instance_results ORDER BY instance_id")[1]
    assert [r[0] for r in done] == ["i0", "i1", "i2", "i3"]
    record = store.get_run("run")
    assert record.n_planned == 4 and json.loads(record.config_json)["limit"] == 4
    (listed,) = store.list_runs()
    assert listed["status"] == "finished" and listed["n_done"] == 4


def test_a_run_that_never_has_enough_evaluates_every_text(tmp_path: Path) -> None:
    store, config = _store(tmp_path / "h.duckdb", TEXTS[:4], until=3)
    summary = HafRunner(store, SomeStop(), FlatSimilarity(), config).run("run")
    assert summary.status == "finished" and summary.instances_done == 4
    assert _through(store) == ["i1", "i3"]  # (2 of 3 asked: every text was tried)
    assert store.get_run("run").n_planned == 4


def test_batched_the_run_is_a_prefix_of_the_texts_with_enough_through(tmp_path: Path) -> None:
    store, config = _store(tmp_path / "h.duckdb", TEXTS, until=2, n_parallel=2)
    backend = BatchingDouble(SomeStop(), 2)
    summary = HafRunner(store, backend, FlatSimilarity(), config).run("run")  # type: ignore[arg-type]
    assert summary.status == "finished" and 4 <= summary.instances_total < len(TEXTS)
    done = {r[0] for r in store.query("SELECT instance_id FROM instance_results")[1]}
    assert done == {f"i{n}" for n in range(summary.instances_total)}
    assert len(_through(store)) >= 2


@pytest.mark.parametrize("stop_after", [1, 2])
def test_a_stopped_run_resumes_to_what_an_unstopped_one_stores(
    tmp_path: Path, stop_after: int
) -> None:
    """Stopped after i0 (stops at JUSTIFY), or after i1 too (through every stage: the resume
    counts it from the stored generations)."""
    whole, config = _store(tmp_path / "whole.duckdb", TEXTS, until=2)
    HafRunner(whole, SomeStop(), FlatSimilarity(), config).run("run")
    store, config = _store(tmp_path / "h.duckdb", TEXTS, until=2)
    stop = threading.Event()

    seen: list[str] = []

    def stop_after_first(event: ProgressEvent) -> None:
        if event.kind == "instance":
            seen.append(event.kind)
            if len(seen) >= stop_after:
                stop.set()

    first = HafRunner(store, SomeStop(), FlatSimilarity(), config, listener=stop_after_first,
                      stop_event=stop).run("run")  # fmt: skip
    assert first.status == "interrupted" and first.instances_done >= stop_after
    if stop_after == 2:  # (i1 went through every stage before the stop: the resume counts it)
        assert "i1" in _through(store) and first.instances_done < 4
    assert store.get_run("run").n_planned == len(TEXTS)  # (not cut while stopped)
    again = HafRunner(store, SomeStop(), FlatSimilarity(), config).run("run")
    assert again.status == "finished" and again.instances_total == 4
    rows = "SELECT instance_id, stage, sub_index, output_text FROM generations ORDER BY ALL"
    assert store.query(rows)[1] == whole.query(rows)[1]
    assert store.get_run("run").n_planned == whole.get_run("run").n_planned == 4
