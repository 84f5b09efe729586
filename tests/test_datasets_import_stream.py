"""Issue 42 §6: ``haf datasets import`` of a 200 MB CSV held every instance before storing
them (2.1 GB). An import now reads the file's rows as the store takes them, a batch at a time,
in one transaction: these tests hold that the rows are read lazily, that a stop midway leaves
nothing, and that the dataset's id and stored rows are those the list path stored (the values
below were stored by the code before this change, from the same files)."""

from __future__ import annotations

import contextlib
import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from haf_tui.datasets import (
    Dataset,
    DatasetError,
    StreamedDataset,
    file_rows,
    files,
    import_dataset,
    load_file,
    load_source,
    sample_dataset,
    store_dataset,
)
from haf_tui.datasets.file_rows import sample_file
from haf_tui.datasets.streams import open_stream
from haf_tui.store import open_store, run_rows
from haf_tui.store.db import Store
from haf_tui.store.records import InstanceRecord

ROWS = [
    ("a1", "you are all wonderful people", "0", "forum"),
    ("a2", "go away you idiot", "1", "forum"),
    ("a3", "you are all wonderful people", "1", "forum"),
    ("a2", "another one with a reused id", "0", "chat"),
    ("a5", "", "1", "chat"),
    ("a6", "this one has a label nobody reads", "maybe", "chat"),
    ("a7", "a row without gold", "", "chat"),
    ("a8", 'a text with, a comma and "quotes"', "1", "forum"),
    ("a9", "plain text number nine", "0", "chat"),
    ("a10", "plain text number ten", "1.0", "chat"),
    ("", "a row without an id", "0", "forum"),
    ("a12", "   ", "1", "forum"),
    ("a13", "plain text number thirteen", "0", "chat"),
    ("a14", "plain text number fourteen", "1", "chat"),
]
CSV_ID = "small-8fae131741fe"
CSV_META = (
    '{"kind": "file", "format": "csv", "encoding": "utf-8", "mapping": {"text": "comment", '
    '"id": "id", "label": "label", "extra": []}, "max_chars": 20000, "n_rows": 14, '
    '"label_rule": {"kind": "binary", "threshold": null, "toxic": [], "non_toxic": [], '
    '"no_gold": [], "origin": "guessed", "why": ""}, "skipped_counts": {"duplicate text": 1, '
    '"duplicate id": 1, "empty text": 1, "label the label rule does not read: label \'maybe\' '
    'is not 0 or 1": 1, "no label": 1, "whitespace-only text": 1}}'
)
CSV_INSTANCES = [
    ("a1", 0, "you are all wonderful people", "non-toxic", '{"label_raw": "0"}'),
    ("a2", 1, "go away you idiot", "toxic", '{"label_raw": "1"}'),
    ("a8", 2, 'a text with, a comma and "quotes"', "toxic", '{"label_raw": "1"}'),
    ("a9", 3, "plain text number nine", "non-toxic", '{"label_raw": "0"}'),
    ("a10", 4, "plain text number ten", "toxic", '{"label_raw": "1.0"}'),
    ("11", 5, "a row without an id", "non-toxic", '{"label_raw": "0"}'),
    ("a13", 6, "plain text number thirteen", "non-toxic", '{"label_raw": "0"}'),
    ("a14", 7, "plain text number fourteen", "toxic", '{"label_raw": "1"}'),
]
CSV_SKIPPED = [
    (3, "duplicate text", "you are all wonderful people"),
    (4, "duplicate id", "another one with a reused id"),
    (5, "empty text", ""),
    (6, "label the label rule does not read: label 'maybe' is not 0 or 1", ROWS[5][1]),
    (7, "no label", "a row without gold"),
    (12, "whitespace-only text", ""),
]
JSONL_ID = "small-22a115faf758"
JSONL_META = (
    '{"kind": "file", "format": "jsonl", "encoding": "utf-8", "mapping": {"text": "text", '
    '"id": "id", "label": "toxic", "extra": []}, "max_chars": 20000, "n_rows": 8, '
    '"label_rule": {"kind": "boolean", "threshold": null, "toxic": [], "non_toxic": [], '
    '"no_gold": [], "origin": "guessed", "why": ""}, "skipped_counts": {"duplicate text": 1, '
    '"duplicate id": 1, "empty text": 1, "not valid JSON": 1}}'
)
JSONL_INSTANCES = [
    ("a1", 0, "you are all wonderful people", "non-toxic", '{"label_raw": false}'),
    ("a2", 1, "go away you idiot", "toxic", '{"label_raw": true}'),
    ("a6", 2, "this one has a label nobody reads", "non-toxic", '{"label_raw": false}'),
    ("j8", 3, "the last line", "non-toxic", '{"label_raw": false}'),
]
JSONL_SKIPPED = [
    (3, "duplicate text", "you are all wonderful people"),
    (4, "duplicate id", "another one with a reused id"),
    (5, "empty text", ""),
    (7, "not valid JSON", "{not json"),
]


