"""Issue 42 §6: what a streamed import keeps of a whole file, in bounded memory: a label
column's values summed up as they come (:class:`ColumnValues`, not a list), duplicate ids
and texts told by 16-byte digests in a :class:`DigestSet` (a Python set of them took ~90
bytes a row)."""

from __future__ import annotations

import pytest

from haf_tui.datasets.label_values import KEPT_KEYS, ColumnValues
from haf_tui.datasets.labels import NotALabelError, guess_rule, stated_rule
from haf_tui.datasets.validation import DUPLICATE_TEXT, DigestSet, RowValidator, text_key


def test_a_column_of_many_values_is_summed_up_in_bounded_memory() -> None:
    values = [f"value {k}" for k in range(KEPT_KEYS + 50)]
    seen = ColumnValues.of(values)
    assert seen.more_keys and len(seen.keys) == KEPT_KEYS + 1 and seen.n_present == len(values)
    with pytest.raises(NotALabelError, match=r"free text \(more than 10,000 different values"):
        guess_rule(seen, "comment")
    few = ColumnValues.of([*values[:KEPT_KEYS], None, "", "NaN"])  # (missing cells: none)
    assert not few.more_keys and few.shown_count() == "10000" and few.n_present == KEPT_KEYS
    with pytest.raises(
        NotALabelError, match=r"free text \(10000 different values, e\.g\. 'value 0'"
    ):
        stated_rule(few, "comment", label_map=["toxic=value-1"])
    numbers = ColumnValues.of(["0", 1, "1.0", True, "x", 0.0])
    assert (numbers.n_numbers, numbers.low, numbers.high, numbers.only_01) == (4, 0.0, 1.0, True)
    assert (numbers.any_bool, numbers.first_non_number, numbers.first) == (True, True, "0")


def test_a_duplicate_text_is_the_same_text_exactly() -> None:
    validator = RowValidator()
    reasons = [
        validator.reason(text, f"i{k}", None)
        for k, text in enumerate(
            ["a post", "a post ", "A post", "a post", "a p\u00f6st", "a po\u0308st"]
        )
    ]
    assert reasons == [None, None, None, DUPLICATE_TEXT, None, None]
    assert text_key("a post") == text_key("a post") != text_key("a post ")


@pytest.mark.timeout(120)  # (a probe that never ends: a table that filled up)
def test_a_digest_set_keeps_every_digest_as_it_grows() -> None:
    digests = DigestSet(slots=4)
    keys = [text_key(f"text {k}") for k in range(5000)]  # (it doubles eleven times)
    for key in keys:
        assert key not in digests
        digests.add(key)
    for key in keys[::7]:
        digests.add(key)  # (again: nothing changes)
    assert len(digests) == 5000 and all(key in digests for key in keys)
    assert text_key("text 5000") not in digests
    # digests that ask for one slot: the first and (past it, wrapping to the start) the last
    first = [bytes([1]) + bytes(14) + bytes([k]) for k in range(1, 40)]
    last = [bytes([255] * 8) + bytes(7) + bytes([k]) for k in range(1, 40)]
    zero = bytes(16)  # (what marks an empty slot: kept aside)
    assert zero not in digests
    for key in [*first, *last, zero]:
        digests.add(key)
    assert all(key in digests for key in [*keys, *first, *last, zero])
    assert len(digests) == 5000 + 2 * 39 + 1
