"""A re-score scores ahead: every distinct sentence of a batch of instances embedded once, in
one encoder call, and the values those embeddings give are the run's own (with an encoder
whose embedding of a text does not depend on its batch, exactly)."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from haf_tui.pipeline.rescore import RescoreSummary, rescore_run
from haf_tui.similarity import BiEncoderSimilarity, CachedSimilarity
from haf_tui.store import Store, open_store
from haf_tui.store.derived_runs import children_of, create_derived_run
from tests.support.rescore_runs import save_tiny_dataset, scripted_run
from tests.support.same_rows import assert_same_rows
from tests.test_rescore import TABLES, _assert_same, _rows

LETTERS = "abcdefghijklmnopqrstuvwxyz.,"


class CountingEncoder:
    """sentence-transformers' ``encode`` as a bi-encoder needs it: a text's letter counts,
    normalized (a text's vector never depends on the others in its call); every call and
    every text encoded written down."""

    def __init__(self) -> None:
        self.calls: list[int] = []
        self.encoded: Counter[str] = Counter()

    def encode(self, sentences: Sequence[str], **_: Any) -> Any:
        self.calls.append(len(sentences))
        self.encoded.update(sentences)
        vectors = np.array(
            [[text.lower().count(c) + 0.5 for c in LETTERS] for text in sentences], "float32"
        )
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def counting_g(encoder: CountingEncoder, name: str = "counting-g") -> CachedSimilarity:
    inner = BiEncoderSimilarity(name, encoder=encoder)
    return CachedSimilarity(inner, symmetric=True)


@pytest.fixture
def stored(tmp_path: Path) -> Store:
    store = open_store(tmp_path / "haf.duckdb")
    save_tiny_dataset(store)
    scripted_run(store, "parent", counting_g(CountingEncoder()))
    return store


def test_a_rescore_embeds_each_distinct_sentence_once_in_one_call(stored: Store) -> None:
    encoder = CountingEncoder()
    summary = rescore_run(stored, "parent", counting_g(encoder))
    assert summary.status == "finished" and summary.instances_done == 4
    assert encoder.encoded and max(encoder.encoded.values()) == 1
    # the four instances' sentences in one call (their pairs g's probe: no pair of its own)
    assert encoder.calls == [len(encoder.encoded)] and len(encoder.encoded) > 50


def test_scored_ahead_the_values_are_the_runs_own(stored: Store) -> None:
    summary = rescore_run(stored, "parent", counting_g(CountingEncoder()))
    _assert_same(stored, summary.run_id, "parent", 0.0)


def test_scored_ahead_in_batches_of_instances(stored: Store) -> None:
    encoder = CountingEncoder()
    rescore_run(stored, "parent", counting_g(encoder), score_ahead=2)
    assert len(encoder.calls) == 2 and max(encoder.encoded.values()) == 1
    as_asked = CountingEncoder()
    rescore_run(stored, "parent", counting_g(as_asked, "counting-g-2"), score_ahead=0)
    assert len(as_asked.calls) > 10  # (each follow-up's decision and span asked on its own)


def _one_row_a_statement(con: Any, table: str, columns: Sequence[str], rows: Any) -> None:
    """How a re-score stored its rows before its batches: an ``INSERT … VALUES`` a row."""
    marks = ", ".join(c[1:] if c.startswith("=") else "?" for c in columns)
    for row in rows:
        con.execute(f"INSERT INTO {table} VALUES ({marks})", list(row))


@pytest.mark.parametrize("score_ahead", [16, 2, 0])
def test_a_batch_stored_in_columns_is_stored_as_each_row_alone(
    stored: Store, monkeypatch: pytest.MonkeyPatch, score_ahead: int
) -> None:
    """The rows a re-score stores a batch at a time, a list a column, are those an ``INSERT`` a
    row stores: in all six tables, every value's ``repr`` (its type and last bit) the same."""
    from haf_tui.store import derived_runs, result_rows

    batched = rescore_run(stored, "parent", counting_g(CountingEncoder()), score_ahead=score_ahead)
    with monkeypatch.context() as patched:
        for module in (derived_runs, result_rows):
            patched.setattr(module, "insert_columns", _one_row_a_statement)
        alone = rescore_run(stored, "parent", counting_g(CountingEncoder(), "counting-g-2"))
    for table, columns in TABLES.items():
        read = f"SELECT {columns} FROM {table} WHERE run_id = ? ORDER BY ALL"
        rows = [stored.query(read, [run])[1] for run in (batched.run_id, alone.run_id)]
        assert rows[0] or table == "parse_diagnostics", table
        assert_same_rows(rows[0], rows[1], table)


def test_a_batch_interrupted_is_stored_not_at_all_and_scored_again_on_resume(
    stored: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch is one transaction: Ctrl-C while its last instance is recorded (the one before
    it recorded, not stored) leaves the batches before it whole and none of its rows; the
    resume scores the batch again to the values of a re-score never stopped."""
    from haf_tui.pipeline import rescore

    real, calls, running = rescore._scored, [], []

    def killed_on_the_eighth(*args: Any) -> Any:
        calls.append(args[1].instance_id)  # (each batch: its pairs collected, then recorded)
        if len(calls) == 8:  # (the second batch of two: i2 recorded, i3 being recorded)
            writer = "SELECT status, writer_pid FROM runs WHERE parent_run_id = 'parent'"
            running.extend(stored.query(writer)[1])
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(rescore, "_scored", killed_on_the_eighth)
    with pytest.raises(KeyboardInterrupt):
        rescore_run(stored, "parent", counting_g(CountingEncoder()), score_ahead=2)
    assert calls == ["i0", "i1", "i0", "i1", "i2", "i3", "i2", "i3"]
    assert running == [("running", os.getpid())]  # (set so when the run was made)
    monkeypatch.setattr(rescore, "_scored", real)
    (derived,) = children_of(stored, "parent")
    assert stored.get_run(derived.run_id).status == "stopped"
    for table in TABLES:  # (diagnostics: only the instances that have any)
        held = {row[0] for row in _rows(stored, table, derived.run_id)}
        assert held <= {"i0", "i1"} and (held or table == "parse_diagnostics"), table
        assert held == {"i0", "i1"} or table == "parse_diagnostics", table
    resumed = rescore_run(stored, "parent", counting_g(CountingEncoder()), score_ahead=2)
    assert resumed.resumed and resumed.run_id == derived.run_id
    assert (resumed.status, resumed.instances_done) == ("finished", 4)
    whole = rescore_run(stored, "parent", counting_g(CountingEncoder(), "counting-g-2"))
    for table in TABLES:
        assert_same_rows(
            _rows(stored, table, resumed.run_id), _rows(stored, table, whole.run_id), table
        )


def test_a_batch_that_fails_to_be_written_leaves_none_of_its_instances(
    stored: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed inside the batch's transaction (its generations written, its results not): no
    row of the batch stays, and the resume writes it whole."""
    from haf_tui.store import derived_runs

    def killed(con: Any, results: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(derived_runs, "insert_instance_results", killed)
    with pytest.raises(KeyboardInterrupt):
        rescore_run(stored, "parent", counting_g(CountingEncoder()))
    monkeypatch.undo()
    (derived,) = children_of(stored, "parent")
    assert derived.status == "stopped"  # (not finished by the batch it could not write)
    for table in TABLES:
        assert _rows(stored, table, derived.run_id) == [], table
    resumed = rescore_run(stored, "parent", counting_g(CountingEncoder()))
    assert resumed.run_id == derived.run_id and resumed.instances_done == 4
    _assert_same(stored, resumed.run_id, "parent", 0.0)


def test_a_finished_rescore_is_set_finished_with_its_time_by_its_last_batch(stored: Store) -> None:
    summary = rescore_run(stored, "parent", counting_g(CountingEncoder()), score_ahead=3)
    run = stored.query(
        "SELECT status, seconds_running, error FROM runs WHERE run_id = ?", [summary.run_id]
    )[1]
    assert run == [("finished", pytest.approx(summary.seconds, abs=0.05), None)]
    assert 0 < run[0][1] <= summary.seconds  # (its time added once: taken before the summary's)


def stopped_after_its_first_batch(stored: Store) -> RescoreSummary:
    """The parent re-scored in batches of 2, stopped once its first batch is stored."""
    import threading

    halfway = threading.Event()
    return rescore_run(
        stored,
        "parent",
        counting_g(CountingEncoder()),
        score_ahead=2,
        on_progress=lambda *_: halfway.set(),
        stop_event=halfway,
    )


def test_a_resumed_rescore_is_set_running_by_its_writer_while_it_scores(
    stored: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stopped re-score resumed shows running, with this process as its writer, while it
    scores (it stayed "stopped" while written)."""
    from haf_tui.pipeline import rescore

    first = stopped_after_its_first_batch(stored)
    assert stored.get_run(first.run_id).status == "stopped"
    real, seen = rescore._scored, []

    def watched(*args: Any) -> Any:
        query = "SELECT status, writer_pid FROM runs WHERE run_id = ?"
        seen.extend(stored.query(query, [first.run_id])[1])
        return real(*args)

    monkeypatch.setattr(rescore, "_scored", watched)
    resumed = rescore_run(stored, "parent", counting_g(CountingEncoder()), score_ahead=2)
    assert resumed.resumed and resumed.status == "finished"
    # (i2 and i3 collected for g's probe, before the run is touched; then recorded)
    assert seen[2:] == [("running", os.getpid())] * 2


def test_a_stop_asked_before_a_rescore_begins_scores_and_writes_nothing(stored: Store) -> None:
    """Set before g's probe: not a sentence encoded, no derived run made; a stopped one
    resumed so is left as it was."""
    import threading

    stop = threading.Event()
    stop.set()
    encoder = CountingEncoder()
    summary = rescore_run(stored, "parent", counting_g(encoder), stop_event=stop)
    assert (summary.status, summary.run_id, summary.instances_done) == ("stopped", "", 0)
    assert encoder.calls == [] and children_of(stored, "parent") == []
    first = stopped_after_its_first_batch(stored)
    assert (first.status, first.instances_done) == ("stopped", 2)
    before = [_rows(stored, table, first.run_id) for table in TABLES]
    again = rescore_run(stored, "parent", counting_g(encoder), stop_event=stop)
    assert (again.run_id, again.status, again.instances_done) == (first.run_id, "stopped", 2)
    assert again.resumed and encoder.calls == []
    assert [_rows(stored, table, first.run_id) for table in TABLES] == before
    assert stored.get_run(first.run_id).status == "stopped"


def test_a_g_failing_inside_a_batch_keeps_the_instances_before_it(
    stored: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """g's scores unusable at the batch's third instance: the run failed in one line naming
    it, the two recorded before it stored (not scored again), nothing of it or after it."""
    from haf_tui.pipeline import rescore
    from haf_tui.pipeline.rescore import RescoreError

    real, calls = rescore._scored, []

    def unusable_at_the_seventh(*args: Any) -> Any:
        calls.append(args[1].instance_id)  # (the batch's pairs collected, then recorded)
        if len(calls) == 7:  # (i2 being recorded)
            raise RescoreError("g gave a score too few")
        return real(*args)

    monkeypatch.setattr(rescore, "_scored", unusable_at_the_seventh)
    with pytest.raises(RescoreError, match="failed at instance i2: g gave a score too few"):
        rescore_run(stored, "parent", counting_g(CountingEncoder()))
    (derived,) = children_of(stored, "parent")
    assert stored.get_run(derived.run_id).status == "failed"
    assert stored.finished_instances(derived.run_id) == {"i0", "i1"}
    for table in TABLES:
        held = {row[0] for row in _rows(stored, table, derived.run_id)}
        assert held <= {"i0", "i1"} and (held or table == "parse_diagnostics"), table


def test_a_stop_asked_while_a_batch_is_scored_ahead_stores_its_first_instance(
    stored: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Asked to stop while the second batch's pairs are encoded: that encoding is not thrown
    away, its first instance is recorded and stored, then the re-score stops."""
    import threading

    from haf_tui.pipeline import rescore

    stop, real = threading.Event(), rescore._score_ahead

    def stop_while_scored_ahead(*args: Any) -> None:
        real(*args)
        stop.set()

    monkeypatch.setattr(rescore, "_score_ahead", stop_while_scored_ahead)
    summary = rescore_run(
        stored, "parent", counting_g(CountingEncoder()), score_ahead=2, stop_event=stop
    )
    assert (summary.status, summary.instances_done) == ("stopped", 3)
    assert stored.finished_instances(summary.run_id) == {"i0", "i1", "i2"}


def test_the_holder_note_says_what_is_done_with_a_rescore_s_run(stored: Store) -> None:
    """A process waiting for the database reads what its holder does: the derived run made
    running says "writing"; stopped, it says so (as any run's status change does)."""
    from haf_tui.store.holder import read_holder_note

    def purpose() -> str | None:
        note = read_holder_note(stored.path)
        return None if note is None else note.purpose

    first = stopped_after_its_first_batch(stored)
    assert purpose() == f"run {first.run_id}: stopped"
    create_derived_run(
        stored, "derived-2", "parent", config_json=stored.get_run("parent").config_json,
        similarity_model="g2", similarity_kind="bi-encoder", n_planned=1, versions={},
        running=True,
    )  # fmt: skip
    assert purpose() == "run derived-2: writing"
    assert stored.get_run("derived-2").status == "running"
    stored.update_run("derived-2", status="finished")
    assert purpose() == "run derived-2: finished"
