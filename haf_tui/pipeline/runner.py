"""The staged HAF pipeline: generate, parse, score and store.

The backend generates up to ``n_parallel`` prompts at once (batched decoding where the
backend supports it, else one at a time) from a :class:`~haf_tui.pipeline.scheduler.RunQueue`;
a second thread scores and commits every finished generation with its tokens and parsed
reasons, and an instance's metrics when its last stage is stored. A resumed run skips
finished instances and stored generations. Each generation's seed comes from the run's seed
and what is generated, so a resumed run samples what an uninterrupted one would have (with
batching, up to the floating-point noise the batch composition brings: see
:mod:`haf_tui.inference.batched`).
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from haf_tui.config import RunConfig
from haf_tui.inference.base import ConcurrentBackend, Generation, GenerationBackend, OneAtATime
from haf_tui.parsing import Reason, parse_followup, parse_justify
from haf_tui.pipeline.events import ProgressEvent, ProgressListener, ignore_progress
from haf_tui.pipeline.instance_metrics import (
    StoredGeneration,
    StoredReason,
    compute_instance_metrics,
)
from haf_tui.pipeline.scheduler import (
    InstanceWork,
    QueueHooks,
    RunAbortedError,
    RunControl,
    RunQueue,
)
from haf_tui.pipeline.stages import GenerationTask, JustifyOutcome
from haf_tui.scoring import score_spans
from haf_tui.similarity import SimilarityModel
from haf_tui.store import Store, StoreError, StoreWriteError
from haf_tui.store.records import GenerationRecord, InstanceRecord, InstanceResult, ReasonRecord
from haf_tui.vocabulary import Stance

__all__ = ["HafRunner", "RunAbortedError", "RunControl", "RunSummary", "generation_seed"]


def generation_seed(run_seed: int, *parts: str) -> int:
    """A per-generation seed from the run's seed and what is generated (order-independent)."""
    return zlib.crc32("/".join(parts).encode("utf-8"), run_seed) & 0x7FFFFFFF


