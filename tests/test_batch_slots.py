"""The batched engine's slots (``inference/batch_slots``) on sequences made here and a
recording stand-in for llama.cpp's memory calls: a finished sequence's cells stay in its
slot, the next prompt that begins as they do takes that slot and keeps them, and a slot is
cleared only when needed. (The real engine: tests/test_batched_real.py.)"""

from __future__ import annotations

from typing import Any

from haf_tui.inference.batch_plan import KeptCells
from haf_tui.inference.batch_slots import Slots
from tests.test_batch_plan import seq


class MemoryCalls:
    """Records ``llama_memory_seq_rm`` and ``llama_memory_seq_cp`` as (name, args)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []

    def llama_memory_seq_rm(self, memory: Any, *args: Any) -> bool:
        self.calls.append(("rm", args))
        return True

    def llama_memory_seq_cp(self, memory: Any, *args: Any) -> None:
        self.calls.append(("cp", args))


PROMPT = list(range(100, 150))


def _finished(slots: Slots, tokens: list[int]) -> int:
    """A sequence that took a slot, held ``tokens`` in its cells, and finished."""
    done = seq(-1, tokens)
    done.seq_id = slots.take(done)
    done.kv_tokens = list(tokens)
    slots.give_back(done)
    return done.seq_id


def test_the_next_prompt_takes_the_slot_whose_cells_begin_it_and_keeps_them() -> None:
    memory = MemoryCalls()
    slots = Slots(memory, 4, reuse_prefix=True)
    other = _finished(slots, [7, 8, 9] * 20)
    first = _finished(slots, [*PROMPT, 1, 2])
    assert slots.kept() == [KeptCells(other, [7, 8, 9] * 20), KeptCells(first, [*PROMPT, 1, 2])]
    memory.calls.clear()
    follow_up = seq(-1, [*PROMPT, 1, 2, 3, 4, 5])
    assert slots.take(follow_up) == first
    assert follow_up.reused == len(PROMPT) + 2 and follow_up.kv_tokens == [*PROMPT, 1, 2]
    assert memory.calls == [("rm", (first, len(PROMPT) + 2, -1))]  # (nothing past them)
    assert first not in slots.free_ids and slots.kept() == [KeptCells(other, [7, 8, 9] * 20)]


def test_at_least_two_prompt_tokens_are_evaluated_after_kept_cells() -> None:
    memory = MemoryCalls()
    slots = Slots(memory, 2, reuse_prefix=True)
    first = _finished(slots, [*PROMPT, 1, 2])
    same = seq(-1, [*PROMPT, 1, 2])  # (the whole prompt kept: its logits need two evaluated)
    assert slots.take(same) == first and same.reused == len(same.prompt_tokens) - 2


def test_a_slot_with_no_cells_is_taken_before_one_that_keeps_some() -> None:
    memory = MemoryCalls()
    slots = Slots(memory, 3, reuse_prefix=True)
    first = _finished(slots, PROMPT)
    memory.calls.clear()
    unrelated = seq(-1, [5] * 40)
    taken = slots.take(unrelated)
    assert taken != first and unrelated.reused == 0 and memory.calls == []
    assert slots.kept() == [KeptCells(first, PROMPT)]


def test_with_every_free_slot_keeping_cells_the_one_kept_longest_ago_is_cleared() -> None:
    memory = MemoryCalls()
    slots = Slots(memory, 2, reuse_prefix=True)
    older = _finished(slots, PROMPT)
    newer_seq = seq(-1, [6] * 40)
    newer_seq.seq_id = slots.take(newer_seq)
    newer_seq.kv_tokens = [6] * 40
    slots.give_back(newer_seq)
    memory.calls.clear()
    unrelated = seq(-1, [5] * 40)
    assert slots.take(unrelated) == older and unrelated.reused == 0
    assert memory.calls == [("rm", (older, 0, -1))]  # (all its cells)
    assert slots.kept() == [KeptCells(newer_seq.seq_id, [6] * 40)]


def test_without_prefix_reuse_a_finished_sequence_s_cells_are_removed() -> None:
    memory = MemoryCalls()
    slots = Slots(memory, 2, reuse_prefix=False)
    first = _finished(slots, PROMPT)
    assert slots.kept() == [] and ("rm", (first, -1, -1)) in memory.calls
    again = seq(-1, [*PROMPT, 1, 2])
    slots.take(again)
    assert again.reused == 0


def test_a_copy_into_a_slot_removes_what_it_kept_first() -> None:
    memory = MemoryCalls()
    slots = Slots(memory, 2, reuse_prefix=True)
    slots.copy_prefix(1, 0, 40)
    assert memory.calls == [("rm", (0, -1, -1)), ("cp", (1, 0, -1, -1)), ("rm", (0, 40, -1))]
