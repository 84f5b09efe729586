"""The staged pipeline: generate, parse, score and store, for every suite of a run.

The backend generates up to ``n_parallel`` prompts at once (batched decoding where the
backend supports it, else one at a time) from a :class:`~haf_tui.pipeline.scheduler.RunQueue`
fed by each suite's plan of each instance; a second thread has the suite record every finished
generation (parsed and scored), stores it with its tokens, and, when an instance's plans are
complete, has each suite compute the instance's results from the answers in memory (read back
from the store only when some were stored before: a resume). A resumed run skips finished
instances and stored generations. Each generation's seed comes from the run's seed and what
is generated, so a resumed run samples what an uninterrupted one would have (with batching, up
to the floating-point noise the batch composition brings: see :mod:`haf_tui.inference.batched`).
"""

from __future__ import annotations

import contextlib
import threading
import time
import zlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from haf_tui.config import RunConfig
from haf_tui.inference.backend import Backend
from haf_tui.inference.base import ConcurrentBackend
from haf_tui.methods.base import Answer, InstancePlan, Reply, Suite, SuiteContext, SuiteOutcome
from haf_tui.methods.registry import run_stages, stage_units, suites_named
from haf_tui.pipeline.events import ProgressEvent, ProgressListener, ignore_progress
from haf_tui.pipeline.scheduler import (
    InstanceWork,
    QueueHooks,
    RunAbortedError,
    RunControl,
    RunQueue,
)
from haf_tui.pipeline.totals import InstanceCounts, RunTotals, instance_counts, plan_totals
from haf_tui.similarity import SimilarityModel
from haf_tui.store import Store, StoreError, StoreWriteError
from haf_tui.store.records import InstanceRecord, InstanceResult
from haf_tui.store.run_limits import limit_run
from haf_tui.vocabulary import nan_for_null

ACCOUNT_SECONDS = 10.0
"""Running time is added to the run's ``seconds_running`` as generations are stored, at most
this often; a resume adds a killed session's time up to its last stored generation
(``Store.account_unstored_time``). Paces, estimates and another process's monitor read it."""

__all__ = ["HafRunner", "RunAbortedError", "RunControl", "RunSummary", "generation_seed"]


def generation_seed(run_seed: int, *parts: str) -> int:
    """A per-generation seed from the run's seed and what is generated (order-independent)."""
    return zlib.crc32("/".join(parts).encode("utf-8"), run_seed) & 0x7FFFFFFF


@dataclass
class RunSummary:
    """How a call to :meth:`HafRunner.run` ended."""

    run_id: str
    status: str
    instances_done: int
    instances_total: int
    generations: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0


