"""Issue 42 §6: a 200 MB CSV import took 4.5 GB and its preview read the whole file (1.3 GB).
A preview reads the start of a file only (its row count estimated past it); an import reads
the file as a stream (the encoding decided over all of it), never the whole file at once.
Memory is measured with tracemalloc (what Python allocates: no timing, no luck)."""

from __future__ import annotations

import csv
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from haf_tui.datasets import load_file, preview_file
from haf_tui.datasets.streams import HEAD_BYTES, read_table

WORDS = [
    "the",
    "quick",
    "brown",
    "fox",
    "jumps",
    "over",
    "a",
    "lazy",
    "dog",
    "while",
    "nobody",
    "was",
    "looking",
    "at",
    "it",
]


def _big_csv(path: Path, rows: int, words: int = 30) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "comment", "is_toxic"])
        for k in range(rows):
            text = " ".join(WORDS[(k + j) % len(WORDS)] for j in range(words))
            writer.writerow([f"c{k}", f"{text} {k}", k % 2])
    return path


def _peak(call: Callable[[], Any]) -> tuple[Any, int]:
    tracemalloc.start()
    try:
        result = call()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_preview_reads_only_the_start_of_a_big_file(tmp_path: Path) -> None:
    path = _big_csv(tmp_path / "big.csv", 160_000)  # about 26 MB
    size = path.stat().st_size
    preview, peak = _peak(lambda: preview_file(path, rows=5))
    assert len(preview.rows) == 5 and preview.mapping is not None
    assert preview.mapping.label == "is_toxic"
    assert not preview.n_rows_exact and abs(preview.n_rows - 160_000) < 16_000
    assert peak < size / 4, (peak, size)  # (the whole file was read: more than its size)


def test_a_preview_of_a_small_file_counts_its_rows_exactly(tmp_path: Path) -> None:
    path = _big_csv(tmp_path / "small.csv", 1000)
    preview = preview_file(path, rows=5)
    assert (preview.n_rows, preview.n_rows_exact) == (1000, True)
    table = read_table(path, limit=1000)  # (exactly the limit: the file ended)
    assert (table.n_rows, table.n_rows_exact, len(table.rows)) == (1000, True, 1000)
    table = read_table(path, limit=999)
    assert not table.n_rows_exact and len(table.rows) == 999


def test_an_import_streams_the_file_instead_of_holding_it(tmp_path: Path) -> None:
    path = _big_csv(tmp_path / "long.csv", 8_000, words=500)  # about 20 MB, texts of 2.5 kB
    size = path.stat().st_size
    dataset, peak = _peak(lambda: load_file(path, max_chars=100))  # (every text too long)
    assert not dataset.instances and len(dataset.skipped) == 8_000
    assert dataset.meta["n_rows"] == 8_000
    assert peak < size / 2, (peak, size)  # (the first rows and the skipped rows' excerpts)


def test_an_import_decides_the_encoding_over_the_whole_file(tmp_path: Path) -> None:
    path = _big_csv(tmp_path / "late.csv", 1)
    rows = HEAD_BYTES // 100
    with path.open("ab") as handle:  # plain ASCII past the first megabyte, then one é in cp1252
        for k in range(rows):
            handle.write(f"d{k},{'plain words of a post ' * 8}{k},0\r\n".encode())
        handle.write(b"last,un caf\xe9 et une autre phrase pour le texte,1\r\n")
    dataset = load_file(path)
    assert dataset.meta["encoding"] == "cp1252"
    assert dataset.instances[-1].text == "un café et une autre phrase pour le texte"
    assert preview_file(path).encoding == "utf-8"  # (the start only: ASCII)


def test_instances_are_stored_a_batch_at_a_time_and_every_one_lands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from haf_tui.store import open_store, run_rows
    from haf_tui.store.records import InstanceRecord

    monkeypatch.setattr(run_rows, "INSTANCE_BATCH", 3)
    instances = [
        InstanceRecord(instance_id=f"i{k}", position=k, text=f"text {k}", label="toxic")
        for k in range(7)
    ]
    with open_store(tmp_path / "haf.duckdb") as store:
        store.save_dataset("d", "d", "d", instances, {})
        stored = store.instances("d")
    assert [(i.instance_id, i.position, i.text) for i in stored] == [
        (f"i{k}", k, f"text {k}") for k in range(7)
    ]
