"""Sensitivity to explanation edits (``docs/methods/judge.md#56-sensitivity-to-edits``,
[D §4.3.1, Fig. 4.4]), offline on the tool's own toxicity explanations *(adaptation)*: pairs
(original, edited) and, for each edit and criterion, the % of pairs whose label changed. The
targeted criterion should change (equivariance: the diagonal high); the others should not
(invariance).

Two edits need no rewrite model:

- ``related``: the reasons of another, randomly drawn text (Related should go yes → no);
- ``new_info``: an explanation of more than 3 sentences cut to its first sentence, which has
  fewer than 150 characters (New information should fall).

Pure: reasons in, edited reasons out; codes in, rows out.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from haf_tui.methods.judge.core.criteria import CRITERION_IDS
from haf_tui.methods.judge.core.meta import Codes
from haf_tui.methods.judge.core.metrics import change_rate

Edit = Literal["related", "new_info"]
EDITS: Final[tuple[Edit, ...]] = ("related", "new_info")
TARGETS: Final[dict[Edit, str]] = {"related": "related", "new_info": "new_info"}
"""The criterion each edit targets."""
EDIT_SEPARATOR: Final = "~"
"""An edited instance's id: the original's id, this separator, the edit's name."""
MIN_SENTENCES: Final = 4
"""``new_info`` edits explanations of more than 3 sentences."""
MAX_FIRST_CHARS: Final = 150
"""… whose first sentence has fewer than 150 characters."""
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def sentences(reasons: Sequence[str]) -> list[str]:
    """The explanation's sentences: each reason split after ``.``, ``!`` or ``?`` followed
    by white space (a reason without an end mark is one sentence)."""
    found: list[str] = []
    for reason in reasons:
        found.extend(part.strip() for part in _SENTENCE_END.split(reason.strip()) if part.strip())
    return found


def truncated(reasons: Sequence[str]) -> list[str] | None:
    """The ``new_info`` edit: the first sentence alone, or None when the explanation is not a
    candidate (3 sentences or fewer, or a first sentence of 150 characters or more)."""
    found = sentences(reasons)
    if len(found) < MIN_SENTENCES or len(found[0]) >= MAX_FIRST_CHARS:
        return None
    return [found[0]]


def borrowed(
    reasons_by_item: Mapping[str, Sequence[str]], texts: Mapping[str, str], seed: int = 0
) -> dict[str, list[str]]:
    """The ``related`` edit: for each item (in the mapping's order), the reasons of another
    item drawn uniformly with ``seed`` among those with another text and other reasons. An
    item with no such partner gets no edit."""
    rng = random.Random(seed)
    ids = list(reasons_by_item)
    edited: dict[str, list[str]] = {}
    for item_id in ids:
        own = list(reasons_by_item[item_id])
        others = [
            other
            for other in ids
            if other != item_id
            and texts.get(other) != texts.get(item_id)
            and list(reasons_by_item[other]) != own
        ]
        if others:
            edited[item_id] = list(reasons_by_item[rng.choice(others)])
    return edited


def edited_id(item_id: str, edit: Edit) -> str:
    """The id of ``item_id``'s ``edit``."""
    return f"{item_id}{EDIT_SEPARATOR}{edit}"


def split_edited_id(instance_id: str) -> tuple[str, Edit | None]:
    """The original's id and the edit of an instance id (None: an original)."""
    head, separator, tail = instance_id.rpartition(EDIT_SEPARATOR)
    if separator and tail in EDITS:
        return head, tail
    return instance_id, None


@dataclass(frozen=True)
class SensitivityRow:
    """Fig. 4.4, one cell: of the ``n`` pairs (original and ``edit`` both labelled for
    ``criterion``), the % whose label changed; ``targeted``: the edit aims at this criterion
    (the diagonal: high is good; elsewhere low is good)."""

    edit: str
    criterion: str
    n: int
    changed: float | None
    targeted: bool


def sensitivity_matrix(codes: Codes) -> list[SensitivityRow]:
    """The matrix from a judge run's codes over an edits dataset (instance id → criterion →
    code; edited instances named by :func:`edited_id`): one row per edit present and
    criterion, in :data:`EDITS` and criterion order."""
    originals = {i: c for i, c in codes.items() if split_edited_id(i)[1] is None}
    pairs: dict[str, list[tuple[Mapping[str, int | None], Mapping[str, int | None]]]] = {}
    for instance_id, edited_codes in codes.items():
        original_id, edit = split_edited_id(instance_id)
        if edit is not None and original_id in originals:
            pairs.setdefault(edit, []).append((originals[original_id], edited_codes))
    rows: list[SensitivityRow] = []
    for edit in EDITS:
        if edit not in pairs:
            continue
        for crit_id in CRITERION_IDS:
            before = [a.get(crit_id) for a, _ in pairs[edit]]
            after = [b.get(crit_id) for _, b in pairs[edit]]
            n = sum(
                1 for x, y in zip(before, after, strict=True) if x is not None and y is not None
            )
            rows.append(
                SensitivityRow(
                    edit, crit_id, n, change_rate(before, after), TARGETS[edit] == crit_id
                )
            )
    return rows
