"""Datasets in the DuckDB store: skipped rows, metadata, finding by name or id, the v3 upgrade
of an older file, and the named queries over them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from haf_tui import reports
from haf_tui.datasets import (
    DatasetError,
    builtin_sample,
    find_stored,
    import_dataset,
    list_datasets,
    load_file,
    load_stored,
    sample_dataset,
    store_dataset,
)
from haf_tui.datasets import validation as v
from haf_tui.store import InstanceRecord, open_store
from haf_tui.store.dataset_catalog import skip_summary, skipped_rows
from haf_tui.store.migrations import LATEST_VERSION

TEXTS = [f"Row number {k} of a small file, long enough to evaluate." for k in range(6)]


def _file(tmp_path: Path) -> Path:
    path = tmp_path / "mine.csv"
    rows = [*TEXTS[:3], "", TEXTS[1], "  ", *TEXTS[3:]]
    path.write_text("text\n" + "".join(f'"{t}"\n' for t in rows), encoding="utf-8")
    return path


def test_a_dataset_is_stored_with_its_metadata_and_skipped_rows(tmp_path: Path) -> None:
    dataset = load_file(_file(tmp_path))
    with open_store(tmp_path / "h.duckdb") as store:
        row = store_dataset(store, dataset)
        assert (row.n_instances, row.n_skipped, row.kind) == (6, 3, "file")
        assert row.meta["encoding"] == "utf-8" and row.meta["mapping"]["text"] == "text"
        assert row.meta["skipped_counts"] == {v.EMPTY: 1, v.DUPLICATE_TEXT: 1, v.WHITESPACE: 1}
        assert skipped_rows(store, row.dataset_id) == [
            (4, v.EMPTY, ""),
            (5, v.DUPLICATE_TEXT, TEXTS[1]),
            (6, v.WHITESPACE, ""),
        ]
        assert skip_summary(store, row.dataset_id, first=1)[0] == (v.DUPLICATE_TEXT, 1, [5])
        store_dataset(store, dataset)  # idempotent
        assert [r.dataset_id for r in list_datasets(store)] == [dataset.dataset_id]
        loaded = load_stored(store, "mine")
        assert loaded.dataset_id == dataset.dataset_id and loaded.meta["kind"] == "file"
        assert [i.text for i in loaded.instances] == [i.text for i in dataset.instances]
        assert [s.row for s in loaded.skipped] == [4, 5, 6]


def test_a_run_saved_dataset_gains_its_metadata_later(tmp_path: Path) -> None:
    dataset = load_file(_file(tmp_path))
    with open_store(tmp_path / "h.duckdb") as store:
        # what the pipeline's create_run stores: the skipped rows only
        store.save_dataset(
            dataset.dataset_id,
            dataset.name,
            dataset.source,
            dataset.instances,
            {"skipped": dataset.skipped},
        )
        assert find_stored(store, dataset.dataset_id).n_skipped == 3
        row = store_dataset(store, dataset)
        assert row.meta["encoding"] == "utf-8" and row.n_skipped == 3


def test_names_ids_and_prefixes_find_a_dataset_and_a_name_is_not_reused(tmp_path: Path) -> None:
    with open_store(tmp_path / "h.duckdb") as store:
        first = load_file(_file(tmp_path))
        import_dataset(store, first)
        _, new = import_dataset(store, first)
        assert new is False
        assert find_stored(store, first.dataset_id[:8]).dataset_id == first.dataset_id
        other = sample_dataset(first, 2, 17)
        with pytest.raises(DatasetError, match="a different dataset is stored as 'mine'"):
            import_dataset(store, other)
        other.name = "mine-2"
        import_dataset(store, other)
        with pytest.raises(DatasetError, match="names 2 stored datasets"):
            find_stored(store, "mine-")
        with pytest.raises(DatasetError, match="no stored dataset 'nothing'"):
            find_stored(store, "nothing")
        store_dataset(store, builtin_sample())
        assert find_stored(store, "built-in sample").kind == "builtin"


def test_an_older_file_gets_skipped_rows_from_its_dataset_meta(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from haf_tui.store import db as store_db
    from haf_tui.store.migrations import MIGRATIONS

    path = tmp_path / "old.duckdb"
    monkeypatch.setattr(store_db, "MIGRATIONS", MIGRATIONS[:2])
    monkeypatch.setattr(store_db, "LATEST_VERSION", 2)
    with open_store(path) as store:
        store.connection.execute(  # as haf-tui before v3 stored it: rows counted from 0
            "INSERT INTO datasets VALUES ('old', 'old', 'old.csv', current_timestamp, 1, ?)",
            [json.dumps({"skipped": [[0, "empty text"], [3, "duplicate text"]]})],
        )
        store.connection.execute("INSERT INTO datasets VALUES ('plain', 'p', 'p', now(), 0, '{}')")
        assert store.schema_version() == 2
    monkeypatch.undo()
    with open_store(path, read_only=True) as store:
        assert store.schema_version() == LATEST_VERSION >= 3
        assert skipped_rows(store, "old") == [(1, "empty text", None), (4, "duplicate text", None)]
        assert find_stored(store, "old").n_skipped == 2 and find_stored(store, "p").n_skipped == 0


def test_the_named_dataset_queries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(reports.QUERIES_ENV, raising=False)
    with open_store(tmp_path / "h.duckdb") as store:
        dataset = load_file(_file(tmp_path))
        store_dataset(store, sample_dataset(dataset, 4, 17))
        store.save_dataset("t", "t", "t", [InstanceRecord(instance_id="a", position=0, text="x")])
        columns, rows = reports.run_named(store, "datasets")
        listed = [dict(zip(columns, r, strict=True)) for r in rows]
        assert [r["name"] for r in listed] == ["mine", "t"]
        assert listed[0]["n_skipped"] == 3 and listed[0]["sample_n"] == 4
        assert listed[0]["sample_seed"] == 17 and listed[0]["encoding"] == "utf-8"
        assert listed[1]["kind"] == "stored" and listed[1]["n_skipped"] == 0
        columns, rows = reports.run_named(store, "skipped_rows", {"dataset": "mine"})
        skipped = [dict(zip(columns, r, strict=True)) for r in rows]
        assert [(r["row_number"], r["reason"], r["n_with_reason"]) for r in skipped] == [
            (4, v.EMPTY, 1),
            (5, v.DUPLICATE_TEXT, 1),
            (6, v.WHITESPACE, 1),
        ]
        assert reports.run_named(store, "skipped_rows", {"dataset": "t"})[1] == []
