"""The dataset a run evaluates, its error type, and the built-in sample."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from importlib.resources import files
from typing import Any, Final

from haf_tui.datasets.validation import SkippedRow
from haf_tui.store.records import InstanceRecord
from haf_tui.vocabulary import HafError

BUILTIN_SAMPLE_ID: Final = "builtin-sample"
DEMO_TEXTS_ID: Final = "builtin-demo"
"""The demo's texts (``haf run --demo``): written for this project, in the order the demo
takes them, apart from the built-in sample (docs/demo.md)."""


class DatasetError(HafError, ValueError):
    """A dataset cannot be read or found (one clear line)."""


@dataclass
class Dataset:
    """Instances ready to store, the rows skipped with why, and where they came from.

    ``meta`` is what the ``datasets`` row keeps beside name and source: ``kind`` (builtin, file,
    paper, paper-sample), the encoding and column mapping of a file, the seeded sample
    (``sample``: seed, n, population, indices), the hub repository and revision, and the
    counts of rows the paper's preprocessing filtered out (``filtered``).
    """

    dataset_id: str
    name: str
    source: str
    instances: list[InstanceRecord]
    skipped: list[SkippedRow] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    def skip_counts(self) -> dict[str, int]:
        """How many rows were skipped for each reason."""
        return dict(Counter(s.reason for s in self.skipped))


@dataclass
class StreamedDataset:
    """A dataset stored as its file is read (``haf datasets import`` of a file: a file's
    instances are never all held, issue 42 §6). Its id, name, source and ``meta`` are known
    before its rows; ``rows()`` reads the file again at each call, giving each row as an
    instance or a skipped row, and completes ``meta`` (its ``n_rows``) once read to the end."""

    dataset_id: str
    name: str
    source: str
    meta: dict[str, Any]
    rows: Callable[[], Iterator[InstanceRecord | SkippedRow]]


def builtin_sample() -> Dataset:
    """Short texts written for this project: clearly toxic, clearly not, and ambiguous."""
    return _builtin("sample.jsonl", BUILTIN_SAMPLE_ID, "built-in sample")


def demo_texts() -> Dataset:
    """The texts ``haf run --demo`` takes in order (the built-in sample's and more, written
    for this project): first those whose JUSTIFY answer went on under every CPU kernel kind
    measured (docs/demo.md)."""
    return _builtin("demo.jsonl", DEMO_TEXTS_ID, "demo texts")


def _builtin(file_name: str, dataset_id: str, name: str) -> Dataset:
    from haf_tui.datasets.labels import BUILTIN_RULE  # (labels' errors are DatasetErrors)

    raw = files("haf_tui.data").joinpath(file_name).read_text(encoding="utf-8")
    rows = [json.loads(line) for line in raw.splitlines() if line.strip()]
    instances = [
        InstanceRecord(instance_id=r["id"], position=i, text=r["text"], label=r["label"])
        for i, r in enumerate(rows)
    ]
    return Dataset(
        dataset_id,
        name,
        f"haf_tui/data/{file_name}",
        instances,
        meta={"kind": "builtin", "label_rule": BUILTIN_RULE.model_dump()},
    )
