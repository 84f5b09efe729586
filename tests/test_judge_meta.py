"""The judge's meta-evaluation (spec ``JUDGE.md`` §5), its ACORN importer: every rating read
into §2 codes, unreadable rows skipped with their reason, the CLI path and the store round
trip, on a small file shaped like ACORN (tests/support/acorn_rows.py). The meta tables:
test_judge_meta_tables.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from haf_tui.cli import main
from haf_tui.datasets import DatasetError, load_source, load_stored
from haf_tui.datasets import validation as v
from haf_tui.datasets.labels import LabelError
from haf_tui.methods.judge.datasets.acorn import (
    ACORN_FORMAT,
    NO_ITEM,
    NO_RATINGS,
    NOT_OBJECT,
    NOT_TEXT,
    Encoding,
    criterion_key,
    detect_encoding,
    is_acorn_file,
    is_acorn_name,
    load_acorn,
    rating_code,
)
from haf_tui.store import open_store
from haf_tui.store.dataset_catalog import skipped_rows
from tests.support import one_line_error
from tests.support.acorn_rows import (
    COPA_CHOICES,
    COPA_Q,
    ROW_TOP_LEVEL,
    ROW_VOTED_DICT,
    acorn_rows,
    write_rows,
)

FORMATS = (ACORN_FORMAT,)


@pytest.fixture
def acorn_path(tmp_path: Path) -> Path:
    return write_rows(tmp_path / "ACORN.jsonl", acorn_rows())


def test_acorn_rows_become_instances_with_codes(acorn_path: Path) -> None:
    dataset = load_acorn(acorn_path)
    assert [i.instance_id for i in dataset.instances] == ["acorn-0001", "acorn-0002", "acorn-0003"]
    assert dataset.name == "acorn" and dataset.meta["kind"] == "acorn"
    first = dataset.instances[0]
    assert first.text == ROW_TOP_LEVEL["explanation"] and first.label is None
    extra = first.extra
    assert extra["judge_item"] == {
        "question": COPA_Q,
        "choices": COPA_CHOICES,
        "explanation": ROW_TOP_LEVEL["explanation"],
    }
    assert extra["workers"] == ["W1", "W2", "W3", "W4", "W5"]
    assert extra["human_ratings"] == {
        "supports": [1, 1, 1, 1, 1],
        "overall": [4, 4, 4, 4, 3],
        "well_written": [1, 1, 1, 0, 1],
        "related": [1, 1, 1, 1, 1],
        "factual": [1, 1, 1, -1, 0],
        "new_info": [1, 1, 1, 2, 0],
        "unnecessary_info": [0, 0, 0, 1, 0],
        "contrastive": [0, 0, 0, 1, 0],
    }
    assert extra["voted"] == {
        "supports": 1,
        "overall": 4,
        "well_written": 1,
        "related": 1,
        "factual": 1,
        "new_info": 1,
        "unnecessary_info": 0,
        "contrastive": 0,
    }
    assert extra["q_source"] == "balanced_copa" and extra["e_source"] == "copa-sse"
    assert extra["answer"] == 1


def test_the_voted_ratings_dict_and_unreadable_ratings(acorn_path: Path) -> None:
    dataset = load_acorn(acorn_path)
    second = dataset.instances[1].extra
    assert second["voted"] == {
        "supports": 2,
        "overall": 2,
        "well_written": 0,
        "related": 1,
        "factual": -1,
        "new_info": 0,
        "unnecessary_info": 0,
        "contrastive": 0,
    }
    assert second["workers"] == ["A7", "B2", "C9"]
    human = second["human_ratings"]
    assert human["supports"] == [-1, -1, 2]
    assert human["factual"] == [-1, -1, None]  # C9 gave none
    assert human["contrastive"] == [0, None, 0]  # "Somewhat" cannot be read
    assert human["well_written"] == [0, 0, 0] and human["new_info"] == [0, 0, 0]
    assert second["answer"] == 2
    acorn_meta = dataset.meta["acorn"]
    assert acorn_meta["unreadable"] == {"contrastive": 1, "overall": 1}  # + row 7's "great"
    assert acorn_meta["encoding"]["supports"].startswith("0-based")


def test_a_row_without_votes_gets_the_workers_majority(acorn_path: Path) -> None:
    third = load_acorn(acorn_path).instances[2]
    assert third.text == "Yes."  # short explanations are kept
    voted = third.extra["voted"]
    assert voted["supports"] == -1 and voted["overall"] == 1 and voted["related"] == 0
    assert (
        voted["contrastive"] is None and third.extra["human_ratings"]["contrastive"] == [None] * 3
    )
    computed = load_acorn(acorn_path).meta["acorn"]["voted_computed"]
    assert computed == {"supports": 1, "overall": 1, "related": 1}


def test_unreadable_rows_are_skipped_with_their_reason(acorn_path: Path) -> None:
    dataset = load_acorn(acorn_path)
    assert [(s.row, s.reason) for s in dataset.skipped] == [
        (4, v.NOT_JSON),
        (5, v.EMPTY),
        (6, v.DUPLICATE_ID),
        (7, NO_RATINGS),
        (8, NO_ITEM),
        (9, NOT_OBJECT),
        (10, v.WHITESPACE),
        (11, NOT_TEXT),
    ]
    assert dataset.skipped[2].excerpt == "Another explanation of the same item."


def test_an_over_long_explanation_is_skipped(tmp_path: Path) -> None:
    path = write_rows(tmp_path / "ACORN.jsonl", [ROW_TOP_LEVEL, ROW_VOTED_DICT])
    dataset = load_acorn(path, max_chars=40)
    assert [s.reason for s in dataset.skipped] == [v.TOO_LONG]
    assert [i.instance_id for i in dataset.instances] == ["acorn-0002"]


def test_one_based_indices_and_a_zero_based_overall_are_detected(tmp_path: Path) -> None:
    rows = [
        {**ROW_TOP_LEVEL, "label": 2, "supports": 2, "overall": 3, "worker_ratings": {}},
        {
            **ROW_TOP_LEVEL,
            "id": "x2",
            "label": 1,
            "supports": 0,
            "overall": 0,
            "worker_ratings": {"W": {"supports": 1, "overall": 4}},
        },
    ]
    dataset = load_acorn(write_rows(tmp_path / "ACORN.jsonl", rows))
    first, second = (i.extra for i in dataset.instances)
    assert first["answer"] == 1 and first["voted"]["supports"] == 1
    assert first["voted"]["overall"] == 4  # 0-4 shifted to 1-5
    assert second["answer"] == 0 and second["voted"]["supports"] == -1  # 1-based: 0 = none
    assert second["human_ratings"]["supports"] == [0] and second["human_ratings"]["overall"] == [5]
    assert dataset.meta["acorn"]["encoding"] == {
        "label": "1-based index",
        "supports": "1-based index, 0 or -1 = none",
        "overall": "0-4 (shifted to 1-5)",
    }


def test_detect_encoding_defaults_to_zero_based_and_stars() -> None:
    assert detect_encoding([ROW_TOP_LEVEL, ROW_VOTED_DICT]) == Encoding(0, 0, 1)


@pytest.mark.parametrize(
    ("criterion", "value", "code"),
    [
        ("supports", "a", 0),
        ("supports", "a)", 0),
        ("supports", "(A)", 0),
        ("supports", "b) Water flowed from the spout.", 1),
        ("supports", "none", -1),
        ("supports", "Neither", -1),
        ("supports", 0, 0),
        ("supports", -1, -1),
        ("supports", "The toilet filled with water.", 0),
        ("overall", 5, 5),
        ("overall", "3/5", 3),
        ("overall", "★★☆☆☆", 2),
        ("overall", "2 stars", 2),
        ("overall", 4.0, 4),
        ("overall", "1", 1),
        ("well_written", "Yes", 1),
        ("well_written", False, 0),
        ("well_written", "true", 1),
        ("related", 0, 0),
        ("factual", "N/A", -1),
        ("factual", "not applicable", -1),
        ("factual", -1, -1),
        ("factual", "no", 0),
        ("new_info", "ample", 3),
        ("new_info", "Sufficient.", 2),
        ("new_info", "none", 0),
        ("new_info", 3, 3),
        ("unnecessary_info", "**yes**", 1),
        ("contrastive", "no", 0),
        ("overall", None, None),
        ("related", "", None),
        ("overall", float("nan"), None),
    ],
)
def test_rating_code_reads_liberally(criterion: str, value: Any, code: int | None) -> None:
    assert rating_code(criterion, value, COPA_CHOICES) == code


@pytest.mark.parametrize(
    ("criterion", "value"),
    [
        ("supports", "c"),  # only two choices
        ("supports", 2),
        ("supports", True),
        ("overall", 6),
        ("overall", 0),
        ("overall", 3.5),
        ("overall", "great"),
        ("related", "Somewhat"),
        ("related", 2),
        ("new_info", "good"),
        ("new_info", True),
        ("factual", ["yes"]),
    ],
)
def test_rating_code_refuses_what_it_cannot_read(criterion: str, value: Any) -> None:
    with pytest.raises(ValueError, match=criterion):
        rating_code(criterion, value, COPA_CHOICES)


def test_names_keys_and_detection(acorn_path: Path, tmp_path: Path) -> None:
    assert is_acorn_name("acorn") and is_acorn_name("ACORN") and is_acorn_name("anab/ACORN")
    assert not is_acorn_name("civil_comments")
    assert criterion_key("New information") == "new_info"
    assert criterion_key("well-written") == "well_written" and criterion_key("q_id") is None
    assert is_acorn_file(acorn_path)
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"text": "hello there", "label": "toxic"}) + "\n")
    assert not is_acorn_file(other) and not is_acorn_file(tmp_path / "missing.jsonl")


def test_load_source_reads_acorn_by_name_and_by_shape(acorn_path: Path) -> None:
    (by_name,) = load_source("acorn", files=[str(acorn_path)], formats=FORMATS)
    (by_folder,) = load_source("acorn", files=[str(acorn_path.parent)], formats=FORMATS)
    (by_shape,) = load_source(str(acorn_path), formats=FORMATS)
    assert by_name.dataset_id == by_folder.dataset_id == by_shape.dataset_id
    assert by_name.dataset_id.startswith("acorn-")
    (sampled,) = load_source("acorn", files=[str(acorn_path)], sample=2, seed=3, formats=FORMATS)
    assert len(sampled.instances) == 2
    with pytest.raises(DatasetError, match=r"--file ACORN\.jsonl"):
        load_source("acorn", formats=FORMATS)
    # without the judge's format, an ACORN-shaped file is a plain file (its labels unread)
    with pytest.raises(LabelError):
        load_source(str(acorn_path))
    with pytest.raises(DatasetError, match="one --file"):
        load_source("acorn", files=[str(acorn_path), str(acorn_path)], formats=FORMATS)


def test_haf_datasets_import_acorn_stores_extra_intact(
    acorn_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "haf.duckdb"
    assert main(["--db", str(db), "datasets", "import", "acorn", "--file", str(acorn_path)]) == 0
    out = capsys.readouterr().out
    assert "imported" in out and "3 instances" in out and "8 rows skipped" in out
    loaded = load_acorn(acorn_path)
    with open_store(db, read_only=True) as store:
        stored = load_stored(store, "acorn")
        assert stored.meta["kind"] == "acorn"
        assert stored.meta["acorn"]["encoding"] == loaded.meta["acorn"]["encoding"]
        assert [i.model_dump() for i in stored.instances] == [
            i.model_dump() for i in loaded.instances
        ]
        reasons = [reason for _, reason, _ in skipped_rows(store, stored.dataset_id)]
        assert sorted(reasons) == sorted(s.reason for s in loaded.skipped)
    # the file alone is recognised as ACORN: the same dataset, already stored
    assert main(["--db", str(db), "datasets", "import", str(acorn_path)]) == 0
    assert "already stored" in capsys.readouterr().out
    assert main(["--db", str(db), "datasets", "show", "acorn"]) == 0
    assert "acorn-0001" in capsys.readouterr().out


def test_haf_datasets_import_acorn_without_its_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["--db", str(tmp_path / "haf.duckdb"), "datasets", "import", "acorn"]) == 2
    assert "haf datasets import acorn --file ACORN.jsonl" in one_line_error(capsys)
