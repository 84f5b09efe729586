"""The batched engine's planning (:mod:`haf_tui.inference.batched`): which new prompts copy a
prefix from a sequence already in the KV cache or from another prompt of the same round, in
levels evaluated one after the other, and which forced replies share one prompt. Pure: it
reads and marks the sequences; the engine does the copies and the decodes.

Prefix reuse: a new prompt that shares a token prefix with a sequence already in the KV cache
(a live sequence, or another prompt admitted in the same round) gets that prefix by
``llama_memory_seq_cp`` instead of evaluating it again: the UPHOLD-STANCE sub-prompts of one
instance share the system message and the TEXT, and every prompt shares the system message.
Forced replies after one prompt (a text's label spellings) share more: one evaluates the
prompt, its last position's logits give every reply's first token, and only the replies
with more tokens get sequences of their own (:func:`share_forced_prompts`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from haf_tui.inference.base import GeneratedToken, GenerationRequest, TokenTextAssembler
from haf_tui.inference.chat import RenderedPrompt

MIN_SHARED_PREFIX = 32
"""Shorter common prefixes are evaluated again: a copy moves the whole KV stream of the source."""


@dataclass(eq=False)
class BatchSequence:
    """One request in flight: its slot (none for a rider, see
    :func:`share_forced_prompts`), tokens in the KV cache and output so
    far."""

    seq_id: int
    request: GenerationRequest
    prompt: RenderedPrompt
    prompt_tokens: list[int]
    max_new: int
    sampler: Any
    started: float
    kv_tokens: list[int] = field(default_factory=list)
    tokens: list[GeneratedToken] = field(default_factory=list)
    assembler: TokenTextAssembler = field(default_factory=TokenTextAssembler)
    pending: int = -1
    prompt_seconds: float = 0.0
    reused: int = 0
    source: int = -1
    forced_from: int = -1  # a forced reply: where its tokens start in prompt_tokens (-1: none)
    siblings: list[BatchSequence] = field(default_factory=list)
    """Forced replies after the same prompt whose first token is read from this sequence's
    logits (see :func:`share_forced_prompts`)."""
    first_read: bool = False  # its first forced token was read from a sibling's logits

    @property
    def first_output(self) -> int:
        """The first position whose logits are read: the last prompt token (sampling), or the
        one before a forced reply's first token (the first token itself when that one was
        read from a sibling's logits)."""
        if self.forced_from >= 0:
            return self.forced_from - (0 if self.first_read else 1)
        return len(self.prompt_tokens) - 1

    @property
    def evaluated_end(self) -> int:
        """Where evaluation stops: the whole prompt (sampling), all but a forced reply's last
        token (nothing follows it)."""
        return len(self.prompt_tokens) - (1 if self.forced_from >= 0 else 0)


def common_prefix_length(a: list[int], b: list[int]) -> int:
    """How many leading tokens ``a`` and ``b`` share."""
    limit = min(len(a), len(b))
    if a[:limit] == b[:limit]:
        return limit
    low, high = 0, limit  # a[:low] == b[:low] and a[:high] != b[:high]
    while high - low > 1:
        middle = (low + high) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle
    return low


def share_forced_prompts(
    new: list[BatchSequence], reuse_prefix: bool
) -> tuple[list[BatchSequence], list[BatchSequence]]:
    """Forced replies after one prompt (a text's label spellings) share it: the one with
    the most tokens (the root) evaluates the prompt, and the logits of its last prompt
    position give every reply's first token. A one-token reply then needs nothing more
    (it takes no slot and no KV cell); a longer one (a branch) copies the root's prompt
    and evaluates from the last prompt token on. The branches are returned, and the riders
    (taken out of ``new``: the engine frees their slots).

    The four spellings of the classify prompt (``toxic`` one token, ``Toxic`` two,
    ``non-toxic`` and ``Non-toxic`` three with SmolLM2) so evaluate 7 tokens after the
    prompt instead of 11, in three sequences instead of four."""
    by_prompt: dict[tuple[int, ...], list[BatchSequence]] = {}
    for seq in new:
        if seq.forced_from >= 1:
            by_prompt.setdefault(tuple(seq.prompt_tokens[: seq.forced_from]), []).append(seq)
    branches: list[BatchSequence] = []
    riders: list[BatchSequence] = []
    for group in by_prompt.values():
        if len(group) < 2 or not reuse_prefix:
            continue
        root = max(group, key=lambda s: (len(s.prompt_tokens), -group.index(s)))
        for seq in group:
            if seq is root:
                continue
            if len(seq.prompt_tokens) - seq.forced_from > 1:
                if seq.forced_from - 1 < MIN_SHARED_PREFIX:
                    continue  # too short to copy (a whole stream): planned as any prompt
                root.siblings.append(seq)
                seq.first_read = True
                branches.append(seq)
                continue
            root.siblings.append(seq)
            seq.first_read = True
            new.remove(seq)  # a rider: read from the root, no slot of its own
            riders.append(seq)
    return branches, riders


def plan_prefixes(
    new: list[BatchSequence], in_cache: list[BatchSequence], reuse_prefix: bool
) -> list[list[BatchSequence]]:
    """Which new sequences copy a prefix, and from whom, in levels evaluated one after the
    other: sequences already in the KV cache (``in_cache``) first; a prompt may also copy from
    a prompt of this round planned before it (one level later than that one), when that gains more
    than :data:`MIN_SHARED_PREFIX` tokens over the cache. (Forced replies to one prompt
    share it before this: only their root is planned here, see
    :func:`share_forced_prompts`.)"""
    planned: list[tuple[BatchSequence, int]] = []  # (sequence, its level)
    levels: list[list[BatchSequence]] = []
    for seq in sorted(new, key=lambda s: s.prompt_tokens):
        best, source, level = 0, -1, 0
        if reuse_prefix:
            for other in in_cache:
                shared = common_prefix_length(seq.prompt_tokens, other.kv_tokens)
                if shared > best:
                    best, source = shared, other.seq_id
            from_cache = best
            for other, other_level in planned:
                shared = common_prefix_length(seq.prompt_tokens, other.prompt_tokens)
                if shared > max(best, from_cache + MIN_SHARED_PREFIX):
                    best, source, level = shared, other.seq_id, other_level + 1
        # A forced reply needs the logits from its prompt's last token on. And at least two
        # tokens are evaluated after a copy: llama.cpp 0.3.36 gave a sequence that copied
        # all but its last prompt token and decoded that one alone logprobs up to 0.29
        # nats off (SmolLM2 135M, paper-sample texts; evaluating two: equal to alone).
        best = min(best, seq.first_output - 1)
        if best >= MIN_SHARED_PREFIX:
            seq.reused, seq.source = best, source
        else:
            level = 0
        planned.append((seq, level))
        while len(levels) <= level:
            levels.append([])
        levels[level].append(seq)
    return levels


def place_branches(levels: list[list[BatchSequence]], branches: list[BatchSequence]) -> None:
    """Put each branch (see :func:`share_forced_prompts`) in the level after its root's: a
    branch copies its root's prompt up to the reply's first token."""
    for root_level, group in enumerate(list(levels)):
        for root in group:
            for branch in root.siblings:
                if branch in branches:
                    branch.reused, branch.source = branch.forced_from - 1, root.seq_id
                    while len(levels) <= root_level + 1:
                        levels.append([])
                    levels[root_level + 1].append(branch)
