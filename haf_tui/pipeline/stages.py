"""The stages of HAF as small plug-ins: each says which generations an instance needs.

A stage turns an instance (and, after JUSTIFY, its stance and reasons) into generation
tasks; the runner generates, parses and stores them. A new stage plugs in by adding a
:class:`Stage` to :data:`STAGES` without touching the others.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from haf_tui.prompts import (
    ChatMessage,
    RelianceKind,
    justify_messages,
    reliance_messages,
    stance_prompts,
)
from haf_tui.vocabulary import Stance


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


@dataclass(frozen=True)
class GenerationTask:
    """One prompt to generate: its stage, sub-prompt index (-1: none) and SUF/NEC test."""

    stage: str
    sub_index: int
    test: str | None
    messages: tuple[ChatMessage, ...]


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