def _small_csv(folder: Path) -> Path:
    path = folder / "small.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "comment", "label", "source"])
        writer.writerows(ROWS)
    return path


def _small_jsonl(folder: Path) -> Path:
    path = folder / "small.jsonl"
    lines = [json.dumps({"id": i, "text": t, "toxic": label == "1"}) for i, t, label, _ in ROWS[:6]]
    lines += ["{not json", json.dumps({"id": "j8", "text": "the last line", "toxic": False})]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _stored(store: Store) -> tuple[list[tuple[Any, ...]], ...]:
    con = store.connection
    return (
        con.execute(
            "SELECT dataset_id, name, source, n_instances, meta::VARCHAR FROM datasets"
        ).fetchall(),
        con.execute(
            "SELECT dataset_id, instance_id, position, text, label, extra::VARCHAR "
            "FROM instances ORDER BY dataset_id, position"
        ).fetchall(),
        con.execute(
            "SELECT dataset_id, row_number, reason, excerpt FROM skipped_rows "
            "ORDER BY dataset_id, row_number"
        ).fetchall(),
    )


def _long_csv(path: Path, rows: int, *, label: bool = True) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "text", *(["label"] if label else [])])
        for k in range(rows):
            writer.writerow([f"r{k}", f"the text of row number {k}", *([k % 2] if label else [])])
    return path


@pytest.mark.parametrize(
    ("make", "dataset_id", "meta", "instances", "skipped"),
    [
        (_small_csv, CSV_ID, CSV_META, CSV_INSTANCES, CSV_SKIPPED),
        (_small_jsonl, JSONL_ID, JSONL_META, JSONL_INSTANCES, JSONL_SKIPPED),
    ],
)
def test_a_streamed_import_stores_the_id_and_rows_the_list_path_stored(
    tmp_path: Path,
    make: Any,
    dataset_id: str,
    meta: str,
    instances: list[tuple[Any, ...]],
    skipped: list[tuple[Any, ...]],
) -> None:
    path = make(tmp_path)
    (dataset,) = load_source(str(path))
    assert isinstance(dataset, StreamedDataset) and dataset.dataset_id == dataset_id
    with open_store(tmp_path / "stream.duckdb") as store:
        _, new = import_dataset(store, dataset)
        streamed = _stored(store)
    with open_store(tmp_path / "list.duckdb") as store:
        listed = load_file(path)
        assert listed.dataset_id == dataset_id
        store_dataset(store, listed)
        assert _stored(store) == streamed
    assert new and streamed == (
        [(dataset_id, "small", str(path), len(instances), meta)],
        [(dataset_id, *row) for row in instances],
        [(dataset_id, *row) for row in skipped],
    )


