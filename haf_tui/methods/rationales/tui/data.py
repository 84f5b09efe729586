"""What the explorer's rationale view shows of one instance (``docs/methods/rationales.md``): its
word tokens, its rows of the ``rationales`` table, its annotators' gold and its
``rationale_*`` metrics, gathered by :func:`rationale_data`."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from haf_tui.methods.rationales.core.truth import Gold, word_units
from haf_tui.methods.rationales.suite.records import RationaleRecord


@dataclass(frozen=True)
class RationaleData:
    """What the view shows of one instance: its word tokens, its rows of the ``rationales``
    table, its annotators' gold (or why it has none) and its ``rationale_*`` metrics."""

    instance_id: str
    tokens: tuple[str, ...]
    rows: tuple[RationaleRecord, ...] = ()
    gold: Gold | None = None
    gold_problem: str | None = None
    metrics: Mapping[str, float | None] = field(default_factory=dict)
    answers: Mapping[int, str] = field(default_factory=dict)
    """The rationale prompts' raw answers by sub-index (0: the gold label shown, 1: ŷ)."""

    def row(self, source: str) -> RationaleRecord | None:
        """The row of a source (RANDOM: its first seed), or None."""
        return next((r for r in self.rows if r.source == source), None)

    @property
    def randoms(self) -> list[RationaleRecord]:
        """The RANDOM rows, one per seed."""
        return sorted((r for r in self.rows if r.source == "random"), key=lambda r: r.seed)

    @property
    def predicted(self) -> str | None:
        """ŷ on the full text (from the instance's metrics), or None."""
        toxic = self.metrics.get("rationale_toxic")
        if toxic is None or math.isnan(toxic):
            prompted = self.row("prompt_predicted")
            return prompted.label_shown if prompted else None
        return "toxic" if toxic >= 0.5 else "non-toxic"

    @property
    def gold_prompt_differs(self) -> bool:
        """Whether the rationale asked with the gold label shown is another than the one
        asked with ŷ shown (another label, or other words)."""
        gold, predicted = self.row("prompt_gold"), self.row("prompt_predicted")
        if gold is None:
            return False
        if predicted is None:
            return True
        return gold.label_shown != predicted.label_shown or list(gold.mask) != list(predicted.mask)


def rationale_data(
    instance_id: str,
    text: str,
    extra: Mapping[str, Any],
    rows: Sequence[RationaleRecord],
    metrics: Mapping[str, float | None] | None = None,
    answers: Mapping[int, str] | None = None,
) -> RationaleData:
    """The view's data of an instance: the word tokens are HateXplain's ``post_tokens`` when
    they make the text (the annotators' gold is then theirs), else ``text.split()``."""
    units = word_units(text, extra)
    return RationaleData(
        instance_id,
        units.tokens,
        tuple(rows),
        units.gold,
        units.problem,
        dict(metrics or {}),
        dict(answers or {}),
    )