class HafRunner:
    """Runs (or resumes) one run, with all its suites, into the store."""

    def __init__(
        self,
        store: Store,
        backend: Backend,
        similarity: SimilarityModel,
        config: RunConfig,
        *,
        listener: ProgressListener = ignore_progress,
        stop_event: threading.Event | None = None,
        control: RunControl | None = None,
        stream_tokens: bool = False,
    ):
        self.store = store
        self.backend = backend
        self.similarity = similarity
        self.config = config
        self.listener = listener
        self.control = control or RunControl(stop=stop_event or threading.Event())
        self.stop_event = self.control.stop
        self.stream_tokens = stream_tokens
        self.suites = suites_named(config.suites)
        self.stages = run_stages(config)
        self._started = 0.0
        self._done_at_start = 0
        self._accounted = 0.0  # (running time up to here is in the run's seconds_running)
        self._accounting = threading.Lock()  # (the scorer thread and the main one add time)
        # every instance's generations per stage as far as known, and the work per rate unit
        self.totals = RunTotals(self.stages, stage_units(config), 0)
        self._context = SuiteContext("", config, similarity)
        self._complete = 0  # (instances that went through every stage: until_complete)

    def _server(self) -> ConcurrentBackend:
        """Batched decoding when the backend offers it and more than one sequence is asked
        for, else one generation at a time."""
        return self.backend.engine(self.config.model.n_parallel)

    def run(self, run_id: str) -> RunSummary:
        """Work through every instance of the run that is not finished yet."""
        instances = self.store.instances(self.config.dataset_id, self.config.limit)
        finished = self.store.finished_instances(run_id)
        keys = self.store.generation_keys(run_id)
        counts = {name: sum(1 for k in keys if k[1] == name) for name in self.stages}
        summary = RunSummary(run_id, "running", len(finished), len(instances), counts)
        self._context = SuiteContext(run_id, self.config, self.similarity)
        todo = [i for i in instances if i.instance_id not in finished]
        self._complete = _complete_before(keys, finished, self.stages, self.config)
        started = self._accounted = time.perf_counter()
        run_queue: RunQueue | None = None
        try:  # (a Ctrl-C from here on, set-up included, leaves the run interrupted)
            self.totals = self._first_totals(len(instances), keys, finished, todo)
            server = self._server()
            stored = self._stored_answers(run_id, todo, keys)
            done_before = [i.position for i in instances if i.instance_id in finished]
            run_queue = self._queue(todo, stored, summary, server.n_parallel)
            run_queue.keep_before(max(done_before, default=-1) + 1)
            self.store.update_run(run_id, status="running")
            self._emit("run-started", summary, message=f"{len(finished)} of {len(instances)} done")
            self._started = started = self._accounted = time.perf_counter()
            self._done_at_start = summary.instances_done
            scorer = threading.Thread(
                target=self._score_results, args=(run_id, run_queue, summary), daemon=True
            )
            scorer.start()
            try:
                server.serve(run_queue)
            finally:
                run_queue.results.put(None)
                scorer.join()
            if run_queue.failure is not None:
                raise run_queue.failure
            if run_queue.left_out and not self.stop_event.is_set():
                summary.instances_total -= run_queue.left_out
                limit_run(self.store, run_id, summary.instances_total)
            done = summary.instances_done == summary.instances_total
            summary.status = "finished" if done else "interrupted"
        except RunAbortedError:
            if run_queue is not None and run_queue.failure is not None:
                self._fail(run_id, summary, run_queue.failure)
                raise run_queue.failure from None
            summary.status = "interrupted"
        except BaseException as exc:
            self._fail(run_id, summary, exc)
            raise
        summary.seconds = time.perf_counter() - started
        self._store_time(run_id, status=summary.status)
        self._emit("run-finished", summary, message=summary.status)
        return summary

    def _first_totals(
        self,
        instances: int,
        keys: set[tuple[str, str, int]],
        finished: set[str],
        todo: list[InstanceRecord],
    ) -> RunTotals:
        """The totals before the run goes on: the finished instances' stored generations and
        what each other instance's plans know before any answer."""
        totals = plan_totals(self.config, todo, instances)
        stored: dict[str, Counter[str]] = {instance_id: Counter() for instance_id in finished}
        for instance_id, stage, _ in keys:
            if instance_id in stored:
                stored[instance_id][stage] += 1
        for instance_id, counts in stored.items():
            totals.note(instance_id, InstanceCounts(dict(counts)))
        return totals

    def _plans_for(self, instance: InstanceRecord) -> list[tuple[Suite, InstancePlan]]:
        return [(suite, suite.plan(instance, self.config)) for suite in self.suites]

    def _queue(
        self,
        todo: list[InstanceRecord],
        stored: dict[tuple[str, str, int], Reply],
        summary: RunSummary,
        n_parallel: int,
    ) -> RunQueue:
        """The queue of the generations still to make, in the order the scheduler hands out."""
        return RunQueue(
            todo,
            stored,
            window=1 if n_parallel == 1 else _window(self.config, n_parallel),
            batch=n_parallel,
            control=self.control,
            hooks=QueueHooks(
                plans_for=self._plans_for,
                seed_of=lambda instance, task: generation_seed(
                    self.config.decoding.seed, instance.instance_id, task.stage, str(task.sub_index)
                ),
                settings_for=lambda seed: self.config.decoding.model_copy(update={"seed": seed}),
                emit=lambda kind, **details: self._emit(kind, summary, **details),
                enough=self._enough,
            ),
            stream_tokens=self.stream_tokens,
            scorer_capacity=2 * n_parallel,
        )

    def _count_if_complete(self, work: InstanceWork) -> None:
        """An instance whose generations are all stored went through every stage of the run
        when each was asked (``until_complete`` counts them)."""
        if set(work.asked) >= set(self.stages):
            self._complete += 1

    def _enough(self) -> bool:
        """Whether ``until_complete`` instances went through every stage of the run."""
        until = self.config.until_complete
        return until is not None and self._complete >= until

    def _fail(self, run_id: str, summary: RunSummary, exc: BaseException) -> None:
        """Record how the run ended: interrupted (resumable) on Ctrl-C or when the database
        could not be written (a full disk), else failed with the error."""
        resumable = isinstance(exc, KeyboardInterrupt | StoreWriteError)
        summary.status = "interrupted" if resumable else "failed"
        error = None if isinstance(exc, KeyboardInterrupt) else str(exc)
        # when the disk is still full this fails too: once this process is gone, the run is
        # shown interrupted all the same (its writer is dead)
        with contextlib.suppress(StoreError):
            self._store_time(run_id, status=summary.status, error=error)

    def _stored_answers(
        self, run_id: str, todo: list[InstanceRecord], keys: set[tuple[str, str, int]]
    ) -> dict[tuple[str, str, int], Reply]:
        """The stored answer of every generation of an unfinished instance (a resume), for
        the plans to replay."""
        started = {instance_id for instance_id, _, _ in keys}
        stored = {}
        for instance in todo:
            if instance.instance_id in started:
                for row in self.store.instance_generations(run_id, instance.instance_id):
                    key = (instance.instance_id, str(row["stage"]), int(row["sub_index"]))
                    stored[key] = Reply(str(row["output_text"]), nan_for_null(row["logprob_sum"]))
        return stored

    def _score_results(self, run_id: str, run_queue: RunQueue, summary: RunSummary) -> None:
        """The scorer thread: record and store each generation, then each finished instance.

        After a failure it keeps draining the queue (so the backend never blocks) and stops
        the run."""
        while (item := run_queue.results.get()) is not None:
            if run_queue.failure is not None:
                continue
            try:
                if isinstance(item, InstanceWork):
                    self._count_if_complete(item)
                    self._finish_instance(run_id, item, summary)
                    continue
                tag, generation, carried = item
                instance = tag.work.instance
                record = tag.suite.record(
                    self._context, instance, tag.task, tag.seed, generation, carried
                )
                self.store.save_generation(record)
                self._store_time_now_and_then(run_id)
                tag.work.answers.append(Answer.of_record(record))
                stage = tag.task.stage
                summary.generations[stage] = summary.generations.get(stage, 0) + 1
                self.totals.add_generation(stage, generation)
                self._note_planned(tag.work)
                self._emit("generation", summary, stage=stage, instance_id=instance.instance_id)
                if tag.work.outstanding == 1:  # (counted before the queue takes another text)
                    self._count_if_complete(tag.work)
                if run_queue.instance_stored(tag.work):
                    self._finish_instance(run_id, tag.work, summary)
            except BaseException as exc:
                run_queue.failure = exc
                self.control.abort.set()
                self.control.stop.set()

    def _note_planned(self, work: InstanceWork) -> None:
        """What the instance's plans now know of the generations it needs."""
        counts = instance_counts(work.plans, self.config, dict(work.asked))
        self.totals.note(work.instance.instance_id, counts)

    def _finish_instance(self, run_id: str, work: InstanceWork, summary: RunSummary) -> None:
        """Each suite's results of an instance whose generations are all stored: from the
        answers in memory, or read back when some were stored before (a resume)."""
        instance = work.instance
        answers = work.answers
        if work.replayed:
            rows = self.store.instance_generations(run_id, instance.instance_id)
            answers = [Answer.of_row(row) for row in rows]
        outcomes = [
            suite.finish(self._context, instance, [a for a in answers if a.stage in suite.stages])
            for suite in self.suites
        ]
        self.store.save_instance_result(_instance_result(run_id, instance, outcomes))
        self._store_time_now_and_then(run_id)
        self._note_planned(work)
        summary.instances_done += 1
        finished_here = summary.instances_done - self._done_at_start
        elapsed = time.perf_counter() - self._started
        remaining = summary.instances_total - summary.instances_done
        eta = elapsed / finished_here * remaining if finished_here else None
        message = "; ".join(o.summary for o in outcomes if o.summary)
        self._emit("instance", summary, instance_id=instance.instance_id, eta=eta, message=message)

    def _store_time_now_and_then(self, run_id: str) -> None:
        if time.perf_counter() - self._accounted >= ACCOUNT_SECONDS:  # (see ACCOUNT_SECONDS)
            self._store_time(run_id)

    def _store_time(
        self, run_id: str, *, status: str | None = None, error: str | None = None
    ) -> None:
        """Add the running time since it was last stored to the run's ``seconds_running``
        (with a new status or error); counted once whichever thread stores it, and kept for
        the next call when the store refuses the write."""
        with self._accounting:
            now = time.perf_counter()
            self.store.update_run(run_id, status=status, error=error, seconds=now - self._accounted)
            self._accounted = now

    def expected_generations(self) -> dict[str, int]:
        """Generations a run is expected to need per stage: what the instances' plans know,
        and for the instances whose count may still grow the average of the others."""
        return self.totals.expected()

    def _emit(
        self,
        kind: str,
        summary: RunSummary,
        *,
        stage: str = "",
        instance_id: str = "",
        eta: float | None = None,
        message: str = "",
        sub_index: int = -1,
    ) -> None:
        elapsed = time.perf_counter() - self._started if self._started else 0.0
        rates = self.totals.rates(elapsed)
        self.listener(
            ProgressEvent(
                kind=kind,  # type: ignore[arg-type]
                run_id=summary.run_id,
                stage=stage,
                instance_id=instance_id,
                instances_done=summary.instances_done,
                instances_total=summary.instances_total,
                generations_done=dict(summary.generations),
                generations_expected=self.totals.expected(),
                generations_planned=self.totals.planned(),
                growing=self.totals.growing(),
                sub_index=sub_index,
                tokens_per_second=rates.get("tokens", 0.0),
                rates=rates,
                eta_seconds=eta,
                message=message,
            )
        )


