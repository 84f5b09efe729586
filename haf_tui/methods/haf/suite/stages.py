"""The stages of HAF as small plug-ins: each says which generations an instance needs.

A stage turns an instance (and, after JUSTIFY, its stance and reasons) into generation
tasks; :class:`HafPlan` asks JUSTIFY first, then the follow-up stages of the run once the
answer is parsed. A new stage plugs in by adding a :class:`Stage` to :data:`STAGES`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from haf_tui.methods.base import Reply, Task
from haf_tui.methods.haf.core.parsing import JustifyParse, parse_justify
from haf_tui.methods.haf.core.prompts import (
    RelianceKind,
    justify_messages,
    reliance_messages,
    stance_prompts,
)
from haf_tui.vocabulary import Rules, Stance

GenerationTask = Task


@dataclass(frozen=True)
class JustifyOutcome:
    """What the later stages need from JUSTIFY."""

    stance: Stance
    reasons: tuple[str, ...]

    @property
    def stopped(self) -> str | None:
        """Why the later stages do not run for this instance (None: they do)."""
        if self.stance == "unclear":
            return "unclear stance"
        return None if self.reasons else "no reasons"

    @property
    def followups(self) -> int:
        """How many reasons the later stages work on (0 when stopped)."""
        return 0 if self.stopped else len(self.reasons)


class Stage(Protocol):
    """A stage of the pipeline."""

    @property
    def name(self) -> str:
        """The stage id stored with its generations."""
        ...

    def tasks(
        self, text: str, justify: JustifyOutcome | None, explicit: bool
    ) -> Sequence[GenerationTask]:
        """The generations this stage needs for one instance."""
        ...


@dataclass(frozen=True)
class JustifyStage:
    """JUSTIFY: is the text toxic, and why."""

    name: str = "justify"

    def tasks(
        self, text: str, justify: JustifyOutcome | None, explicit: bool
    ) -> Sequence[GenerationTask]:
        """One prompt per instance."""
        return [GenerationTask(self.name, -1, None, justify_messages(text, explicit=explicit))]


@dataclass(frozen=True)
class RelianceStage:
    """UPHOLD-REASON, internal or external: are more reasons needed beyond R?"""

    name: str

    def tasks(
        self, text: str, justify: JustifyOutcome | None, explicit: bool
    ) -> Sequence[GenerationTask]:
        """One prompt showing all JUSTIFY reasons."""
        assert justify is not None
        kind: RelianceKind = "internal" if self.name == "internal" else "external"
        messages = reliance_messages(text, justify.reasons, justify.stance, kind, explicit=explicit)
        return [GenerationTask(self.name, -1, None, messages)]


@dataclass(frozen=True)
class IndividualStage:
    """UPHOLD-STANCE: SUF (one reason) or NEC (leave one out) per JUSTIFY reason."""

    name: str = "individual"

    def tasks(
        self, text: str, justify: JustifyOutcome | None, explicit: bool
    ) -> Sequence[GenerationTask]:
        """One sub-prompt per JUSTIFY reason."""
        assert justify is not None
        return [
            GenerationTask(self.name, p.reason_index, p.test, p.messages)
            for p in stance_prompts(text, justify.reasons, justify.stance)
        ]


STAGES: dict[str, Stage] = {
    "justify": JustifyStage(),
    "internal": RelianceStage("internal"),
    "external": RelianceStage("external"),
    "individual": IndividualStage(),
}


class HafPlan:
    """One instance's HAF work: JUSTIFY, then (unless it stopped) the run's follow-up stages."""

    def __init__(self, text: str, stages: Sequence[str], *, explicit: bool, rules: Rules):
        self.text = text
        self.stages = tuple(stages)
        self.explicit = explicit
        self.rules = rules
        self.outcome: JustifyOutcome | None = None

    def start(self) -> Sequence[GenerationTask]:
        """JUSTIFY."""
        return STAGES["justify"].tasks(self.text, None, self.explicit)

    def advance(
        self, task: GenerationTask, reply: Reply
    ) -> tuple[Sequence[GenerationTask], JustifyParse | None]:
        """After JUSTIFY, its parse and the follow-up tasks (none when it stopped)."""
        if task.stage != "justify":
            return [], None
        parsed = parse_justify(reply.text, rules=self.rules)
        outcome = self.outcome = JustifyOutcome(
            parsed.stance, tuple(r.text for r in parsed.reasons)
        )
        if outcome.stopped:
            return [], parsed
        followups = [
            followup
            for name in self.stages[1:]
            for followup in STAGES[name].tasks(self.text, outcome, self.explicit)
        ]
        return followups, parsed

    def open_stages(self) -> tuple[str, ...]:
        """Until JUSTIFY is known: its follow-up stages (JUSTIFY itself is one generation)."""
        return () if self.outcome is not None else self.stages[1:]

    def planned(self) -> dict[str, int] | None:
        """Generations per stage, once JUSTIFY is known."""
        if self.outcome is None:
            return None
        n = self.outcome.followups
        return {
            name: 1 if name == "justify" else n if name == "individual" else int(n > 0)
            for name in self.stages
        }
