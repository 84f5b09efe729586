"""Rows compared to the last bit, a value at a time: a difference is one short line naming
the table, the row and the column (a ``repr`` of whole tables compared by ``assert ==`` had
pytest diff two 100,000-character strings, which ran for minutes instead of failing)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

SHOWN = 120
"""The most characters of a differing value the failure shows."""


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= SHOWN else f"{text[:SHOWN]}… ({len(text)} chars)"


def assert_same_rows(
    got: Sequence[Sequence[Any]], expected: Sequence[Sequence[Any]], what: str
) -> None:
    """Fail in one line unless ``got`` holds ``expected``'s rows, each value's ``repr`` (its
    type and last bit; NaN equal to NaN) the same."""
    if len(got) != len(expected):
        pytest.fail(f"{what}: {len(got)} rows, expected {len(expected)}", pytrace=False)
    for number, (row, want) in enumerate(zip(got, expected, strict=True)):
        if len(row) != len(want):
            pytest.fail(
                f"{what} row {number}: {len(row)} values, expected {len(want)}", pytrace=False
            )
        for column, (value, wanted) in enumerate(zip(row, want, strict=True)):
            if repr(value) != repr(wanted):
                pytest.fail(
                    f"{what} row {number} column {column}: {_short(value)} != {_short(wanted)}",
                    pytrace=False,
                )