def _counting_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Each opening of a file by the import's reader, with how many rows were read from it so
    far (the last opening: the second pass, that the store takes)."""
    reads: list[int] = []

    @contextlib.contextmanager
    def counting(path: Path, **options: Any) -> Iterator[Any]:
        with open_stream(path, **options) as stream:
            reads.append(0)
            index = len(reads) - 1
            rows = stream.rows

            def counted() -> Iterator[Any]:
                for row in rows:
                    reads[index] += 1
                    yield row

            stream.rows = counted()
            yield stream

    monkeypatch.setattr(file_rows, "open_stream", counting)
    return reads


@pytest.mark.parametrize("suffix", ["csv", "jsonl", "parquet"])
def test_an_import_stores_a_batch_before_it_reads_the_next_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str
) -> None:
    path = _long_csv(tmp_path / "long.csv", 40)
    if suffix != "csv":  # (the same rows as JSON Lines and as Parquet, written by DuckDB)
        import duckdb

        target = tmp_path / f"long.{suffix}"
        kind = "FORMAT json" if suffix == "jsonl" else "FORMAT parquet"
        duckdb.sql(f"COPY (FROM read_csv('{path}', all_varchar=true)) TO '{target}' ({kind})")
        path = target
    monkeypatch.setattr(run_rows, "INSTANCE_BATCH", 5)
    reads = _counting_reads(monkeypatch)
    at_insert: list[int] = []
    insert = run_rows._insert_instances

    def recording(con: Any, dataset_id: str, batch: list[InstanceRecord]) -> int:
        at_insert.append(reads[-1])
        return insert(con, dataset_id, batch)

    monkeypatch.setattr(run_rows, "_insert_instances", recording)
    (dataset,) = load_source(str(path))
    assert reads == [40]  # (the first pass: the label column over the whole file)
    with open_store(tmp_path / "haf.duckdb") as store:
        row, new = import_dataset(store, dataset)
    assert new and row.n_instances == 40 and len(reads) == 2
    assert at_insert[:3] == [5, 10, 15]  # (the rows read when each batch reached the store)
    assert reads[-1] == 40 and dataset.meta["n_rows"] == 40


def _stored_nothing(store: Store) -> bool:
    return _stored(store) == ([], [], [])


def test_a_stop_midway_leaves_no_half_dataset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run_rows, "INSTANCE_BATCH", 3)
    seen: list[int] = []

    def rows(store: Store, stop: int | None) -> Iterator[InstanceRecord]:
        for k in range(20):
            if k == stop:  # (three batches stored in the transaction by now: Ctrl-C)
                raise KeyboardInterrupt
            with store.reader() as cursor:  # (another cursor: its own transaction)
                row = cursor.execute("SELECT count(*) FROM instances").fetchone()
                seen.append(int(row[0]) if row else -1)
            yield InstanceRecord(instance_id=f"i{k}", position=k, text=f"text {k}")

    skipped = {"skipped": [(99, "empty text", "")]}
    with open_store(tmp_path / "haf.duckdb") as store:
        with pytest.raises(KeyboardInterrupt):
            store.save_dataset("d", "d", "d", rows(store, 11), skipped)
        assert _stored_nothing(store)
    assert seen == [0] * 11
    with open_store(tmp_path / "haf.duckdb") as store:  # (the file opened again: still none)
        assert _stored_nothing(store)
        assert store.save_dataset("d", "d", "d", rows(store, None), skipped)
        assert len(store.instances("d")) == 20 and len(_stored(store)[2]) == 1


def test_an_import_that_fails_midway_stores_nothing_and_says_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run_rows, "INSTANCE_BATCH", 100)
    # (no label column: the first pass reads only the first rows, the bad byte is far past them)
    path = _long_csv(tmp_path / "late.csv", 3000, label=False)
    with path.open("ab") as handle:
        handle.write(b"r3000,a late caf\xe9 that is not UTF-8\r\n")
    (dataset,) = load_source(str(path), encoding="utf-8")
    batches: list[int] = []
    insert = run_rows._insert_instances

    def recording(con: Any, dataset_id: str, batch: list[InstanceRecord]) -> int:
        batches.append(len(batch))
        return insert(con, dataset_id, batch)

    monkeypatch.setattr(run_rows, "_insert_instances", recording)
    with open_store(tmp_path / "haf.duckdb") as store:
        with pytest.raises(DatasetError, match=r"is not utf-8 text \(invalid"):
            import_dataset(store, dataset)
        assert batches[:10] == [100] * 10  # (rows went in before the bad byte; none stayed)
        assert _stored_nothing(store)


def _never_read() -> Iterator[InstanceRecord]:
    raise AssertionError("the rows of a dataset stored already were read")
    yield  # (a generator)


def test_the_store_reads_rows_as_it_inserts_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run_rows, "INSTANCE_BATCH", 4)
    visible: list[int] = []

    with open_store(tmp_path / "haf.duckdb") as store:

        def rows() -> Iterator[InstanceRecord | tuple[int, str, str]]:
            for k in range(10):
                # (the writing connection sees its own transaction's rows)
                row = store.connection.execute("SELECT count(*) FROM instances").fetchone()
                visible.append(int(row[0]) if row else -1)
                yield InstanceRecord(instance_id=f"i{k}", position=k, text=f"text {k}")
            yield (11, "empty text", "")

        assert store.save_dataset("d", "name", "src", rows(), lambda: {"kind": "file"})
        assert not store.save_dataset("d", "name", "src", _never_read(), {})
        stored = _stored(store)
    assert visible == [0, 0, 0, 0, 4, 4, 4, 4, 8, 8]
    assert stored[0] == [
        ("d", "name", "src", 10, '{"kind": "file", "skipped_counts": {"empty text": 1}}')
    ]
    assert [r[1] for r in stored[1]] == [f"i{k}" for k in range(10)]
    assert stored[2] == [("d", 11, "empty text", "")]


def test_the_label_rule_is_decided_over_the_whole_file_without_holding_it(tmp_path: Path) -> None:
    path = tmp_path / "late.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "text", "label"])
        writer.writerows([f"r{k}", f"row number {k}", k % 2] for k in range(1500))
        writer.writerow(["late", "a score far past the first rows", "0.25"])
    (dataset,) = load_source(str(path))
    assert dataset.meta["label_rule"]["kind"] == "score"  # (not 0/1: the last row says so)
    words = tmp_path / "words.csv"
    with words.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "text", "label"])
        writer.writerows(
            [f"r{k}", f"row number {k}", ["toxic", "normal"][k % 2]] for k in range(1500)
        )
        writer.writerows([f"w{k}", f"a late word {k}", f"word{k}"] for k in range(25))
    (dataset,) = load_source(str(words))
    assert "label_rule" not in dataset.meta
    assert "free text (27 different values" in dataset.meta["label_note"]


def test_a_sampled_import_draws_what_it_drew_holding_only_the_drawn_instances(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _small_csv(tmp_path)
    drawn = [("a10", "toxic"), ("a9", "non-toxic"), ("a8", "toxic"), ("11", "non-toxic")]
    drawn += [("a1", "non-toxic"), ("a13", "non-toxic"), ("a2", "toxic"), ("a14", "toxic")]
    order = [4, 3, 2, 5, 0, 6, 1, 7]  # (the code before stored these, seed 17)
    held: list[int] = []  # (the instances the dataset a sample is drawn from holds)
    draw = files.sampled

    def recording(dataset: Dataset, drawn: list[InstanceRecord], *args: Any) -> Dataset:
        held.append(len(dataset.instances))
        return draw(dataset, drawn, *args)

    monkeypatch.setattr(files, "sampled", recording)
    monkeypatch.setattr(file_rows, "sampled", recording)
    for n in (5, 50):
        (dataset,) = load_source(str(path), sample=n, seed=17)
        size = min(n, 8)
        assert isinstance(dataset, Dataset) and dataset.dataset_id == f"{CSV_ID}-n{size}-s17"
        assert [(i.instance_id, i.position, i.label) for i in dataset.instances] == [
            (instance_id, k, label) for k, (instance_id, label) in enumerate(drawn[:size])
        ]
        assert dataset.meta["sample"] == {
            "seed": 17, "n": size, "population": 8, "indices": order[:size]
        }  # fmt: skip
        assert len(dataset.skipped) == 6 and dataset.meta["n_rows"] == 14
        assert held.pop() == 0  # (only the drawn instances were kept)
        assert dataset == sample_dataset(load_file(path), n, 17)
    with pytest.raises(DatasetError, match="at least one instance, not 0"):
        sample_file(path, n=0, seed=17)
