"""What the judge suite asks of one explanation (spec ``JUDGE.md`` §1, §4.3).

Constrained (the default): the answer format is forced slot by slot. For criterion k the
reply so far (``1. a`` … ``k. ``, each earlier slot with its chosen label) is given and every
allowed label is teacher-forced after it; the label with the highest log-probability fills
the slot and the next slot follows. Sub-index = 10 × slot + label index. Free: one greedy
answer, parsed by the rules of §4.2 (sub-index 0).

An instance without a judge item (``extra["judge_item"]``: a run's explanations, ``--dataset
run:RUN_ID``, or an ACORN import) has nothing to rate. The plan is a pure function of the
instance, the settings and the answers: the suite's results replay them through a new plan.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from haf_tui.config import RunConfig
from haf_tui.judge.criteria import Criterion, label_names
from haf_tui.judge.prompts import JudgeItem, judge_messages, numbered_criteria
from haf_tui.judge.scores import LabelScores, label_scores
from haf_tui.prompts import ChatMessage
from haf_tui.store.records import InstanceRecord
from haf_tui.suites.base import Reply, Task

STAGE: Final = "judge"
SLOT: Final = 10
"""Sub-index = SLOT × slot + label index."""


class JudgePlan:
    """One explanation's judging."""

    def __init__(self, instance: InstanceRecord, config: RunConfig):
        self.settings = config.judge
        self.item = JudgeItem.from_extra(instance.extra.get("judge_item"))
        wording = self.settings.prompt
        # the answer format's numbering: Default's, but for the Shuffled wording its own
        self.slots: tuple[tuple[int, Criterion], ...] = numbered_criteria(
            wording if wording not in ("default", "verbatim") else "default"
        )
        self.messages: tuple[ChatMessage, ...] = (
            judge_messages(self.item, self.settings.prompt) if self.item else ()
        )
        self.logprobs: dict[int, dict[int, float]] = {}
        self.chosen: dict[int, str] = {}
        self.free_answer: str | None = None

    def labels(self, slot: int) -> tuple[str, ...]:
        """The labels slot ``slot`` allows."""
        assert self.item is not None
        return label_names(self.slots[slot][1], len(self.item.choices))

    def prefix(self, slot: int) -> str:
        """The reply up to slot ``slot``'s label: the earlier lines with their labels."""
        lines = [f"{self.slots[s][0]}. {self.chosen[s]}\n" for s in range(slot)]
        return "".join(lines) + f"{self.slots[slot][0]}. "

    def _slot_tasks(self, slot: int) -> list[Task]:
        prefix = self.prefix(slot)
        return [
            Task(STAGE, SLOT * slot + index, None, self.messages, forced=label, reply_prefix=prefix)
            for index, label in enumerate(self.labels(slot))
        ]

    def start(self) -> Sequence[Task]:
        """The first slot's labels (constrained) or the free answer; nothing without an item."""
        if self.item is None:
            return []
        if self.settings.mode == "free":
            return [
                Task(
                    STAGE,
                    0,
                    None,
                    self.messages,
                    greedy=True,
                    max_new_tokens=self.settings.max_new_tokens,
                )
            ]
        return self._slot_tasks(0)

    def advance(self, task: Task, reply: Reply) -> tuple[Sequence[Task], object]:
        """Record a label's log-probability; once a slot's are all in, fill it and ask for
        the next one."""
        if self.settings.mode == "free":
            self.free_answer = reply.text
            return [], None
        slot, index = divmod(task.sub_index, SLOT)
        scored = self.logprobs.setdefault(slot, {})
        scored[index] = reply.logprob_sum
        labels = self.labels(slot)
        if len(scored) < len(labels) or slot in self.chosen:
            return [], None
        self.chosen[slot] = self.scores(slot).label
        if slot + 1 < len(self.slots):
            return self._slot_tasks(slot + 1), None
        return [], None

    def scores(self, slot: int) -> LabelScores:
        """Slot ``slot``'s distribution, label, mass and expected score."""
        labels = self.labels(slot)
        lps = self.logprobs[slot]
        return label_scores(self.slots[slot][1], {labels[i]: lp for i, lp in lps.items()})

    def planned(self) -> dict[str, int]:
        """Every label of every slot (constrained), or one answer."""
        if self.item is None:
            return {}
        if self.settings.mode == "free":
            return {STAGE: 1}
        return {STAGE: sum(len(self.labels(s)) for s in range(len(self.slots)))}
