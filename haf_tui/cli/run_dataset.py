"""The file a ``haf run --file`` reads: the columns and label rule its options state
(``--text-column``, ``--label-column``, ``--label-threshold``, ``--label-map``: the options of
``haf datasets import``, declared once in :mod:`haf_tui.cli.dataset_parser`), and what the run
says of its gold before it starts (the rule and column, or that no label column was chosen
and which columns look like labels)."""

from __future__ import annotations

import argparse
from collections import Counter
from dataclasses import replace

from rich.console import Console

from haf_tui.cli.dataset_commands import label_lines
from haf_tui.datasets import Dataset
from haf_tui.pipeline.runs import DatasetChoice

COLUMN_OPTIONS = ("text_column", "label_column", "label_threshold", "label_map")
"""The options of :func:`~haf_tui.cli.dataset_parser.add_column_options`, as attributes."""


def with_columns(choice: DatasetChoice, args: argparse.Namespace) -> DatasetChoice:
    """``choice`` with the columns and label rule the options state (a file only: one line
    otherwise)."""
    given = {k: getattr(args, k) for k in COLUMN_OPTIONS if getattr(args, k) not in (None, [])}
    if not given:
        return choice
    if choice.kind != "file":
        flags = ", ".join("--" + k.replace("_", "-") for k in given)
        raise ValueError(
            f"{flags}: for a dataset file only (--file PATH: .csv .tsv .jsonl .json .parquet)"
        )
    if "label_map" in given:
        given["label_map"] = tuple(given["label_map"])
    return replace(choice, **given)


def say_gold(dataset: Dataset | None, console: Console) -> None:
    """A file's gold, before the run: its rule and label column with the counts, or that no
    label column was chosen (and the columns that look like labels)."""
    if dataset is None or dataset.meta.get("kind") != "file":
        return
    counts = Counter(i.label for i in dataset.instances)
    for line in label_lines(dataset.meta, counts):
        console.print(line, highlight=False, soft_wrap=True, markup=False)
