"""Scheduling a run's generations: a bounded window of instances in flight, scoring overlapped.

:class:`RunQueue` is the :class:`~haf_tui.inference.base.RequestSource` a backend serves. It
admits instances in dataset order, at most ``window`` at a time, and hands out their
generation tasks (each suite's :class:`~haf_tui.methods.base.InstancePlan` says which) with the
follow-ups of instances already in flight first, so instances finish early and memory stays
bounded. When an answer comes back its plan makes the follow-up prompts at once (parsing is
pure and quick), so the backend never waits for scoring; what the plan read is carried to the
scorer. A task whose answer is stored already (a resume) is replayed through its plan instead
of generated: one resume logic for every suite.

Scoring (TokenSAR relevance through the similarity model), storing and each instance's
metrics run on a second thread, fed through a bounded queue: the similarity model works
while the next tokens are decoded. Only that thread writes to the store during a run.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from haf_tui.config import DecodingSettings
from haf_tui.inference.base import GeneratedToken, Generation, GenerationRequest, TokenCallback
from haf_tui.methods.base import Answer, InstancePlan, Reply, Suite, Task
from haf_tui.store.records import InstanceRecord


class RunAbortedError(Exception):
    """The generation in flight was abandoned because the run was cancelled."""


@dataclass
class RunControl:
    """How a caller steers a run from another thread.

    ``stop``: finish the generations in flight, then stop. ``abort``: abandon the generations
    in flight at their next token (nothing of them is stored), then stop. ``pause``: start no
    new generation until cleared. A stopped or aborted run is resumable.
    """

    stop: threading.Event = field(default_factory=threading.Event)
    abort: threading.Event = field(default_factory=threading.Event)
    pause: threading.Event = field(default_factory=threading.Event)

    def cancel(self) -> None:
        """Stop now: abandon the generations in flight."""
        self.abort.set()
        self.stop.set()
        self.pause.clear()


@dataclass
class InstanceWork:
    """One instance in flight: its plan in each suite, the answers recorded so far, and the
    generations not yet stored."""

    instance: InstanceRecord
    plans: list[tuple[Suite, InstancePlan]] = field(default_factory=list)
    answers: list[Answer] = field(default_factory=list)
    replayed: bool = False  # some answers were stored before (a resume): read them back
    outstanding: int = 0
    asked: Counter[str] = field(default_factory=Counter)
    """Generations asked per stage so far (stored ones replayed included)."""
    started: float = field(default_factory=time.perf_counter)


@dataclass(frozen=True)
class TaskTag:
    """What a request is, for the scorer: the instance, its suite and plan, the task, its seed."""

    work: InstanceWork
    suite: Suite
    plan: InstancePlan
    task: Task
    seed: int


Finished = tuple[TaskTag, Generation, object] | InstanceWork | None
"""What the scorer gets: a generation to store (with what its plan read of it), an instance
whose generations are all stored already (resumed), or None: no more."""


@dataclass
class QueueHooks:
    """What the queue needs of its runner."""

    plans_for: Callable[[InstanceRecord], list[tuple[Suite, InstancePlan]]]
    seed_of: Callable[[InstanceRecord, Task], int]
    settings_for: Callable[[int], DecodingSettings]
    emit: Callable[..., None]
    enough: Callable[[], bool] = lambda: False
    """Whether the run has what it asked for (``RunConfig.until_complete``): no instance is
    admitted after it says so, and those in flight finish."""


class RunQueue:
    """Hands a run's generation tasks to a backend and its results to the scorer."""

    def __init__(
        self,
        instances: list[InstanceRecord],
        stored: dict[tuple[str, str, int], Reply],
        *,
        window: int,
        batch: int = 1,
        control: RunControl,
        hooks: QueueHooks,
        stream_tokens: bool,
        scorer_capacity: int,
    ):
        self._waiting = deque(instances)
        self._keep_before = 0
        self._stored = stored
        self._window = max(window, 1)
        self._batch = max(batch, 1)  # requests the backend decodes at once
        self._in_flight = 0
        self._ready: deque[GenerationRequest] = deque()
        self._control = control
        self._hooks = hooks
        self._stream = stream_tokens
        self._streaming: GenerationRequest | None = None
        self._lock = threading.Condition()
        self.results: queue.Queue[Finished] = queue.Queue(maxsize=max(scorer_capacity, 1))
        self.failure: BaseException | None = None
        self.left_out = 0
        """Instances never admitted because the run had enough (``QueueHooks.enough``)."""

    def keep_before(self, position: int) -> None:
        """Instances before ``position`` are admitted even once the run has enough (a resume:
        the texts before the last finished one are part of the run)."""
        self._keep_before = position

    # RequestSource

    def take(self, limit: int, *, wait: bool) -> list[GenerationRequest]:
        """Up to ``limit`` ready requests (follow-ups first, then new instances' work)."""
        control = self._control
        if self.failure is not None:
            raise RuntimeError(f"scoring failed: {self.failure}") from self.failure
        if control.pause.is_set() and not control.stop.is_set():
            if not wait:
                return []
            self._hooks.emit("paused")
            while control.pause.is_set() and not control.stop.is_set():
                time.sleep(0.05)
            self._hooks.emit("resumed")
        if control.stop.is_set():
            return []
        complete: list[InstanceWork] = []
        with self._lock:
            while True:
                first = self._waiting[0].position if self._waiting else -1
                if first >= self._keep_before and self._hooks.enough():
                    self.left_out = len(self._waiting)
                    self._waiting.clear()
                while len(self._ready) < limit and self._waiting and self._in_flight < self._window:
                    work = self._admit(self._waiting.popleft())
                    if work is not None:
                        complete.append(work)
                if self._ready or not wait or not self._waiting or complete:
                    break
                if control.stop.is_set() or self.failure is not None:
                    break
                self._lock.wait(0.1)  # the window is full: wait for the scorer to store one
            taken = self._hand_out(limit)
            if self._stream and self._streaming is None and taken:
                self._streaming = taken[0]
        for work in complete:
            self.results.put(work)
        if self._streaming is not None and self._streaming in taken:
            self._emit_about(self._streaming, "generation-started")
        return taken

    def _hand_out(self, limit: int) -> list[GenerationRequest]:
        """Up to ``limit`` ready requests, in order; the forced replies to one prompt go out
        together (the engine evaluates their prompt once) unless they are more than a batch
        holds: a group that does not fit the slots left waits, and what follows it goes first."""
        taken: list[GenerationRequest] = []
        waiting: list[GenerationRequest] = []
        while self._ready and len(taken) < limit:
            group = [self._ready.popleft()]
            while self._ready and _same_forced_prompt(group[0], self._ready[0]):
                group.append(self._ready.popleft())
            if len(group) <= limit - len(taken) or len(group) > self._batch:
                room = limit - len(taken)
                taken += group[:room]
                self._ready.extendleft(reversed(group[room:]))
            else:
                waiting += group
        self._ready.extendleft(reversed(waiting))
        return taken

    def _emit_about(self, request: GenerationRequest, kind: str, message: str = "") -> None:
        tag = request.tag
        assert isinstance(tag, TaskTag)
        self._hooks.emit(
            kind,
            stage=tag.task.stage,
            instance_id=tag.work.instance.instance_id,
            sub_index=tag.task.sub_index,
            message=message,
        )

    def finished(self, request: GenerationRequest, generation: Generation) -> None:
        """A generation is done: queue the follow-ups its plan asks for, then hand it to the
        scorer (blocks while the scorer is ``scorer_capacity`` behind)."""
        tag = request.tag
        assert isinstance(tag, TaskTag)
        followups, carried = tag.plan.advance(tag.task, Reply.of_generation(generation))
        with self._lock:
            self._queue(tag.work, tag.suite, tag.plan, followups, front=True)
            if self._streaming is request:
                self._streaming = None
        self.results.put((tag, generation, carried))

    def stop_requested(self) -> bool:
        """Whether the run was asked to stop (Ctrl-C, the workbench) or was aborted."""
        return self._control.stop.is_set()

    # bookkeeping shared with the scorer

    def instance_stored(self, work: InstanceWork) -> bool:
        """One generation of ``work`` is stored; True when it was the last one."""
        with self._lock:
            work.outstanding -= 1
            done = work.outstanding == 0
            if done:
                self._in_flight -= 1
                self._lock.notify_all()
            return done

    def _admit(self, instance: InstanceRecord) -> InstanceWork | None:
        """Queue an instance's work; returns it when all its generations are stored already."""
        work = InstanceWork(instance, self._hooks.plans_for(instance))
        self._in_flight += 1
        for suite, plan in work.plans:
            self._queue(work, suite, plan, plan.start(), front=False)
        if work.outstanding == 0:
            self._in_flight -= 1
            return work
        return None

    def _queue(
        self,
        work: InstanceWork,
        suite: Suite,
        plan: InstancePlan,
        tasks: Sequence[Task],
        *,
        front: bool,
    ) -> None:
        """Queue ``tasks``; one whose answer is stored is replayed through its plan instead."""
        requests = []
        pending = list(tasks)
        while pending:
            task = pending.pop(0)
            work.asked[task.stage] += 1
            stored = self._stored.get((work.instance.instance_id, task.stage, task.sub_index))
            if stored is None:
                requests.append(self._request(work, suite, plan, task))
                continue
            work.replayed = True
            followups, _ = plan.advance(task, stored)
            pending.extend(followups)
        work.outstanding += len(requests)
        if front:
            self._ready.extendleft(reversed(requests))
        else:
            self._ready.extend(requests)

    def _request(
        self, work: InstanceWork, suite: Suite, plan: InstancePlan, task: Task
    ) -> GenerationRequest:
        seed = self._hooks.seed_of(work.instance, task)
        settings = self._hooks.settings_for(seed)
        if task.greedy or task.max_new_tokens is not None:
            settings = settings.model_copy(
                update={
                    "temperature": 0.0 if task.greedy else settings.temperature,
                    "max_new_tokens": min(
                        settings.max_new_tokens, task.max_new_tokens or settings.max_new_tokens
                    ),
                }
            )
        request = GenerationRequest(
            task.messages, settings, forced=task.forced, reply_prefix=task.reply_prefix
        )
        request.tag = TaskTag(work, suite, plan, task, seed)
        request.on_token = self._token_callback(request)
        return request

    def _token_callback(self, request: GenerationRequest) -> TokenCallback:
        """Abandons the generation when the run is cancelled; streams the tokens of one
        generation at a time to the listener when asked to."""
        abort = self._control.abort

        def on_token(token: GeneratedToken) -> None:
            if abort.is_set():
                raise RunAbortedError()
            if self._streaming is request:
                self._emit_about(request, "token", token.text)

        return on_token


def _same_forced_prompt(a: GenerationRequest, b: GenerationRequest) -> bool:
    """Whether two requests are forced replies to the same prompt."""
    return (
        a.forced is not None
        and b.forced is not None
        and a.messages == b.messages
        and a.reply_prefix == b.reply_prefix
    )
