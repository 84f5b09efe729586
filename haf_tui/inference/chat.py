"""Chat prompts as text segments: template text (may hold special tokens) and user content
(always tokenized as plain text, so a dataset text containing ``<start_of_turn>`` or
``<|eot_id|>`` reaches the model as those characters, never as control tokens).

The GGUF's own chat template is used when it has one (rendered with Jinja2); otherwise a
named format. A template without a system role gets the instruction folded into the user
message (:func:`haf_tui.messages.fold_system_into_user`), checked on the rendered prompt.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from haf_tui.inference.base import InferenceError
from haf_tui.messages import ChatMessage, fold_system_into_user


@dataclass(frozen=True)
class PromptSegment:
    """A piece of the rendered prompt; ``plain`` pieces are user content."""

    text: str
    plain: bool


@dataclass(frozen=True)
class RenderedPrompt:
    """The full prompt text and its segments, and the chat format that made it."""

    segments: tuple[PromptSegment, ...]
    chat_format: str
    folded_system: bool

    @property
    def text(self) -> str:
        """The exact prompt text given to the model."""
        return "".join(segment.text for segment in self.segments)


def _gemma(messages: Sequence[ChatMessage]) -> list[PromptSegment]:
    segments: list[PromptSegment] = []
    for message in messages:
        role = "model" if message.role == "assistant" else "user"
        segments += [
            PromptSegment(f"<start_of_turn>{role}\n", False),
            PromptSegment(message.content, True),
            PromptSegment("<end_of_turn>\n", False),
        ]
    return [*segments, PromptSegment("<start_of_turn>model\n", False)]


def _chatml(messages: Sequence[ChatMessage]) -> list[PromptSegment]:
    segments: list[PromptSegment] = []
    for message in messages:
        segments += [
            PromptSegment(f"<|im_start|>{message.role}\n", False),
            PromptSegment(message.content, True),
            PromptSegment("<|im_end|>\n", False),
        ]
    return [*segments, PromptSegment("<|im_start|>assistant\n", False)]


def _llama3(messages: Sequence[ChatMessage]) -> list[PromptSegment]:
    segments: list[PromptSegment] = []
    for message in messages:
        segments += [
            PromptSegment(f"<|start_header_id|>{message.role}<|end_header_id|>\n\n", False),
            PromptSegment(message.content, True),
            PromptSegment("<|eot_id|>", False),
        ]
    return [*segments, PromptSegment("<|start_header_id|>assistant<|end_header_id|>\n\n", False)]


# name -> (renderer, whether the format has a system role)
NAMED_FORMATS: dict[str, tuple[Callable[[Sequence[ChatMessage]], list[PromptSegment]], bool]] = {
    "gemma": (_gemma, False),
    "chatml": (_chatml, True),
    "llama-3": (_llama3, True),
}


def render_named(messages: Sequence[ChatMessage], chat_format: str) -> RenderedPrompt:
    """Render with a named format (``gemma``, ``chatml``, ``llama-3``)."""
    if chat_format not in NAMED_FORMATS:
        known = ", ".join(sorted(NAMED_FORMATS))
        raise InferenceError(f"unknown chat format {chat_format!r}: choose one of {known}")
    renderer, has_system = NAMED_FORMATS[chat_format]
    fold = not has_system and any(m.role == "system" for m in messages)
    final = fold_system_into_user(messages) if fold else tuple(messages)
    return RenderedPrompt(tuple(renderer(final)), chat_format, fold)


@lru_cache(maxsize=8)
def _compiled_template(template: str) -> Any:
    """A GGUF chat template compiled once, in a sandbox (compiling at every prompt took ~1.5 s
    of a rationales post's ~9.6 s here: ~140 prompts a post)."""
    from jinja2 import TemplateError
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message: str) -> None:
        raise TemplateError(message)

    environment = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    environment.globals["raise_exception"] = raise_exception
    return environment.from_string(template)


def _render_jinja(template: str, messages: Sequence[ChatMessage], bos: str, eos: str) -> str:
    return str(
        _compiled_template(template).render(
            messages=[m.as_dict() for m in messages],
            add_generation_prompt=True,
            bos_token=bos,
            eos_token=eos,
        )
    )


def _split_contents(rendered: str, messages: Sequence[ChatMessage]) -> list[PromptSegment] | None:
    """Mark where each message's content lies in the rendered text (templates may trim it)."""
    segments: list[PromptSegment] = []
    cursor = 0
    for message in messages:
        for candidate in (message.content, message.content.strip()):
            position = rendered.find(candidate, cursor) if candidate else -1
            if position >= 0:
                segments.append(PromptSegment(rendered[cursor:position], False))
                segments.append(PromptSegment(candidate, True))
                cursor = position + len(candidate)
                break
        else:
            return None
    segments.append(PromptSegment(rendered[cursor:], False))
    return [s for s in segments if s.text]


def render_template(
    messages: Sequence[ChatMessage], template: str, *, bos: str = "", eos: str = ""
) -> RenderedPrompt:
    """Render with a GGUF's Jinja2 chat template; fold the system message into the user
    message when the template rejects or drops it."""
    from jinja2 import TemplateError

    try:
        segments = _split_contents(_render_jinja(template, messages, bos, eos), messages)
    except TemplateError:
        segments = None
    if segments is not None:
        return RenderedPrompt(tuple(segments), "gguf-template", False)
    folded = fold_system_into_user(messages)
    try:
        segments = _split_contents(_render_jinja(template, folded, bos, eos), folded)
    except TemplateError as exc:
        raise InferenceError(f"the model's chat template failed: {exc}") from exc
    if segments is None:
        raise InferenceError("the model's chat template drops message contents")
    return RenderedPrompt(tuple(segments), "gguf-template", True)
