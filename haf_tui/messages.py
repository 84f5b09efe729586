"""A chat message and the folding of a system message into the user's, shared by every method
and the inference layer (chat templates)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class ChatMessage:
    """One message of a chat prompt."""

    role: Role
    content: str

    def as_dict(self) -> dict[str, str]:
        """The OpenAI-style ``{"role", "content"}`` mapping chat templates expect."""
        return {"role": self.role, "content": self.content}


def fold_system_into_user(messages: Sequence[ChatMessage]) -> tuple[ChatMessage, ...]:
    """For chat templates without a system role: the instruction, a blank line, then the
    user message (``"<instruction>\\n\\n" + "\\nTEXT: \\n..."``), as the reference did."""
    folded: list[ChatMessage] = []
    pending_system: list[str] = []
    for message in messages:
        if message.role == "system":
            pending_system.append(message.content)
            continue
        if message.role == "user" and pending_system:
            content = "\n\n".join(pending_system) + "\n\n" + message.content
            folded.append(ChatMessage("user", content))
            pending_system = []
        else:
            folded.append(message)
    if pending_system:
        folded.append(ChatMessage("user", "\n\n".join(pending_system)))
    return tuple(folded)