def _complete_before(
    keys: set[tuple[str, str, int]], finished: set[str], stages: Sequence[str], config: RunConfig
) -> int:
    """The finished instances whose stored generations cover every stage of the run (what
    ``until_complete`` counts; not read when the run has no such rule)."""
    if config.until_complete is None:
        return 0
    stages_of: dict[str, set[str]] = {}
    for instance_id, stage, _ in keys:
        stages_of.setdefault(instance_id, set()).add(stage)
    wanted = set(stages)
    return sum(1 for i in finished if stages_of.get(i, set()) >= wanted)


def _window(config: RunConfig, n_parallel: int) -> int:
    """Instances in flight at once: two batches' worth, or one when the run stops taking texts
    once it has enough (``until_complete``: fewer texts begun past that point)."""
    return n_parallel if config.until_complete else 2 * n_parallel


def _instance_result(
    run_id: str, instance: InstanceRecord, outcomes: list[SuiteOutcome]
) -> InstanceResult:
    """One instance's row and metrics from every suite's outcome (the stance row from the
    suite that decides a stance)."""
    decider = next((o for o in outcomes if o.stance is not None), SuiteOutcome())
    result = InstanceResult(
        run_id, instance.instance_id, decider.stance, decider.n_reasons, decider.stopped
    )
    for outcome in outcomes:
        result.reason_metrics += outcome.reason_metrics
        result.instance_metrics += outcome.instance_metrics
        for table, rows in outcome.rows.items():
            result.rows.setdefault(table, []).extend(rows)
    return result
