"""The toy method's own dataset format: a ``.toy`` file, one ``label<TAB>text`` a line."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from haf_tui.datasets.formats import DatasetFormat
from haf_tui.datasets.model import Dataset, DatasetError
from haf_tui.datasets.validation import DEFAULT_MAX_CHARS
from haf_tui.store.records import InstanceRecord


def load_toy(
    paths: Sequence[Path],
    *,
    name: str | None = None,
    encoding: str | None = None,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> Dataset:
    """Every ``label<TAB>text`` line an instance (a line without a tab: one line of error)."""
    (path,) = paths
    instances = []
    for number, line in enumerate(path.read_text(encoding=encoding or "utf-8").splitlines()):
        label, tab, text = line.partition("\t")
        if not tab:
            raise DatasetError(f"{path.name} line {number + 1}: no tab between label and text")
        instances.append(
            InstanceRecord(
                instance_id=f"t{number}", position=number, text=text[:max_chars], label=label
            )
        )
    return Dataset(f"toy-{path.stem}", name or path.stem, str(path), instances, [], {"kind": "toy"})


TOY_FORMAT = DatasetFormat(
    "toy-lines",
    "one label<TAB>text a line (the toy method's own)",
    load_toy,
    recognises=lambda path: path.suffix == ".toy",
)
