"""The batched engine's planning, now a pure module (``inference/batch_plan``), on sequences
made here (no model): which prompts copy a prefix from whom and in which level, and which
forced replies after one prompt ride on its logits or branch from it."""

from __future__ import annotations

from haf_tui.config import DecodingSettings
from haf_tui.inference.base import GenerationRequest
from haf_tui.inference.batch_plan import (
    MIN_SHARED_PREFIX,
    BatchSequence,
    common_prefix_length,
    place_branches,
    plan_prefixes,
    share_forced_prompts,
)
from haf_tui.inference.chat import RenderedPrompt

PROMPT = list(range(100, 100 + MIN_SHARED_PREFIX + 8))  # long enough to be copied


def seq(seq_id: int, tokens: list[int], forced_from: int = -1) -> BatchSequence:
    return BatchSequence(
        seq_id=seq_id,
        request=GenerationRequest((), DecodingSettings()),
        prompt=RenderedPrompt((), "chatml", False),
        prompt_tokens=tokens,
        max_new=8,
        sampler=None,
        started=0.0,
        forced_from=forced_from,
    )


def forced(seq_id: int, prompt: list[int], reply: list[int]) -> BatchSequence:
    return seq(seq_id, prompt + reply, forced_from=len(prompt))


def test_common_prefix_length() -> None:
    assert common_prefix_length([1, 2, 3, 4], [1, 2, 9]) == 2
    assert common_prefix_length([1, 2], [1, 2, 3]) == 2
    assert common_prefix_length([5], [6]) == 0
    assert common_prefix_length(list(range(50)), [*range(37), -1]) == 37


def test_forced_replies_after_one_prompt_share_it() -> None:
    one, two, three, three_too = (
        forced(0, PROMPT, [1]),
        forced(1, PROMPT, [2, 2]),
        forced(2, PROMPT, [3, 3, 3]),
        forced(3, PROMPT, [4, 4, 4]),
    )
    new = [one, two, three, three_too]
    branches, riders = share_forced_prompts(new, reuse_prefix=True)
    # the root: the most tokens, the first of them; a one-token reply rides on its logits
    assert riders == [one] and new == [two, three, three_too]
    assert branches == [two, three_too]
    assert three.siblings == [one, two, three_too]
    assert [s.first_read for s in (one, two, three, three_too)] == [True, True, False, True]


def test_a_short_prompt_is_not_branched_and_without_reuse_nothing_is_shared() -> None:
    short = PROMPT[: MIN_SHARED_PREFIX - 1]
    new = [forced(0, short, [1]), forced(1, short, [2, 2]), forced(2, short, [3, 3, 3])]
    branches, riders = share_forced_prompts(new, reuse_prefix=True)
    assert branches == [] and [s.seq_id for s in riders] == [0]  # (no copy: no cells)
    again = [forced(0, PROMPT, [1]), forced(1, PROMPT, [2, 2])]
    assert share_forced_prompts(again, reuse_prefix=False) == ([], [])
    assert len(again) == 2 and not again[0].first_read


def test_prompts_copy_from_the_cache_then_from_a_prompt_planned_before_in_a_later_level() -> None:
    cached = seq(9, [*PROMPT, 7, 7])
    cached.kv_tokens = cached.prompt_tokens[:]
    first = seq(0, [*PROMPT[:34], 1, 1, 1])
    more = [5] * (MIN_SHARED_PREFIX + 8)  # what second and third share beyond the cache
    second = seq(1, [*PROMPT, *more, 1])
    third = seq(2, [*PROMPT, *more, 2, 2])
    levels = plan_prefixes([third, first, second], [cached], reuse_prefix=True)
    # sorted by tokens: first (34 from the cache), second (all of PROMPT from the cache),
    # third (more from second, planned before it, than from the cache: one level later)
    assert [[s.seq_id for s in level] for level in levels] == [[0, 1], [2]]
    assert (first.reused, first.source) == (34, 9)
    assert (second.reused, second.source) == (len(PROMPT), 9)
    assert (third.reused, third.source) == (len(PROMPT) + len(more), 1)


def test_the_first_best_source_wins_and_a_prompt_in_the_cache_evaluates_its_last_two() -> None:
    cached = [seq(8, [*PROMPT, 7, 7]), seq(9, [*PROMPT, 7, 7])]
    for other in cached:
        other.kv_tokens = other.prompt_tokens[:]
    inside = seq(0, [*PROMPT, 7])  # all of it in the cache already
    plan_prefixes([inside], cached, reuse_prefix=True)
    assert (inside.reused, inside.source) == (len(PROMPT) - 1, 8)
    # a prompt planned before gains fewer than MIN_SHARED_PREFIX more: the cache's is copied
    first = seq(1, [*PROMPT, *[5] * (MIN_SHARED_PREFIX - 1), 1])
    second = seq(2, [*PROMPT, *[5] * (MIN_SHARED_PREFIX - 1), 2])
    levels = plan_prefixes([first, second], cached, reuse_prefix=True)
    assert levels == [[first, second]] and second.source == 8


def test_a_gain_under_the_minimum_is_evaluated_again() -> None:
    cached = seq(9, PROMPT[:])
    cached.kv_tokens = cached.prompt_tokens[:]
    short = seq(0, [*PROMPT[: MIN_SHARED_PREFIX - 1], 1, 1])
    levels = plan_prefixes([short], [cached], reuse_prefix=True)
    assert levels == [[short]] and (short.reused, short.source) == (0, -1)
    alone = seq(1, [*PROMPT, 1])
    assert plan_prefixes([alone], [cached], reuse_prefix=False) == [[alone]]
    assert alone.reused == 0


def test_a_branch_is_evaluated_one_level_after_its_root() -> None:
    root, branch = forced(0, PROMPT, [3, 3, 3]), forced(1, PROMPT, [2, 2])
    new = [root, branch]
    branches, _ = share_forced_prompts(new, reuse_prefix=True)
    levels = plan_prefixes([s for s in new if s not in branches], [], reuse_prefix=True)
    place_branches(levels, branches)
    assert levels == [[root], [branch]]
    assert (branch.reused, branch.source) == (len(PROMPT) - 1, 0)
