"""How many threads llama.cpp decodes with: the counts to try, and a tuner that picks among
them by measured decode times (used by the single-sequence path and the batched engine)."""

from __future__ import annotations

from collections.abc import Sequence


def thread_ladder(most: int) -> tuple[int, ...]:
    """The thread counts a tuner tries for a machine of ``most`` threads: ``most`` and its
    halvings down to 1 (2 -> (2, 1); 16 -> (16, 8, 4, 2, 1))."""
    counts = [max(most, 1)]
    while counts[-1] > 1:
        counts.append(counts[-1] // 2)
    return tuple(counts)


def size_class(tokens: int) -> int:
    """Decodes of ``tokens`` tokens within a factor of two share a class (1, 2-3, 4-7, ...)."""
    return max(tokens, 1).bit_length()


class ThreadTuner:
    """Picks how many threads llama.cpp decodes with, from the decode times it measures.

    ggml's CPU threads meet at a spinning barrier after every operation of the graph, so when
    another process holds one of the cores, a decode on every core waits at each barrier for
    the thread the OS descheduled. Measured on this project's 2-core VM with one busy process:
    batch-16 decoding at 2 threads fell to 5-53 tokens/s where 1 thread kept 86-177; idle,
    2 threads are the faster. The tuner decodes with its current count and, every so many
    decodes, tries another once (round robin); it moves to the other when that took less time
    per token than the current one's recent average (by :attr:`margin`). A probe that loses
    doubles the wait before the next one (up to ``longest_wait`` decodes), so a count that
    stays worse costs little; a move starts the waits again from ``probe_every``, and so does
    a decode at the current count that took ``jump`` times its recent average (another
    process just took a core), after a probe at once. Prompt
    chunks and generation steps differ in cost per token, so each has a tuner of its own, kept
    by the backend from one engine to the next. Within each, costs are compared only between
    decodes of like size (token counts within a factor of two, :func:`size_class`): a decode's
    cost per token falls as it grows (a 3-token micro-batch took 6 ms a token here, 384 tokens
    3.5 ms), and comparing across sizes let a probe on a large decode beat the current count's
    average of small ones and move a quiet machine to 1 thread (the rationales suite ran ~12%
    slower so).

    The thread count changes no result: each output of ggml's CPU kernels is computed by one
    thread (logits equal bit for bit at 1 and 2 threads, prompt and steps; tested).
    """

    def __init__(
        self,
        candidates: Sequence[int],
        *,
        probe_every: int = 2,
        longest_wait: int = 64,
        smoothing: float = 0.3,
        margin: float = 0.05,
        jump: float = 1.5,
    ) -> None:
        if not candidates or min(candidates) < 1:
            raise ValueError("thread counts must be at least 1")
        self.candidates = tuple(sorted(set(candidates), reverse=True))
        self.current = self.candidates[0]
        self.smoothing = smoothing
        self.margin = margin
        self.jump = jump
        self.switches = 0
        self.probes = 0
        self._cost: dict[tuple[int, int], float] = {}  # (threads, size class): s/token, recent
        self._first_wait = self._wait = self._countdown = probe_every
        self._longest_wait = longest_wait
        self._turn = 0

    def choose(self, tokens: int) -> int:
        """The thread count for the next decode (of ``tokens`` tokens): the current one, or
        now and then a probe (once the current count's cost at that size is known)."""
        known = (self.current, size_class(tokens)) in self._cost
        if len(self.candidates) == 1 or self._countdown > 0 or not known:
            return self.current
        others = [n for n in self.candidates if n != self.current]
        return others[self._turn % len(others)]

    def record(self, threads: int, seconds: float, tokens: int) -> None:
        """A decode of ``tokens`` tokens at ``threads`` threads took ``seconds``."""
        if tokens <= 0 or threads not in self.candidates or len(self.candidates) == 1:
            return
        cost, size = seconds / tokens, size_class(tokens)
        if threads == self.current:
            old = self._cost.get((threads, size))
            self._cost[threads, size] = cost if old is None else old + self.smoothing * (cost - old)
            self._countdown -= 1
            if old is not None and cost > self.jump * old:  # the machine changed: look again
                self._wait = self._countdown = 0
            return
        self.probes += 1
        self._turn += 1
        self._cost[threads, size] = cost
        current = self._cost.get((self.current, size))  # (unknown at this size: no move)
        if current is not None and cost < current * (1 - self.margin):
            self.current, self._wait = threads, self._first_wait
            self.switches += 1
        else:
            self._wait = min(max(2 * self._wait, self._first_wait), self._longest_wait)
        self._countdown = self._wait
