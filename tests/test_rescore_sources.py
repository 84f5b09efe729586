"""What a re-score reads of its parent (``store/derived_runs.py``), on the stores of
tests/test_rescore.py: each generation's tokens in their positions' order and the generations
in stage order however the rows lie in the file, and the derived runs of this parent only."""

from __future__ import annotations

from pathlib import Path

import pytest

from haf_tui.methods.haf.suite.suite import HAF
from haf_tui.pipeline.rescore import RescoreError, rescore_run
from haf_tui.similarity import load_similarity
from haf_tui.store import Store
from haf_tui.store.derived_runs import children_of, parent_run, source_generations_of
from tests.test_rescore import _assert_same, models, stored

__all__ = ["models", "stored"]  # (the fixtures)


def _reverse_rows(store: Store, table: str, run_id: str) -> None:
    """The run's rows of ``table`` written again last to first."""
    with store.transaction() as con:  # (fixed names)
        con.execute(f"CREATE TEMP TABLE kept AS SELECT * FROM {table} WHERE run_id = ?", [run_id])
        con.execute(f"DELETE FROM {table} WHERE run_id = ?", [run_id])
        order = "position DESC" if table == "tokens" else "instance_id, stage DESC, sub_index DESC"
        con.execute(f"INSERT INTO {table} SELECT * FROM kept ORDER BY {order}")
        con.execute("DROP TABLE kept")


def test_the_parents_rows_are_read_in_order_however_they_lie(
    stored: Store, models: tuple[Path, Path]
) -> None:
    before = source_generations_of(stored, "parent", ["i0"], HAF.stages)["i0"]
    for table in ("tokens", "generations"):
        _reverse_rows(stored, table, "parent")
    after = source_generations_of(stored, "parent", ["i0"], HAF.stages)["i0"]
    assert after == before and len(after) > 1
    assert [(g.stage, g.sub_index) for g in after] == sorted((g.stage, g.sub_index) for g in after)
    offsets = [t.char_offset for t in after[0].tokens]
    assert len(offsets) > 1 and offsets == sorted(offsets)
    summary = rescore_run(stored, "parent", load_similarity(str(models[1])), score_ahead=0)
    _assert_same(stored, summary.run_id, "scratch", 1e-9)


def test_a_rescore_resumes_only_a_run_derived_from_its_own_parent(
    stored: Store, models: tuple[Path, Path]
) -> None:
    second = load_similarity(str(models[1]))
    of_scratch = rescore_run(stored, "scratch", second)
    of_parent = rescore_run(stored, "parent", second)  # (the same g, another parent)
    assert not of_parent.resumed and of_parent.run_id != of_scratch.run_id
    assert parent_run(stored, of_parent.run_id) == "parent"
    assert [d.run_id for d in children_of(stored, "parent")] == [of_parent.run_id]


def test_a_parents_instance_without_answers_is_one_line(
    stored: Store, models: tuple[Path, Path]
) -> None:
    """A finished instance of the parent whose generations are gone (a store edited by hand):
    one line naming it; in the first batch (g's probe) before a derived run is made, later
    the derived run failed, the instances before it kept."""
    second = load_similarity(str(models[1]))
    for gone, kept in (("i1", None), ("i3", {"i0", "i1"})):
        with stored.transaction() as con:
            con.execute(
                "CREATE TEMP TABLE held AS SELECT * FROM generations "
                "WHERE run_id = 'parent' AND instance_id = ?",
                [gone],
            )
            con.execute(
                "DELETE FROM generations WHERE run_id = 'parent' AND instance_id = ?", [gone]
            )
        with pytest.raises(RescoreError, match=f"instance {gone} of run parent has no answers"):
            rescore_run(stored, "parent", second, score_ahead=2)
        if kept is None:
            assert children_of(stored, "parent") == []
        else:
            (derived,) = children_of(stored, "parent")
            assert stored.get_run(derived.run_id).status == "failed"
            assert stored.finished_instances(derived.run_id) == kept
        with stored.transaction() as con:
            con.execute("INSERT INTO generations SELECT * FROM held")
            con.execute("DROP TABLE held")


def test_a_derived_run_of_no_stored_run_is_one_line(stored: Store) -> None:
    """The run's one ``INSERT … SELECT`` from its parent makes no row: refused, nothing made."""
    from haf_tui.store import StoreError
    from haf_tui.store.derived_runs import create_derived_run

    with pytest.raises(StoreError, match="no run 'gone' to derive from"):
        create_derived_run(
            stored, "derived-1", "gone", config_json="{}", similarity_model="g",
            similarity_kind="bi-encoder", n_planned=4, versions={}, running=True,
        )  # fmt: skip
    assert stored.query("SELECT count(*) FROM runs WHERE run_id = 'derived-1'")[1] == [(0,)]
