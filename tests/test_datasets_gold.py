"""Issue 42 §2 and §6: gold labels the rest of the way. The label rules each planted slip got
past (a map naming one side only, a value named on both sides, a threshold of 0, the largest
number of label values, a named format against another format's file check), and wrong gold
never stored: missing cells (empty, NaN) are rows without gold, never a class; a threshold of
NaN or infinity, a map naming a value the column does not hold, a zero-width character after
a label, a JSON label of 10^400: each one line, or read as what it shows."""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb
import pytest

from haf_tui.datasets import Dataset, DatasetError, load_file, load_source, preview_file
from haf_tui.datasets.files import ColumnMapping
from haf_tui.datasets.formats import DatasetFormat, format_for
from haf_tui.datasets.labels import (
    MAX_LABEL_VALUES,
    LabelError,
    LabelRule,
    NotALabelError,
    guess_rule,
    parse_statement,
    rule_of,
    stated_rule,
)
from haf_tui.datasets.validation import NO_LABEL
from tests.test_datasets_labels import TEXTS, _gold


def _csv(path: Path, header: list[str], rows: list[list[Any]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def _labelled(path: Path, labels: list[str]) -> Path:
    rows = [[k, f"{TEXTS[k % 4]} (post {k})", label] for k, label in enumerate(labels, start=1)]
    return _csv(path, ["id", "text", "label"], rows)


# ---------------------------------------------------------------- the rules the tests missed


def test_a_map_naming_only_the_non_toxic_values_makes_every_other_value_toxic() -> None:
    values = ["ok", "rude", "slur", "OK", "rude"]
    rule = stated_rule(values, "verdict", label_map=["non-toxic=ok"])
    assert _gold(rule, values) == ["non-toxic", "toxic", "toxic", "non-toxic", "toxic"]
    assert (rule.toxic, rule.non_toxic) == (("rude", "slur"), ("ok",))
    assert rule.describe() == "rude, slur → toxic; ok → non-toxic (stated)"


def test_a_value_named_on_both_sides_of_the_map_is_refused_in_one_line() -> None:
    with pytest.raises(LabelError) as caught:
        stated_rule(["a", "b"], "grade", label_map=["toxic=a,B", "non-toxic=b"])
    assert str(caught.value) == "--label-map names b both toxic and non-toxic"
    with pytest.raises(LabelError, match="both toxic and non-toxic"):
        parse_statement("toxic=A non-toxic=a")


def test_a_threshold_of_zero_is_a_threshold_not_unset(tmp_path: Path) -> None:
    rule = stated_rule([-1.5, -0.2, 0, 0.5, 3], "margin", threshold=0)
    assert (rule.kind, rule.threshold, rule.origin) == ("score", 0.0, "stated")
    assert _gold(rule, [-0.2, 0, 0.1]) == ["non-toxic", "toxic", "toxic"]
    assert rule.describe() == "score ≥ 0 → toxic, below → non-toxic (stated)"
    assert parse_statement("0") == (0.0, ())
    path = _csv(
        tmp_path / "scores.csv",
        ["text", "toxicity"],
        [[t, s] for t, s in zip(TEXTS, (0.0, 0.2, 0.6, 0.9), strict=True)],
    )
    guessed, zero = load_file(path), load_file(path, label_threshold=0)
    assert [i.label for i in zero.instances] == ["toxic"] * 4
    assert [i.label for i in guessed.instances] == ["non-toxic", "non-toxic", "toxic", "toxic"]
    assert zero.dataset_id != guessed.dataset_id
    with pytest.raises(DatasetError, match="--label-threshold and --label-map go with a file"):
        load_source("civil_comments", label_threshold=0)
    unnamed = _csv(  # (a score under a name no label column is guessed from)
        tmp_path / "margins.csv",
        ["text", "margin"],
        [[t, s] for t, s in zip(TEXTS, (0.0, 0.2, 0.6, 0.9), strict=True)],
    )
    with pytest.raises(DatasetError, match="need a label column"):
        load_file(unnamed, mapping=ColumnMapping(text="text"), label_threshold=0)


def test_exactly_the_largest_number_of_label_values_is_a_label_and_one_more_is_not() -> None:
    most = [f"grade{k}" for k in range(MAX_LABEL_VALUES)]
    rule = stated_rule(most, "grade", label_map=["toxic=grade0"])
    assert len(rule.toxic) + len(rule.non_toxic) == MAX_LABEL_VALUES
    with pytest.raises(LabelError) as asked:  # (a label whose meaning is asked for)
        guess_rule(most, "grade")
    assert not isinstance(asked.value, NotALabelError)
    too_many = [*most, "grade-extra"]
    with pytest.raises(NotALabelError, match=f"free text \\({MAX_LABEL_VALUES + 1} different"):
        stated_rule(too_many, "grade", label_map=["toxic=grade0"])
    with pytest.raises(NotALabelError, match="free text"):
        guess_rule(too_many, "grade")


def _format(name: str, recognised: str, read: list[str]) -> DatasetFormat:
    def load(paths: Sequence[Path], **_: Any) -> Dataset:
        read.append(name)
        return Dataset(name, name, str(paths[0]), [], [], {"kind": name})

    return DatasetFormat(name, f"{name} rows", load, recognises=lambda p: p.suffix == recognised)


def test_a_named_format_wins_over_another_formats_file_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from haf_tui.pipeline import runs
    from haf_tui.store import open_store

    path = _csv(tmp_path / "x.csv", ["text"], [[TEXTS[0]]])
    read: list[str] = []
    formats = [_format("tables", ".csv", read), _format("acorn", ".jsonl", read)]
    assert format_for(formats, "acorn", path) is formats[1]
    assert format_for(formats, "whatever", path) is formats[0]  # (no name: the file's shape)
    (dataset,) = load_source("acorn", files=[str(path)], formats=formats)
    assert read == ["acorn"] and dataset.meta["kind"] == "acorn"
    monkeypatch.setattr(runs, "dataset_formats", lambda: formats)
    with open_store(tmp_path / "haf.duckdb") as store:
        choice = runs.choice_by_name("acorn", str(path), store)
    assert (choice.kind, choice.format) == ("format", "acorn")


# ---------------------------------------------------------------- wrong gold never stored


def test_empty_and_nan_cells_of_a_zero_one_column_are_rows_without_gold(tmp_path: Path) -> None:
    labels = ["1", "0", "", "NaN", "1", "0", "nan", "1", "0", "0", "N/A", " ", "null"]
    path = _labelled(tmp_path / "holes.csv", labels)
    for dataset in (load_file(path), load_file(path, label_map=("toxic=1",))):
        by_id = {i.instance_id: i.label for i in dataset.instances}
        assert by_id == {
            "1": "toxic", "2": "non-toxic", "5": "toxic", "6": "non-toxic", "8": "toxic",
            "9": "non-toxic", "10": "non-toxic",
        }  # fmt: skip
        assert sorted((row, reason) for row, reason, _ in dataset.skipped) == [
            (3, NO_LABEL), (4, NO_LABEL), (7, NO_LABEL), (11, NO_LABEL), (12, NO_LABEL),
            (13, NO_LABEL),
        ]  # fmt: skip
    rule = rule_of(load_file(path).meta)
    assert rule is not None and rule.kind == "binary"  # (not refused, nothing to map)
    assert rule.gold(float("nan")) == (None, None) and rule.stored("NaN") == (None, None)
    stated = stated_rule(labels, "label", label_map=["toxic=1"])
    assert stated.non_toxic == ("0",)  # (NaN is no value the map's other side takes)


def test_nan_cells_of_a_parquet_label_column_are_rows_without_gold(tmp_path: Path) -> None:
    """pandas writes a float column's NaN as a NaN double or as NULL (pyarrow): both here."""
    path = tmp_path / "holes.parquet"
    rows = [(TEXTS[k % 4] + f" ({k})", v) for k, v in enumerate([1.0, 0.0, None, "nan", 1.0])]
    values = ", ".join(f"('{t}', {'NULL' if v is None else repr(str(v))}::DOUBLE)" for t, v in rows)
    con = duckdb.connect()
    con.execute(f"COPY (SELECT * FROM (VALUES {values}) AS t(text, label)) TO '{path}'")
    con.close()
    for dataset in (load_file(path), load_file(path, label_map=("toxic=1",))):
        assert [i.label for i in dataset.instances] == ["toxic", "non-toxic", "toxic"]
        assert [(row, reason) for row, reason, _ in dataset.skipped] == [
            (3, NO_LABEL), (4, NO_LABEL)
        ]  # fmt: skip


@pytest.mark.parametrize("from_pandas", [True, False])
def test_a_parquet_written_as_pandas_does_has_its_nan_labels_without_gold(
    tmp_path: Path, from_pandas: bool
) -> None:
    """pyarrow, as ``DataFrame.to_parquet`` calls it (NaN as null), and with NaN kept."""
    pyarrow = pytest.importorskip("pyarrow")
    parquet = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "pandas.parquet"
    labels = pyarrow.array([1.0, math.nan, 0.0, math.nan], from_pandas=from_pandas)
    parquet.write_table(pyarrow.table({"text": TEXTS, "label": labels, "id": [1, 2, 3, 4]}), path)
    dataset = load_file(path, label_map=("toxic=1",))
    assert {i.instance_id: i.label for i in dataset.instances} == {"1": "toxic", "3": "non-toxic"}


@pytest.mark.parametrize("given", [math.nan, math.inf, -math.inf, float("1e400")])
def test_a_threshold_that_is_no_finite_number_is_refused(tmp_path: Path, given: float) -> None:
    path = _csv(tmp_path / "s.csv", ["text", "toxicity"], [[t, 0.3] for t in TEXTS])
    with pytest.raises(LabelError, match="is not a finite number") as caught:
        load_file(path, label_threshold=given)
    assert "\n" not in str(caught.value)
    with pytest.raises(LabelError):
        guess_rule([0.2, 0.4], "toxicity", threshold=given)
    with pytest.raises(ValueError, match="finite"):
        LabelRule(kind="score", threshold=given)


@pytest.mark.parametrize("typed", ["nan", "inf", "-inf", "1e400", "Infinity"])
def test_a_typed_threshold_that_is_no_finite_number_is_refused(typed: str) -> None:
    with pytest.raises(LabelError, match=f"--label-threshold '{typed}' is not a finite number"):
        parse_statement(typed)


def test_a_map_naming_a_value_the_column_does_not_hold_is_refused(tmp_path: Path) -> None:
    with pytest.raises(LabelError) as caught:
        stated_rule(["1", "0", "1"], "label", label_map=["toxic=yes"])
    assert str(caught.value) == (
        "--label-map names yes, which label column 'label' does not hold (its values: 0, 1)"
    )
    with pytest.raises(LabelError, match="names hateful, which"):
        stated_rule(["hate", "normal"], "label", label_map=["toxic=hate", "non-toxic=hateful"])
    path = _labelled(tmp_path / "l.csv", ["1", "0", "1", "0"])
    with pytest.raises(LabelError, match="names ture"):
        load_file(path, label_map=("toxic=ture",))


@pytest.mark.parametrize("mark", ["\u200b", "\u200d", "\ufeff", "\u2060", "\u200e"])
def test_a_label_ending_in_a_zero_width_character_is_read_as_it_shows(
    tmp_path: Path, mark: str
) -> None:
    labels = [f"toxic{mark}", "normal", "toxic", f"normal{mark}"]
    rule = guess_rule(labels, "label")
    assert _gold(rule, labels) == ["toxic", "non-toxic", "toxic", "non-toxic"]
    stated = stated_rule(labels, "label", label_map=["toxic=toxic"])
    assert _gold(stated, labels) == ["toxic", "non-toxic", "toxic", "non-toxic"]
    assert stated.describe() == "toxic → toxic; normal → non-toxic (stated)"
    assert mark not in stated.describe()
    dataset = load_file(_labelled(tmp_path / "zw.csv", labels), label_map=("toxic=toxic",))
    assert [i.label for i in dataset.instances] == ["toxic", "non-toxic", "toxic", "non-toxic"]
    assert dataset.instances[0].extra["label_raw"] == f"toxic{mark}"  # (as read)


def _jsonl(path: Path, labels: list[str]) -> Path:
    lines = [
        f'{{"text": {json.dumps(TEXTS[k % 4] + f" ({k})")}, "label": {label}}}'
        for k, label in enumerate(labels)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_json_label_of_ten_to_the_four_hundred_is_read_without_overflow(
    tmp_path: Path,
) -> None:
    huge = "1" + "0" * 400
    path = _jsonl(tmp_path / "huge.jsonl", ["1", "0", huge, *["1", "0"] * 5])
    preview = preview_file(path)
    assert preview.label is not None and preview.label.rule is not None
    dataset = load_file(path)
    assert len(dataset.instances) == 12
    ((row, reason, _),) = dataset.skipped
    assert row == 3 and "is not 0 or 1" in reason
    scores = _jsonl(tmp_path / "scores.jsonl", ["0.2", "1e400", *["0.7", "0.9"] * 5])
    assert load_file(scores, label_threshold=0.5).skipped[0][1].endswith("is not a score")
    beyond = _jsonl(tmp_path / "beyond.jsonl", ["1", "1" + "0" * 5000, "0"])
    (skipped,) = load_file(beyond).skipped  # (past Python's digit limit: not JSON)
    assert skipped[0] == 2
