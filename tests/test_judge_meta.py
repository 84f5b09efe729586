"""The judge's meta-evaluation (spec ``JUDGE.md`` §5): the ACORN importer (every rating read
into §2 codes, unreadable rows skipped with their reason, the CLI path and the store round
trip) and the tables 4.1, 4.2, 4.4, 4.5 and the extra-rater curve, against hand values
(§7) and the metrics functions on a tiny synthetic set."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from haf_tui.cli import main
from haf_tui.datasets import DatasetError, load_source, load_stored
from haf_tui.datasets import validation as v
from haf_tui.datasets.labels import LabelError
from haf_tui.methods.judge.core.criteria import CRITERION_IDS
from haf_tui.methods.judge.core.meta import (
    AVG,
    MEAN_VARIANT,
    MetaItem,
    alpha_table,
    bias_table,
    change_table,
    extra_rater_table,
    rho_table,
)
from haf_tui.methods.judge.core.metrics import (
    agreement,
    extra_rater_curve,
    krippendorff_alpha,
    llm_alpha,
    spearman,
    with_llm,
)
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

FORMATS = (ACORN_FORMAT,)

# ---------------------------------------------------------------- a small ACORN.jsonl

COPA_Q = "The man turned on the faucet. What happened as a result?"
COPA_CHOICES = ["The toilet filled with water.", "Water flowed from the spout."]
CSQA_Q = "Where would you put a plate after washing it?"
CSQA_CHOICES = ["dishwasher", "restaurant", "cupboard", "table", "flea market"]


def _worker(**ratings: Any) -> dict[str, Any]:
    return ratings


# the five workers of row 1 write the same ratings in five different ways
ROW_TOP_LEVEL: dict[str, Any] = {
    "id": "acorn-0001",
    "q_id": "copa-1",
    "e_id": "e-1",
    "question": COPA_Q,
    "choices": COPA_CHOICES,
    "label": 1,
    "explanation": "Opening a faucet lets water flow out of its spout.",
    "supports": 1,
    "overall": 4,
    "well_written": "yes",
    "related": "yes",
    "factual": "yes",
    "new_info": "some",
    "unnecessary_info": "no",
    "contrastive": "no",
    "worker_ratings": {
        "W1": _worker(
            supports="b",
            overall=4,
            well_written="yes",
            related="yes",
            factual="yes",
            new_info="some",
            unnecessary_info="no",
            contrastive="no",
        ),
        "W2": _worker(
            supports="b)",
            overall="4/5",
            well_written=True,
            related=True,
            factual=True,
            new_info="Some",
            unnecessary_info=False,
            contrastive=False,
        ),
        "W3": _worker(
            supports="Water flowed from the spout.",
            overall="★★★★☆",
            well_written="Yes.",
            related=1,
            factual="Yes",
            new_info=1,
            unnecessary_info=0,
            contrastive="No",
        ),
        "W4": _worker(
            supports=1,
            overall="4 stars",
            well_written="no",
            related="yes",
            factual="N/A",
            new_info="sufficient",
            unnecessary_info="yes",
            contrastive="yes",
        ),
        "W5": _worker(
            supports="(B)",
            overall=3.0,
            well_written="yes",
            related="yes",
            factual="no",
            new_info="none",
            unnecessary_info="no",
            contrastive="no",
        ),
    },
    "q_source": "balanced_copa",
    "e_source": "copa-sse",
}
ROW_VOTED_DICT: dict[str, Any] = {
    "id": "acorn-0002",
    "question": CSQA_Q,
    "choices": CSQA_CHOICES,
    "label": 2,
    "explanation": "Plates are kept in a cupboard.",
    "voted_ratings": {
        "supports": "c",
        "overall": 2,
        "well_written": "no",
        "related": "yes",
        "factual": "N/A",
        "new_info": "none",
        "unnecessary_info": "no",
        "contrastive": "no",
    },
    "worker_ratings": {
        "A7": {
            "supports": "none",
            "overall": 2,
            "well-written": "no",
            "Related": "yes",
            "factual": "n/a",
            "new information": "none",
            "unnecessary_info": "no",
            "contrastive": "no",
        },
        "B2": {
            "supports": "neither",
            "overall": 1,
            "well_written": "no",
            "related": "yes",
            "factual": "NA",
            "new_info": "none",
            "unnecessary_info": "no",
            "contrastive": "Somewhat",
        },
        "C9": {
            "supports": "C",
            "overall": "2",
            "well_written": "no",
            "related": "no",
            "new_info": 0,
            "unnecessary_info": "no",
            "contrastive": "no",
        },
    },
    "q_source": "commonsense_qa",
    "e_source": "ecqa",
}
ROW_SHORT_NO_VOTE: dict[str, Any] = {  # a very short explanation, no voted ratings at all
    "id": "acorn-0003",
    "question": COPA_Q,
    "choices": COPA_CHOICES,
    "label": 0,
    "explanation": "Yes.",
    "worker_ratings": {
        "W1": {"supports": "none", "overall": 1, "related": "no"},
        "W2": {"supports": "none", "overall": 1, "related": "no"},
        "W3": {"supports": "a", "overall": 2, "related": "yes"},
    },
    "q_source": "balanced_copa",
    "e_source": "generated",
}


def _write(path: Path, rows: list[Any], extra_lines: tuple[str, ...] = ()) -> Path:
    lines = [json.dumps(r) if not isinstance(r, str) else r for r in rows]
    path.write_text("\n".join([*lines, *extra_lines]) + "\n", encoding="utf-8")
    return path


def _acorn_rows() -> list[Any]:
    return [
        ROW_TOP_LEVEL,
        ROW_VOTED_DICT,
        ROW_SHORT_NO_VOTE,
        '{"id": "broken", "question": ',  # 4: not JSON
        {**ROW_TOP_LEVEL, "id": "acorn-0005", "explanation": ""},  # 5: empty
        {**ROW_TOP_LEVEL, "explanation": "Another explanation of the same item."},  # 6: dup id
        {  # 7: no rating at all
            "id": "acorn-0007",
            "question": COPA_Q,
            "choices": COPA_CHOICES,
            "explanation": "Water is wet.",
            "worker_ratings": {"W1": {"overall": "great"}},
        },
        {**ROW_TOP_LEVEL, "id": "acorn-0008", "choices": []},  # 8: no choices
        ["an", "array"],  # 9: not an object
        {**ROW_TOP_LEVEL, "id": "acorn-0010", "explanation": "   "},  # 10: whitespace
        {**ROW_TOP_LEVEL, "id": "acorn-0011", "explanation": ["a", "list"]},  # 11: not text
    ]


@pytest.fixture
def acorn_path(tmp_path: Path) -> Path:
    return _write(tmp_path / "ACORN.jsonl", _acorn_rows())


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
    path = _write(tmp_path / "ACORN.jsonl", [ROW_TOP_LEVEL, ROW_VOTED_DICT])
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
    dataset = load_acorn(_write(tmp_path / "ACORN.jsonl", rows))
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


# ---------------------------------------------------------------- the meta tables


def _items(
    human: dict[str, list[list[int | None]]],
    voted: dict[str, list[int | None]],
    llm: dict[str, list[int | None]],
) -> list[MetaItem]:
    lengths = [len(x) for x in human.values()] + [len(x) for x in (*voted.values(), *llm.values())]
    n = max(lengths)
    return [
        MetaItem(
            f"i{k}",
            {c: rows[k] for c, rows in human.items() if k < len(rows)},
            {c: rows[k] for c, rows in voted.items() if k < len(rows)},
            {c: rows[k] for c, rows in llm.items() if k < len(rows)},
        )
        for k in range(n)
    ]


BINARY_UNITS: list[list[int | None]] = [  # §7.3: α = 0.44 at every level
    [1, 1, 1, 1, 0],
    [1, 1, 1, 1, 1],
    [0, 0, 1, 0, 0],
    [None, None, 1, None, None],  # one rating: drops out of α
]
OVERALL_UNITS: list[list[int | None]] = [  # §7.2 padded to five workers
    [1, 2, 1, None, None],
    [3, 3, 4, None, None],
    [5, 4, 5, None, None],
    [2, None, 2, None, None],
]
HUMAN: dict[str, list[list[int | None]]] = {
    "supports": [[0, 0, 0, 1, 0], [1, 1, 1, 1, 1], [-1, -1, 0, -1, -1], [0, 0, 0, 0, 0]],
    "overall": OVERALL_UNITS,
    "well_written": BINARY_UNITS,
    "related": [[1, 1, 1, 1, 1]] * 4,  # no variation at all: α undefined
    "factual": [[1, 1, -1, 1, 0], [0, 0, 0, 1, 0], [-1, -1, -1, -1, 1], [1, 1, 1, 1, 1]],
    "new_info": [[0, 1, 1, 1, 2], [3, 3, 2, 3, 3], [1, 1, 0, 1, 1], [2, 2, 2, 1, 2]],
    "unnecessary_info": BINARY_UNITS,
    # contrastive: no human rating at all
}
VOTED: dict[str, list[int | None]] = {
    "supports": [0, 1, -1, 0],
    "overall": [1, 3, 5, 2],
    "well_written": [1, 1, 0, 1],
    "related": [1, 1, 1, 1],
    "factual": [1, 0, -1, 1],
    "new_info": [1, 3, 1, 2],
    "unnecessary_info": [1, 1, 0, 1],
    "contrastive": [0, 1, 0, None],
}
LLM: dict[str, list[int | None]] = {
    "supports": [0, 1, 0, None],
    "overall": [2, 3, 4, 2],
    "well_written": [1, 1, 1, 0],
    "related": [1, 1, 1, 1],  # constant: ρ undefined
    "factual": [1, -1, -1, 1],
    "new_info": [2, 3, 1, None],
    "unnecessary_info": [0, 1, 0, 1],
    "contrastive": [1, 1, 0, 0],
}


@pytest.fixture
def items() -> list[MetaItem]:
    return _items(HUMAN, VOTED, LLM)


def _floats(values: list[int | None]) -> list[float | None]:
    return [None if x is None else float(x) for x in values]


def test_alpha_table_matches_the_hand_values(items: list[MetaItem]) -> None:
    rows = {r.criterion: r for r in alpha_table(items, iterations=20, seed=5)}
    assert list(rows) == [*CRITERION_IDS, AVG]
    ww = rows["well_written"]
    assert ww.level == "nominal" and ww.n == 3 and ww.n_llm == 3
    assert ww.human == pytest.approx(0.44) and ww.human_interval == pytest.approx(0.44)
    assert ww.llm == pytest.approx(
        llm_alpha(BINARY_UNITS, _floats(LLM["well_written"]), "nominal", 20, 5)
    )
    overall = rows["overall"]
    assert overall.level == "ordinal" and overall.n == 4
    assert overall.human == pytest.approx(0.877787, abs=1e-6)
    assert overall.human_interval == pytest.approx(0.869565, abs=1e-6)
    assert overall.llm == pytest.approx(
        llm_alpha(OVERALL_UNITS, _floats(LLM["overall"]), "ordinal", 20, 5)
    )
    assert overall.llm_interval == pytest.approx(
        llm_alpha(OVERALL_UNITS, _floats(LLM["overall"]), "interval", 20, 5)
    )
    assert rows["supports"].level == "nominal" and rows["supports"].human_interval is None
    assert rows["factual"].human_interval is None and rows["factual"].human == pytest.approx(
        krippendorff_alpha(HUMAN["factual"], "nominal")
    )
    assert rows["supports"].n_llm == 3  # item 4 has no LLM code
    assert rows["related"].human is None  # all values identical: undefined
    assert rows["contrastive"].n == 0 and rows["contrastive"].human is None
    defined = [rows[c].human for c in CRITERION_IDS if rows[c].human is not None]
    assert len(defined) == 6
    assert rows[AVG].human == pytest.approx(sum(defined) / 6)  # type: ignore[arg-type]
    assert rows[AVG].n == 4 and rows[AVG].level is None
    assert ww.delta == pytest.approx(ww.llm - ww.human)  # type: ignore[operator]


def test_the_llm_alpha_replaces_one_rating_per_item() -> None:
    """§7.3: with LLM labels 1, 1, 1 replacing positions 5, 1, 3 α is 0.681818; the seeded
    mean of 20 random replacements is reproducible."""
    replaced = [[1, 1, 1, 1, 1], [1, 1, 1, 1, 1], [0, 0, 1, 0, 0]]
    assert krippendorff_alpha(replaced) == pytest.approx(0.681818, abs=1e-6)
    items = _items({"related": BINARY_UNITS[:3]}, {}, {"related": [1, 1, 1]})
    first = {r.criterion: r for r in alpha_table(items, seed=11)}["related"]
    again = {r.criterion: r for r in alpha_table(items, seed=11)}["related"]
    assert first.llm is not None and first.llm == again.llm
    assert first.llm == pytest.approx(llm_alpha(BINARY_UNITS[:3], [1.0, 1.0, 1.0], seed=11))
    every = [
        krippendorff_alpha(with_llm(BINARY_UNITS[:3], positions, [1, 1, 1]))
        for positions in itertools.product(range(5), repeat=3)
    ]
    assert min(a for a in every if a is not None) <= first.llm <= max(a for a in every if a)


def test_rho_table_matches_spearman_and_agreement(items: list[MetaItem]) -> None:
    rows = {r.criterion: r for r in rho_table(items)}
    assert list(rows) == [*CRITERION_IDS, AVG]
    supports = rows["supports"]
    assert supports.n == 3 and supports.agreement == pytest.approx(2 / 3)
    assert supports.rho == pytest.approx(
        spearman(_floats(VOTED["supports"]), _floats(LLM["supports"]))
    )
    assert agreement(_floats(VOTED["supports"]), _floats(LLM["supports"])) == pytest.approx(2 / 3)
    assert rows["overall"].rho == pytest.approx(
        spearman(_floats(VOTED["overall"]), _floats(LLM["overall"]))
    )
    assert rows["overall"].agreement is None
    assert rows["related"].rho is None and rows["related"].n == 4  # constant vectors
    assert rows["new_info"].n == 3 and rows["contrastive"].n == 3
    defined = [rows[c].rho for c in CRITERION_IDS if rows[c].rho is not None]
    assert len(defined) == 7
    assert rows[AVG].rho == pytest.approx(sum(defined) / 7)  # type: ignore[arg-type]


def test_rho_matches_the_worked_example() -> None:
    """§7.4: human [1,2,2,3,5] against LLM [1,3,2,3,4] → 0.921053."""
    items = _items({}, {"overall": [1, 2, 2, 3, 5]}, {"overall": [1, 3, 2, 3, 4]})
    rows = {r.criterion: r for r in rho_table(items)}
    assert rows["overall"].rho == pytest.approx(0.921053, abs=1e-6) and rows["overall"].n == 5
    assert rows[AVG].rho == pytest.approx(0.921053, abs=1e-6)  # the only defined criterion


def test_extra_rater_table_uses_the_curve_per_criterion(items: list[MetaItem]) -> None:
    points = extra_rater_table(items, iterations=5, seed=2)
    assert len(points) == 8 * 4 + 4
    for crit in ("overall", "new_info", "factual"):
        expected = extra_rater_curve(
            HUMAN[crit], _floats(LLM[crit]), _floats(VOTED[crit]), (4, 3, 2, 1), 5, 2
        )
        got = [p for p in points if p.criterion == crit]
        assert [p.raters for p in got] == [4, 3, 2, 1]
        assert [(p.humans, p.with_llm) for p in got] == [(e.humans, e.with_llm) for e in expected]
        assert all(p.n == 4 for p in got)
    contrastive = [p for p in points if p.criterion == "contrastive"]
    assert all(p.n == 0 and p.humans is None and p.with_llm is None for p in contrastive)
    avg_4 = next(p for p in points if p.criterion == AVG and p.raters == 4)
    defined = [p.humans for p in points if p.raters == 4 and p.criterion != AVG]
    values = [x for x in defined if x is not None]
    assert avg_4.humans == pytest.approx(sum(values) / len(values))
    assert avg_4.n == 4
    point = next(p for p in points if p.criterion == "overall" and p.raters == 2)
    if point.humans is not None and point.with_llm is not None:
        assert point.gain == pytest.approx(point.with_llm - point.humans)


def test_bias_table_matches_the_worked_example() -> None:
    """§7.6: Overall human [3,4,2,5], LLM [3,3,2,4] → MAE 0.5, NMAE 0.125, bias −0.5."""
    items = _items(
        {},
        {"overall": [3, 4, 2, 5], "factual": [1, -1, 0, 1], "supports": [0, 0, 0, 0]},
        {"overall": [3, 3, 2, 4], "factual": [1, 1, None, 1], "supports": [1, 1, 1, 1]},
    )
    rows = {r.criterion: r for r in bias_table(items)}
    assert list(rows) == [c for c in CRITERION_IDS if c != "supports"]
    overall = rows["overall"]
    assert (overall.n, overall.mae, overall.nmae) == (4, 0.5, 0.125)
    assert overall.mean_human == 3.5 and overall.mean_llm == 3.0 and overall.bias == -0.5
    factual = rows["factual"]  # N/A is code -1; span 2
    assert factual.n == 3 and factual.mae == pytest.approx(2 / 3)
    assert factual.nmae == pytest.approx(1 / 3) and factual.bias == pytest.approx(2 / 3)
    assert factual.mean_human == pytest.approx(1 / 3) and factual.mean_llm == 1.0
    empty = rows["contrastive"]
    assert empty.n == 0 and empty.mae is None and empty.bias is None and empty.mean_human is None


def test_bias_table_on_the_synthetic_set(items: list[MetaItem]) -> None:
    rows = {r.criterion: r for r in bias_table(items)}
    unn = rows["unnecessary_info"]  # voted [1,1,0,1], LLM [0,1,0,1]
    assert unn.n == 4 and unn.mae == 0.25 and unn.nmae == 0.25 and unn.bias == -0.25
    new = rows["new_info"]  # voted [1,3,1], LLM [2,3,1] on the three items with both
    assert new.n == 3 and new.mae == pytest.approx(1 / 3) and new.nmae == pytest.approx(1 / 9)


def test_change_table_matches_the_worked_example() -> None:
    """§7.7: Default [yes,no,yes,yes,no], variant [yes,yes,yes,no,no] → 40 %."""
    ids = [f"i{k}" for k in range(5)]
    default = {i: {"related": code} for i, code in zip(ids, [1, 0, 1, 1, 0], strict=True)}
    shuffled = {i: {"related": code} for i, code in zip(ids, [1, 1, 1, 0, 0], strict=True)}
    verbose: dict[str, dict[str, int | None]] = {
        "i0": {"related": 0, "overall": 3},
        "i1": {"related": None, "overall": 3},  # a parse failure: left out
        "extra": {"related": 1},  # not rated under Default: ignored
    }
    for i in ids:
        default[i]["overall"] = 3
    rows = change_table({"default": default, "shuffled": shuffled, "verbose": verbose})
    cell = {(r.variant, r.criterion): r for r in rows}
    assert cell["shuffled", "related"].rate == pytest.approx(40.0)
    assert cell["shuffled", "related"].n == 5
    assert cell["shuffled", "overall"].rate is None and cell["shuffled", "overall"].n == 0
    assert cell["shuffled", AVG].rate == pytest.approx(40.0) and cell["shuffled", AVG].n == 5
    assert cell["verbose", "related"].rate == 100.0 and cell["verbose", "related"].n == 1
    assert cell["verbose", "overall"].rate == 0.0 and cell["verbose", "overall"].n == 2
    assert cell["verbose", AVG].rate == pytest.approx(50.0) and cell["verbose", AVG].n == 2
    assert cell[MEAN_VARIANT, "related"].rate == pytest.approx(70.0)
    assert cell[MEAN_VARIANT, "overall"].rate == 0.0
    assert cell[MEAN_VARIANT, "supports"].rate is None
    assert cell[MEAN_VARIANT, AVG].rate == pytest.approx(35.0)
    assert [r.variant for r in rows][:9] == ["shuffled"] * 9
    assert len(rows) == 3 * 9


def test_change_table_needs_default() -> None:
    with pytest.raises(KeyError):
        change_table({"shuffled": {}})
    rows = change_table({"default": {}})
    assert all(r.variant == MEAN_VARIANT and r.rate is None for r in rows)


def test_meta_item_from_an_imported_instance(acorn_path: Path) -> None:
    instance = load_acorn(acorn_path).instances[0]
    item = MetaItem.from_extra(instance.instance_id, instance.extra, {"overall": 4})
    assert item.humans("overall") == [4.0, 4.0, 4.0, 4.0, 3.0]
    assert item.voted["factual"] == 1 and item.llm == {"overall": 4}
    rows = {r.criterion: r for r in bias_table([item])}
    assert rows["overall"].n == 1 and rows["overall"].mae == 0.0
