"""The batched engine's slots (:mod:`haf_tui.inference.batched`): which sequence ids are free,
and the cells a free slot keeps from the sequence that finished there. A later prompt that
begins as those cells do takes that slot and evaluates only what follows them (the judge's
next criterion: the prompt before it, its label, the next question), or copies them from
there like any other prefix (:func:`~haf_tui.inference.batch_plan.plan_prefixes`)."""

from __future__ import annotations

from typing import Any

from haf_tui.inference.batch_plan import BatchSequence, KeptCells, common_prefix_length


class Slots:
    """``n_parallel`` sequence ids on one llama.cpp memory: the free ones, the lowest handed
    out first, and the cells each free one keeps (with prefix reuse)."""

    def __init__(self, c_api: Any, n_parallel: int, reuse_prefix: bool) -> None:
        self._c = c_api
        self.n_parallel = n_parallel
        self.reuse_prefix = reuse_prefix
        self.memory: Any = None
        self.free_ids: list[int] = []
        self._kept: dict[int, list[int]] = {}
        self.reset()

    def reset(self, memory: Any = None) -> None:
        """Every slot free and none keeping cells: the memory cleared, or a new one
        (``memory``: a new context's)."""
        if memory is not None:
            self.memory = memory
        self.free_ids = list(range(self.n_parallel - 1, -1, -1))
        self._kept = {}

    def kept(self) -> list[KeptCells]:
        """The cells free slots keep (prefix sources for new prompts)."""
        return [KeptCells(slot, tokens) for slot, tokens in self._kept.items()]

    def take(self, seq: BatchSequence) -> int:
        """A free slot for ``seq``: the one whose kept cells share the longest start with its
        prompt, those cells kept and the rest removed (``seq.reused``: not evaluated again; at
        least two prompt tokens are, as after a copy, :func:`plan_prefixes`); else one with no
        cells; else the one whose cells were kept longest ago, its cells removed."""
        slot, shared = -1, 0
        for free in self.free_ids if self.reuse_prefix else ():
            kept = self._kept.get(free)
            if kept is not None:
                length = min(common_prefix_length(seq.prompt_tokens, kept), seq.first_output - 1)
                if length > shared:
                    slot, shared = free, length
        if slot < 0:
            empty = [free for free in self.free_ids if free not in self._kept]
            slot = empty[-1] if empty else next(iter(self._kept))
        self.free_ids.remove(slot)
        if self._kept.pop(slot, None) is not None:
            self._c.llama_memory_seq_rm(self.memory, slot, shared, -1)
        if shared:
            seq.reused, seq.kv_tokens = shared, seq.prompt_tokens[:shared]
        return slot

    def give_back(self, seq: BatchSequence) -> None:
        """Free ``seq``'s slot. Its cells stay (with prefix reuse), kept for a later prompt
        that begins as its tokens do (:meth:`take`), until the slot is needed for another."""
        if self.reuse_prefix and seq.kv_tokens:
            self._kept[seq.seq_id] = seq.kv_tokens
        else:
            self._c.llama_memory_seq_rm(self.memory, seq.seq_id, -1, -1)
        self.free_ids.append(seq.seq_id)

    def copy_prefix(self, source: int, target: int, length: int) -> None:
        """Give ``target`` the first ``length`` cells of ``source``: its stream is copied
        whole (llama.cpp copies the buffers at the next decode) and the rest removed (what
        ``target`` held before removed first: the cells a slot taken kept, :meth:`take`)."""
        self._c.llama_memory_seq_rm(self.memory, target, -1, -1)
        self._c.llama_memory_seq_cp(self.memory, source, target, -1, -1)
        self._c.llama_memory_seq_rm(self.memory, target, length, -1)
