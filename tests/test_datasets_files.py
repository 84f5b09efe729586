"""Local dataset files: formats, encodings, column mapping, preview, validation of bad rows."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from haf_tui.datasets import (
    ColumnMapping,
    DatasetError,
    builtin_sample,
    load_file,
    preview_file,
    sample_dataset,
    sample_indices,
)
from haf_tui.datasets import validation as v

GOOD = "This comment is long enough to be a real instance of the dataset."


def _csv(path: Path, text: str, encoding: str = "utf-8") -> Path:
    path.write_bytes(text.encode(encoding))
    return path


def test_builtin_sample_keeps_its_id_and_kind() -> None:
    sample = builtin_sample()
    assert sample.dataset_id == "builtin-sample" and sample.meta["kind"] == "builtin"
    assert not sample.skipped


def test_a_file_full_of_bad_rows_skips_each_with_its_reason(tmp_path: Path) -> None:
    long_text = "x" * 300
    rows = [
        ("1", GOOD, "toxic"),  # kept
        ("2", "", "toxic"),  # empty
        ("3", "   \t ", "toxic"),  # whitespace-only
        ("4", long_text, "toxic"),  # over-long (max_chars=200)
        ("5", GOOD, "toxic"),  # duplicate text
        ("1", "Another text, with a duplicate id this time around.", "toxic"),
        ("7", "A text that has no label at all in its label column.", ""),
        ("8", "A second good text, different from the first one.", "non-toxic"),
    ]
    lines = ["id,text,label"] + [f'{i},"{t}",{lab}' for i, t, lab in rows]
    raw = ("\n".join(lines) + "\n").encode("utf-8")
    raw += b'9,"caf\xe9 is not UTF-8 here, the rest of the file is: \xc3\xa9",toxic\n'
    path = tmp_path / "bad.csv"
    path.write_bytes(raw)
    dataset = load_file(path, max_chars=200)
    assert [i.instance_id for i in dataset.instances] == ["1", "8"]
    assert [(s.row, s.reason) for s in dataset.skipped] == [
        (2, v.EMPTY),
        (3, v.WHITESPACE),
        (4, v.TOO_LONG),
        (5, v.DUPLICATE_TEXT),
        (6, v.DUPLICATE_ID),
        (7, v.NO_LABEL),
        (9, v.NOT_UTF8),
    ]
    assert dataset.skipped[6].excerpt.startswith("caf\ufffd is not UTF-8")
    assert dataset.meta["encoding"] == "utf-8"
    assert dataset.skip_counts()[v.EMPTY] == 1
    assert set(dataset.skip_counts()) <= set(v.SKIP_REASONS)


def test_a_label_column_can_be_optional(tmp_path: Path) -> None:
    path = _csv(tmp_path / "l.csv", f"text,label\n{GOOD},\nSecond text of the file,toxic\n")
    assert len(load_file(path, label_required=False).instances) == 2
    assert len(load_file(path).instances) == 1


@pytest.mark.parametrize(
    ("encoding", "bom"),
    [("utf-8-sig", b""), ("utf-16", b""), ("cp1252", b""), ("utf-16-le", b"")],
)
def test_encodings_are_detected(tmp_path: Path, encoding: str, bom: bytes) -> None:
    text = "text,label\n“Café” is not a toxic word,non-toxic\nNaïve people say naïve things,toxic\n"
    path = tmp_path / "e.csv"
    path.write_bytes(bom + text.encode(encoding))
    dataset = load_file(path)
    assert dataset.instances[0].text == "“Café” is not a toxic word"
    assert dataset.meta["encoding"] == encoding


def test_latin1_when_cp1252_cannot_decode(tmp_path: Path) -> None:
    path = tmp_path / "l1.csv"
    path.write_bytes("text\nA control byte \x81 and an accent é\n".encode("latin-1"))
    dataset = load_file(path)
    assert dataset.meta["encoding"] == "latin-1" and "é" in dataset.instances[0].text


def test_an_explicit_encoding_wins_and_a_wrong_one_is_one_error(tmp_path: Path) -> None:
    path = _csv(tmp_path / "c.csv", "text\nCafé au lait\n", "cp1252")
    assert load_file(path, encoding="latin-1").instances[0].text == "Café au lait"
    with pytest.raises(DatasetError, match="is not utf-8 text"):
        load_file(path, encoding="utf-8")
    with pytest.raises(DatasetError, match="unknown encoding"):
        load_file(path, encoding="klingon")


def test_tsv_jsonl_json_and_parquet_with_a_mapping(tmp_path: Path) -> None:
    records = [
        {"post": f"Post number {k} says something", "grp": f"g{k}", "y": k % 2, "key": f"p{k}"}
        for k in range(3)
    ]
    tsv = tmp_path / "d.tsv"
    tsv.write_text(
        "post\tgrp\ty\tkey\n"
        + "".join(f"{r['post']}\t{r['grp']}\t{r['y']}\t{r['key']}\n" for r in records),
        encoding="utf-8",
    )
    jsonl = tmp_path / "d.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n\n" for r in records), encoding="utf-8")
    array = tmp_path / "d.json"
    array.write_text(json.dumps(records), encoding="utf-8")
    parquet = tmp_path / "d.parquet"
    con = duckdb.connect()
    con.execute("CREATE TABLE t (post VARCHAR, grp VARCHAR, y INTEGER, key VARCHAR)")
    con.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", [list(r.values()) for r in records])
    con.execute(f"COPY t TO '{parquet.as_posix()}' (FORMAT parquet)")
    con.close()
    mapping = ColumnMapping(text="post", id="key", label="y", extra=("grp",))
    for path in (tsv, jsonl, array, parquet):
        dataset = load_file(path, mapping)
        assert [i.instance_id for i in dataset.instances] == ["p0", "p1", "p2"], path
        assert [i.label for i in dataset.instances] == ["non-toxic", "toxic", "non-toxic"], path
        raw: list[object] = ["0", "1", "0"] if path.suffix == ".tsv" else [0, 1, 0]
        assert [i.extra["label_raw"] for i in dataset.instances] == raw, path
        assert dataset.instances[2].extra["grp"] == "g2", path
        assert dataset.meta["label_rule"]["kind"] == "binary", path
        assert dataset.meta["mapping"]["text"] == "post"
    assert load_file(jsonl, mapping).dataset_id != load_file(jsonl).dataset_id


def test_without_an_id_column_the_row_number_is_the_id(tmp_path: Path) -> None:
    path = tmp_path / "n.jsonl"
    path.write_text(json.dumps({"text": GOOD}) + "\n\n" + json.dumps({"text": "Other"}) + "\n")
    dataset = load_file(path)
    assert [i.instance_id for i in dataset.instances] == ["1", "3"]  # JSONL: line numbers


def test_preview_guesses_the_mapping_and_counts_rows(tmp_path: Path) -> None:
    path = _csv(
        tmp_path / "p.csv",
        "index,input_text,given_label\n" + "".join(f"{k},Text {k},0.9\n" for k in range(30)),
    )
    preview = preview_file(path, rows=5)
    assert preview.n_rows == 30 and len(preview.rows) == 5
    assert preview.mapping == ColumnMapping(text="input_text", id="index", label="given_label")
    assert preview.encoding == "utf-8" and preview.format == "csv"
    odd = _csv(tmp_path / "odd.csv", "a;body\n1;" + "a long body of text here " * 3 + "\n")
    guessed = preview_file(odd).mapping
    assert guessed is not None and guessed.text == "body"  # the longest texts; ';' separated


def test_a_file_that_cannot_be_read_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="dataset file not found"):
        load_file(tmp_path / "absent.csv")
    (tmp_path / "x.xlsx").write_bytes(b"PK")
    with pytest.raises(DatasetError, match=r"unsupported dataset file type '\.xlsx'"):
        load_file(tmp_path / "x.xlsx")
    (tmp_path / "bad.jsonl").write_text('{"text": "fine"}\nnot json\n{"text": "also fine"}\n')
    loaded = load_file(tmp_path / "bad.jsonl")  # one broken line is skipped, with its reason
    assert [i.text for i in loaded.instances] == ["fine", "also fine"]
    assert [(s[0], s[1]) for s in loaded.skipped] == [(2, "not valid JSON")]
    (tmp_path / "all-bad.jsonl").write_text("not json\n{broken\n")
    with pytest.raises(DatasetError, match="no text column"):
        load_file(tmp_path / "all-bad.jsonl")
    nested = "[" * 100_000 + "]" * 100_000  # (RecursionError in json: issue 42 §6)
    (tmp_path / "deep.jsonl").write_text(f'{{"text": "fine"}}\n{nested}\n')
    loaded = load_file(tmp_path / "deep.jsonl")  # one line nested too deep: skipped
    assert [(s[0], s[1]) for s in loaded.skipped] == [(2, "not valid JSON")]
    (tmp_path / "deep.json").write_text(nested)
    deep = r"deep\.json: not valid JSON \(brackets nested too deep\)"
    with pytest.raises(DatasetError, match=deep):
        load_file(tmp_path / "deep.json")
    (tmp_path / "list.jsonl").write_text('[1, 2]\n{"text": "fine"}\n')
    loaded = load_file(tmp_path / "list.jsonl")  # JSON that is not an object: skipped too
    assert [(s[0], s[1]) for s in loaded.skipped] == [(1, "not a JSON object")]
    (tmp_path / "broken.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(DatasetError, match="cannot read Parquet file"):
        load_file(tmp_path / "broken.parquet")
    (tmp_path / "empty.csv").write_text("text\n")
    with pytest.raises(DatasetError, match="has no rows"):
        load_file(tmp_path / "empty.csv")
    no_text = _csv(tmp_path / "num.csv", "a,b\n1,2\n")
    with pytest.raises(DatasetError, match="has no text column"):
        load_file(no_text)
    with pytest.raises(DatasetError, match="has no column 'txt' \\(its columns: a, b\\)"):
        load_file(no_text, ColumnMapping(text="txt"))


def test_sampling_is_pandas_sample_with_a_seed(tmp_path: Path) -> None:
    assert sample_indices(10, 4, 17) == sample_indices(10, 4, 17)
    assert sorted(sample_indices(5, 99, 3)) == [0, 1, 2, 3, 4]
    path = _csv(tmp_path / "s.csv", "text\n" + "".join(f"Text number {k}\n" for k in range(20)))
    dataset = load_file(path)
    sampled = sample_dataset(dataset, 5, 17)
    indices = sample_indices(20, 5, 17)
    assert sampled.meta["sample"] == {"seed": 17, "n": 5, "population": 20, "indices": indices}
    assert [i.text for i in sampled.instances] == [dataset.instances[k].text for k in indices]
    assert [i.position for i in sampled.instances] == list(range(5))
    with pytest.raises(DatasetError, match="at least one"):
        sample_dataset(dataset, 0, 17)
