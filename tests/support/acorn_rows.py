"""A small ACORN.jsonl, shaped like the real one (each way a rating is written, and each
unreadable row the importer must skip with its reason): its rows and a writer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

COPA_Q = "The man turned on the faucet. What happened as a result?"
COPA_CHOICES = ["The toilet filled with water.", "Water flowed from the spout."]
CSQA_Q = "Where would you put a plate after washing it?"
CSQA_CHOICES = ["dishwasher", "restaurant", "cupboard", "table", "flea market"]


def worker(**ratings: Any) -> dict[str, Any]:
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
        "W1": worker(
            supports="b",
            overall=4,
            well_written="yes",
            related="yes",
            factual="yes",
            new_info="some",
            unnecessary_info="no",
            contrastive="no",
        ),
        "W2": worker(
            supports="b)",
            overall="4/5",
            well_written=True,
            related=True,
            factual=True,
            new_info="Some",
            unnecessary_info=False,
            contrastive=False,
        ),
        "W3": worker(
            supports="Water flowed from the spout.",
            overall="★★★★☆",
            well_written="Yes.",
            related=1,
            factual="Yes",
            new_info=1,
            unnecessary_info=0,
            contrastive="No",
        ),
        "W4": worker(
            supports=1,
            overall="4 stars",
            well_written="no",
            related="yes",
            factual="N/A",
            new_info="sufficient",
            unnecessary_info="yes",
            contrastive="yes",
        ),
        "W5": worker(
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


def write_rows(path: Path, rows: list[Any], extra_lines: tuple[str, ...] = ()) -> Path:
    lines = [json.dumps(r) if not isinstance(r, str) else r for r in rows]
    path.write_text("\n".join([*lines, *extra_lines]) + "\n", encoding="utf-8")
    return path


def acorn_rows() -> list[Any]:
    """Three readable rows, then one of each unreadable kind (numbered as the importer
    counts lines)."""
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
