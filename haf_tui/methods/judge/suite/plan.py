"""What the judge suite asks of one explanation (``docs/methods/judge.md#1-the-stage``,
``docs/methods/judge.md#43-constrained-answers``).

Constrained (the default): the answer format is forced slot by slot. For criterion k the
reply so far (``1. a`` … ``k. ``, each earlier slot with its chosen label) is given and every
allowed label is teacher-forced after it; the label with the highest log-probability fills
the slot and the next slot follows: what greedy decoding under the GBNF grammar of
:mod:`haf_tui.methods.judge.core.grammar` gives. Sub-index = 10 × slot + label index. Free:
one greedy answer, parsed by the rules of §4.2 (sub-index 0).

Single-criterion calls (``calls = "single"``): each criterion is asked alone, its prompt
carrying only that criterion; constrained, its reply prefix is just ``k. `` and the eight
slots are independent (all asked at once); free, one greedy answer per criterion
(sub-index 10 × slot).

An instance without a judge item (``extra["judge_item"]``: a run's explanations, ``--dataset
run:RUN_ID``, or an ACORN import) has nothing to rate. The plan is a pure function of the
instance, the settings and the answers: the suite's results replay them through a new plan.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from haf_tui.config import RunConfig
from haf_tui.messages import ChatMessage
from haf_tui.methods.base import Reply, Task
from haf_tui.methods.judge.core.criteria import Criterion, label_names
from haf_tui.methods.judge.core.prompts import JudgeItem, judge_messages, numbered_criteria
from haf_tui.methods.judge.core.scores import LabelScores, label_scores
from haf_tui.methods.judge.settings import judge_settings
from haf_tui.store.records import InstanceRecord

STAGE: Final = "judge"
SLOT: Final = 10
"""Sub-index = SLOT × slot + label index."""


class JudgePlan:
    """One explanation's judging."""

    def __init__(self, instance: InstanceRecord, config: RunConfig):
        self.settings = judge_settings(config)
        self.item = JudgeItem.from_extra(instance.extra.get("judge_item"))
        wording = self.settings.prompt
        # the answer format's numbering: Default's, but for the Shuffled wording its own
        self.slots: tuple[tuple[int, Criterion], ...] = numbered_criteria(
            wording if wording not in ("default", "verbatim") else "default"
        )
        self.single = self.settings.calls == "single"
        self.messages: tuple[ChatMessage, ...] = (
            judge_messages(self.item, self.settings.prompt) if self.item else ()
        )
        self.logprobs: dict[int, dict[int, float]] = {}
        self.chosen: dict[int, str] = {}
        self.free_answers: dict[int, str] = {}
        """Free mode: the answer of each call (slot 0 alone for compound calls)."""

    def slot_messages(self, slot: int) -> tuple[ChatMessage, ...]:
        """The conversation slot ``slot`` is asked in: the compound one, or (single calls)
        one carrying only its criterion."""
        if not self.single:
            return self.messages
        assert self.item is not None
        return judge_messages(self.item, self.settings.prompt, only=self.slots[slot][1].id)

    def labels(self, slot: int) -> tuple[str, ...]:
        """The labels slot ``slot`` allows."""
        assert self.item is not None
        return label_names(self.slots[slot][1], len(self.item.choices))

    def prefix(self, slot: int) -> str:
        """The reply up to slot ``slot``'s label: the earlier lines with their labels (single
        calls: none)."""
        earlier = () if self.single else range(slot)
        lines = [f"{self.slots[s][0]}. {self.chosen[s]}\n" for s in earlier]
        return "".join(lines) + f"{self.slots[slot][0]}. "

    def _slot_tasks(self, slot: int) -> list[Task]:
        prefix = self.prefix(slot)
        messages = self.slot_messages(slot)
        return [
            Task(STAGE, SLOT * slot + index, None, messages, forced=label, reply_prefix=prefix)
            for index, label in enumerate(self.labels(slot))
        ]

    def _free_task(self, slot: int) -> Task:
        return Task(
            STAGE,
            SLOT * slot,
            None,
            self.slot_messages(slot),
            greedy=True,
            max_new_tokens=self.settings.max_new_tokens,
        )

    def start(self) -> Sequence[Task]:
        """The first slot's labels (constrained; single calls: every slot's) or the free
        answer(s); nothing without an item."""
        if self.item is None:
            return []
        calls = range(len(self.slots)) if self.single else range(1)
        if self.settings.mode == "free":
            return [self._free_task(slot) for slot in calls]
        return [task for slot in calls for task in self._slot_tasks(slot)]

    def advance(self, task: Task, reply: Reply) -> tuple[Sequence[Task], object]:
        """Record a label's log-probability; once a slot's are all in, fill it and ask for
        the next one."""
        slot, index = divmod(task.sub_index, SLOT)
        if self.settings.mode == "free":
            self.free_answers[slot] = reply.text
            return [], None
        scored = self.logprobs.setdefault(slot, {})
        scored[index] = reply.logprob_sum
        labels = self.labels(slot)
        if len(scored) < len(labels) or slot in self.chosen:
            return [], None
        self.chosen[slot] = self.scores(slot).label
        if not self.single and slot + 1 < len(self.slots):
            return self._slot_tasks(slot + 1), None
        return [], None

    def scores(self, slot: int) -> LabelScores:
        """Slot ``slot``'s distribution, label, mass and expected score."""
        labels = self.labels(slot)
        lps = self.logprobs[slot]
        return label_scores(self.slots[slot][1], {labels[i]: lp for i, lp in lps.items()})

    def planned(self) -> dict[str, int]:
        """Every label of every slot (constrained), or one answer per call."""
        if self.item is None:
            return {}
        if self.settings.mode == "free":
            return {STAGE: len(self.slots) if self.single else 1}
        return {STAGE: sum(len(self.labels(s)) for s in range(len(self.slots)))}
