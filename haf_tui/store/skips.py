"""Skipped dataset rows as the store writes them: ``meta['skipped']`` becomes rows of
``skipped_rows`` and a count per reason in the dataset's metadata."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import duckdb


def skipped_payload(meta: dict[str, Any]) -> tuple[dict[str, Any], list[Sequence[Any]]]:
    """``meta`` without its ``skipped`` list (replaced by ``skipped_counts``), and that list."""
    rest = dict(meta)
    skipped = list(rest.pop("skipped", None) or [])
    if skipped:
        rest["skipped_counts"] = dict(Counter(str(s[1]) for s in skipped))
    return rest, skipped


def write_skipped(
    con: duckdb.DuckDBPyConnection, dataset_id: str, skipped: Sequence[Sequence[Any]]
) -> None:
    """Insert skipped rows ``(row, reason[, excerpt])`` of a dataset (inside a transaction)."""
    if skipped:
        con.execute(
            "INSERT OR IGNORE INTO skipped_rows SELECT ?, unnest(?::INTEGER[]), "
            "unnest(?::VARCHAR[]), unnest(?::VARCHAR[])",
            [
                dataset_id,
                [int(s[0]) for s in skipped],
                [str(s[1]) for s in skipped],
                [str(s[2]) if len(s) > 2 else None for s in skipped],
            ],
        )
