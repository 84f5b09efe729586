"""A grid's similarity models g (``similarity = [...]``): the first is the one every cell
generates with; each other re-scores every finished cell (``haf rescore``: a derived run of
the cell's run, nothing generated again), so the report can show how HAF's numbers move with g.

An entry is a name or path (a bi-encoder), or a table ``{ model = "...", kind =
"cross-encoder", label = "..." }``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from haf_tui.vocabulary import HafError


class SimilarityEntry(BaseModel):
    """One similarity model of the grid: its name or path, its kind and its label."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    label: str
    model: str
    kind: Literal["bi-encoder", "cross-encoder"] = "bi-encoder"


def parse_similarities(
    value: Any, grid_path: Path, error: Callable[[str], HafError]
) -> tuple[SimilarityEntry, ...]:
    """The grid's ``similarity`` list (a single entry is a list of one); ``error`` makes the
    grid's one-line error."""
    items = value if isinstance(value, list) else [value]
    entries: list[SimilarityEntry] = []
    for item in items:
        table = {"model": item} if isinstance(item, str) else item
        if not isinstance(table, dict) or not isinstance(table.get("model"), str):
            raise error(
                f"{grid_path}: similarity: a model name or path, or a table with model = "
                f'"..." (and kind, label), not {item!r}'
            )
        table = {"label": table["model"], **table}
        try:
            entries.append(SimilarityEntry.model_validate(table))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise error(
                f"{grid_path}: similarity {table['label']!r}: {where}: {first['msg']}"
            ) from exc
    labels = [entry.label for entry in entries]
    twice = next((label for label in labels if labels.count(label) > 1), None)
    if twice is not None:
        raise error(f"{grid_path}: two similarity models are labelled {twice!r}: give each a label")
    return tuple(entries)