@dataclass(frozen=True)
class ParsedOutput:
    """What the pipeline keeps of a parse, the same for every stage."""

    decision: str
    source: str | None
    decision_sentence: str
    decision_start: int
    decision_end: int
    reasons: tuple[Reason, ...]


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
    """Runs (or resumes) one HAF run into the store."""

    def __init__(
        self,
        store: Store,
        backend: GenerationBackend,
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
        self._tokens = 0
        self._started = 0.0
        self._done_at_start = 0
        # instance id -> reasons its JUSTIFY passed on (0: stopped there), for the estimates
        self._followups: dict[str, int] = {}
        self._instances_total = 0

    def _similarity_fn(self, a: str, b: str) -> float:
        return self.similarity.similarities([(a, b)])[0]

    def _server(self) -> ConcurrentBackend:
        """Batched decoding when the backend offers it and more than one sequence is asked
        for, else one generation at a time."""
        n_parallel = self.config.model.n_parallel
        concurrent = getattr(self.backend, "concurrent", None)
        if n_parallel > 1 and callable(concurrent):
            return cast(ConcurrentBackend, concurrent(n_parallel))
        return OneAtATime(self.backend)

    def run(self, run_id: str) -> RunSummary:
        """Work through every instance of the run that is not finished yet."""
        instances = self.store.instances(self.config.dataset_id, self.config.limit)
        finished = self.store.finished_instances(run_id)
        stored = self.store.generation_keys(run_id)
        counts = {name: sum(1 for k in stored if k[1] == name) for name in self.config.stages}
        summary = RunSummary(run_id, "running", len(finished), len(instances), counts)
        self._instances_total = len(instances)
        self._followups = _followups_from_keys(stored)
        todo = [i for i in instances if i.instance_id not in finished]
        started = time.perf_counter()
        run_queue: RunQueue | None = None
        try:  # (a Ctrl-C from here on, set-up included, leaves the run interrupted)
            server = self._server()
            run_queue = self._queue(run_id, todo, stored, summary, server.n_parallel)
            self.store.update_run(run_id, status="running")
            self._emit("run-started", summary, message=f"{len(finished)} of {len(instances)} done")
            self._started = started = time.perf_counter()
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
            done = summary.instances_done == summary.instances_total
            summary.status = "finished" if done else "interrupted"
        except RunAbortedError:
            if run_queue is not None and run_queue.failure is not None:
                self._fail(run_id, summary, run_queue.failure, started)
                raise run_queue.failure from None
            summary.status = "interrupted"
        except BaseException as exc:
            self._fail(run_id, summary, exc, started)
            raise
        summary.seconds = time.perf_counter() - started
        self.store.update_run(run_id, status=summary.status, seconds=summary.seconds)
        self._emit("run-finished", summary, message=summary.status)
        return summary

    def _queue(
        self,
        run_id: str,
        todo: list[InstanceRecord],
        stored: set[tuple[str, str, int]],
        summary: RunSummary,
        n_parallel: int,
    ) -> RunQueue:
        """The queue of the generations still to make, in the order the scheduler hands out."""
        return RunQueue(
            todo,
            stored,
            self._stored_outcomes(run_id, todo, stored),
            stages=self.config.stages,
            explicit=self.config.prompting == "explicit",
            window=1 if n_parallel == 1 else 2 * n_parallel,
            control=self.control,
            hooks=QueueHooks(
                seed_of=lambda instance, task: generation_seed(
                    self.config.decoding.seed, instance.instance_id, task.stage, str(task.sub_index)
                ),
                settings_for=lambda seed: self.config.decoding.model_copy(update={"seed": seed}),
                emit=lambda kind, **details: self._emit(kind, summary, **details),
                parse_rules=self.config.parse_rules,
            ),
            stream_tokens=self.stream_tokens,
            scorer_capacity=2 * n_parallel,
        )

    def _fail(self, run_id: str, summary: RunSummary, exc: BaseException, started: float) -> None:
        """Record how the run ended: interrupted (resumable) on Ctrl-C or when the database
        could not be written (a full disk), else failed with the error."""
        resumable = isinstance(exc, KeyboardInterrupt | StoreWriteError)
        summary.status = "interrupted" if resumable else "failed"
        error = None if isinstance(exc, KeyboardInterrupt) else str(exc)
        # when the disk is still full this fails too: once this process is gone, the run is
        # shown interrupted all the same (its writer is dead)
        with contextlib.suppress(StoreError):
            self.store.update_run(
                run_id, status=summary.status, error=error, seconds=time.perf_counter() - started
            )

    def _stored_outcomes(
        self, run_id: str, todo: list[InstanceRecord], stored: set[tuple[str, str, int]]
    ) -> dict[str, JustifyOutcome]:
        """The JUSTIFY outcome of every unfinished instance whose JUSTIFY is stored (a resume)."""
        outcomes = {}
        for instance in todo:
            if (instance.instance_id, "justify", -1) in stored:
                rows = self.store.instance_generations(run_id, instance.instance_id)
                outcomes[instance.instance_id] = _justify_outcome(rows)
        return outcomes

    def _score_results(self, run_id: str, run_queue: RunQueue, summary: RunSummary) -> None:
        """The scorer thread: score and store each generation, then each finished instance.

        After a failure it keeps draining the queue (so the backend never blocks) and stops
        the run."""
        while (item := run_queue.results.get()) is not None:
            if run_queue.failure is not None:
                continue
            try:
                if isinstance(item, InstanceWork):
                    self._finish_instance(run_id, item, summary)
                    continue
                tag, generation = item
                self.store.save_generation(
                    self._record(run_id, tag.work.instance, tag.task, tag.seed, generation)
                )
                stage = tag.task.stage
                summary.generations[stage] = summary.generations.get(stage, 0) + 1
                self._tokens += max(len(generation.tokens) - 1, 0)
                if stage == "justify" and tag.work.outcome is not None:
                    self._followups[tag.work.instance.instance_id] = tag.work.outcome.followups
                self._emit(
                    "generation", summary, stage=stage, instance_id=tag.work.instance.instance_id
                )
                if run_queue.instance_stored(tag.work):
                    self._finish_instance(run_id, tag.work, summary)
            except BaseException as exc:
                run_queue.failure = exc
                self.control.abort.set()
                self.control.stop.set()

    def _finish_instance(self, run_id: str, work: InstanceWork, summary: RunSummary) -> None:
        """Metrics of an instance whose generations are all stored, from the stored rows."""
        instance = work.instance
        generations = self.store.instance_generations(run_id, instance.instance_id)
        outcome = _justify_outcome(generations)
        stopped = outcome.stopped
        self._followups[instance.instance_id] = outcome.followups
        self._save_result(
            run_id, instance, outcome.stance, len(outcome.reasons), stopped, generations
        )
        summary.instances_done += 1
        finished_here = summary.instances_done - self._done_at_start
        elapsed = time.perf_counter() - self._started
        remaining = summary.instances_total - summary.instances_done
        eta = elapsed / finished_here * remaining if finished_here else None
        outcome_text = f"{len(outcome.reasons)} reasons" if not stopped else "stopped after JUSTIFY"
        self._emit(
            "instance", summary, instance_id=instance.instance_id, eta=eta, message=outcome_text
        )

    def _record(
        self,
        run_id: str,
        instance: InstanceRecord,
        task: GenerationTask,
        seed: int,
        generation: Generation,
    ) -> GenerationRecord:
        """A finished generation parsed and scored (every span's relevance in one batch)."""
        text, tokens = generation.text, generation.tokens
        parsed = self._parse(task.stage, text)
        spans = [(parsed.decision_start, parsed.decision_end)]
        spans += [(reason.start, reason.end) for reason in parsed.reasons]
        decision_score, *reason_scores = score_spans(text, tokens, spans, self.similarity)
        reasons = []
        diagnostics: list[tuple[str, str]] = []
        for index, (reason, score) in enumerate(zip(parsed.reasons, reason_scores, strict=True)):
            if not score.token_indices:
                diagnostics.append(("reason without tokens", f"reason {index}"))
            reasons.append(
                ReasonRecord(
                    index,
                    reason.text,
                    reason.start,
                    reason.end,
                    score.token_indices[0] if score.token_indices else None,
                    len(score.token_indices),
                    score.nll,
                    score.relevance,
                    score.confidence,
                )
            )
        if not parsed.decision_sentence:
            diagnostics.append(("no decision sentence", ""))
        if generation.finish_reason == "length":
            diagnostics.append(("truncated", f"stopped at {len(tokens)} new tokens"))
        if task.stage == "justify" and not reasons:
            diagnostics.append(("no reasons", ""))
        return GenerationRecord(
            run_id=run_id,
            instance_id=instance.instance_id,
            stage=task.stage,
            sub_index=task.sub_index,
            test=task.test,
            seed=seed,
            prompt_text=generation.prompt_text,
            prompt_tokens=generation.prompt_token_count,
            output_text=text,
            finish_reason=generation.finish_reason,
            decision=parsed.decision,
            decision_source=parsed.source,
            decision_sentence=parsed.decision_sentence or None,
            decision_start=parsed.decision_start,
            decision_end=parsed.decision_end,
            decision_confidence=decision_score.confidence,
            seconds=generation.seconds,
            tokens=list(tokens),
            reasons=reasons,
            diagnostics=diagnostics,
        )

    def _parse(self, stage: str, text: str) -> ParsedOutput:
        """JUSTIFY's stance or a follow-up's decision Y, the decision span and the reasons."""
        if stage == "justify":
            justify = parse_justify(text, rules=self.config.parse_rules)
            return ParsedOutput(
                justify.stance,
                None,
                justify.decision_sentence,
                justify.decision_start,
                justify.decision_end,
                justify.reasons,
            )
        followup = parse_followup(
            text, stage, rules=self.config.parse_rules, similarity=self._similarity_fn
        )
        return ParsedOutput(
            followup.decision,
            followup.decision_source,
            followup.decision_sentence,
            followup.decision_start,
            followup.decision_end,
            followup.reasons,
        )

    def _save_result(
        self,
        run_id: str,
        instance: InstanceRecord,
        stance: Stance,
        n_reasons: int,
        stopped: str | None,
        rows: Sequence[dict[str, Any]],
    ) -> None:
        result = InstanceResult(run_id, instance.instance_id, stance, n_reasons, stopped)
        if stopped is None:
            generations = [
                StoredGeneration(
                    str(g["stage"]),
                    int(str(g["sub_index"])),
                    str(g["decision"]),
                    _float(g["decision_confidence"]),
                    [
                        StoredReason(str(t), _float(c))
                        for t, c in zip(g["reason_texts"], g["reason_confidences"], strict=True)
                    ],
                )
                for g in rows
            ]
            result.reason_metrics, result.instance_metrics = compute_instance_metrics(
                instance.text, generations, self.similarity, self.config.weights
            )
        else:
            justify = next(g for g in rows if g["stage"] == "justify")
            result.instance_metrics = [
                ("decision_confidence_justify", _float(justify["decision_confidence"]), 1)
            ]
        self.store.save_instance_result(result)

    def expected_generations(self) -> dict[str, int]:
        """Generations a run is expected to need per stage (after JUSTIFY, an estimate from the
        instances seen so far: how many went on, and with how many reasons)."""
        total = self._instances_total
        seen = len(self._followups)
        went_on = sum(1 for n in self._followups.values() if n > 0)
        reasons = sum(self._followups.values())
        remaining = max(total - seen, 0)
        expected = {}
        for name in self.config.stages:
            if name == "justify":
                expected[name] = total
            elif name == "individual":
                per_instance = reasons / seen if seen else 0.0
                expected[name] = reasons + round(remaining * per_instance)
            else:
                share = went_on / seen if seen else 1.0
                expected[name] = went_on + round(remaining * share)
        return expected

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
        rate = self._tokens / elapsed if elapsed > 0 else 0.0
        self.listener(
            ProgressEvent(
                kind=kind,  # type: ignore[arg-type]
                run_id=summary.run_id,
                stage=stage,
                instance_id=instance_id,
                instances_done=summary.instances_done,
                instances_total=summary.instances_total,
                generations_done=dict(summary.generations),
                generations_expected=self.expected_generations(),
                sub_index=sub_index,
                tokens_per_second=rate,
                eta_seconds=eta,
                message=message,
            )
        )


def _followups_from_keys(stored: set[tuple[str, str, int]]) -> dict[str, int]:
    """What stored generations tell of each instance's JUSTIFY outcome (for estimates)."""
    followups: dict[str, int] = {}
    for instance_id, stage, sub_index in stored:
        went_on = 0 if stage == "justify" else sub_index + 1 if stage == "individual" else 1
        followups[instance_id] = max(followups.get(instance_id, 0), went_on)
    return followups


def _justify_outcome(rows: Sequence[dict[str, Any]]) -> JustifyOutcome:
    """The stance and reasons of an instance's stored JUSTIFY row."""
    justify = next(g for g in rows if g["stage"] == "justify")
    return JustifyOutcome(cast(Stance, justify["decision"]), tuple(justify["reason_texts"]))


def _float(value: object) -> float:
    return math.nan if value is None else float(value)  # type: ignore[arg-type]
