"""The staged HAF pipeline: generate, parse, score and store, one generation at a time.

Every finished generation is committed with its tokens and parsed reasons before the next
starts; an instance's metrics are committed when its last stage is done. A resumed run skips
finished instances and stored generations. Each generation's seed comes from the run's seed
and what is generated, and every prompt is evaluated from scratch, so a resumed run produces
what an uninterrupted one would have.
"""

from __future__ import annotations

import math
import threading
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from haf_tui.config import RunConfig
from haf_tui.inference.base import GeneratedToken, GenerationBackend, TokenCallback
from haf_tui.parsing import Reason, parse_followup, parse_justify
from haf_tui.pipeline.events import ProgressEvent, ProgressListener, ignore_progress
from haf_tui.pipeline.instance_metrics import (
    StoredGeneration,
    StoredReason,
    compute_instance_metrics,
)
from haf_tui.pipeline.stages import STAGES, GenerationTask, JustifyOutcome
from haf_tui.prompts import Stance
from haf_tui.scoring import score_span
from haf_tui.similarity import SimilarityModel
from haf_tui.store.db import Store
from haf_tui.store.records import GenerationRecord, InstanceRecord, InstanceResult, ReasonRecord


def generation_seed(run_seed: int, *parts: str) -> int:
    """A per-generation seed from the run's seed and what is generated (order-independent)."""
    return zlib.crc32("/".join(parts).encode("utf-8"), run_seed) & 0x7FFFFFFF


class RunAbortedError(Exception):
    """The generation in flight was abandoned because the run was cancelled."""


@dataclass
class RunControl:
    """How a caller steers a run from another thread.

    ``stop``: finish the generation in flight, then stop. ``abort``: abandon the generation in
    flight at its next token (nothing of it is stored), then stop. ``pause``: wait before the
    next generation until cleared. A stopped or aborted run is resumable.
    """

    stop: threading.Event = field(default_factory=threading.Event)
    abort: threading.Event = field(default_factory=threading.Event)
    pause: threading.Event = field(default_factory=threading.Event)

    def cancel(self) -> None:
        """Stop now: abandon the generation in flight."""
        self.abort.set()
        self.stop.set()
        self.pause.clear()


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
        self._generation_seconds = 0.0
        # instance id -> reasons its JUSTIFY passed on (0: stopped there), for the estimates
        self._followups: dict[str, int] = {}
        self._instances_total = 0

    def _similarity_fn(self, a: str, b: str) -> float:
        return self.similarity.similarities([(a, b)])[0]

    def run(self, run_id: str) -> RunSummary:
        """Work through every instance of the run that is not finished yet."""
        instances = self.store.instances(self.config.dataset_id, self.config.limit)
        finished = self.store.finished_instances(run_id)
        stored = self.store.generation_keys(run_id)
        counts = {name: sum(1 for k in stored if k[1] == name) for name in self.config.stages}
        summary = RunSummary(run_id, "running", len(finished), len(instances), counts)
        self._instances_total = len(instances)
        self._followups = _followups_from_keys(stored)
        self.store.update_run(run_id, status="running")
        self._emit("run-started", summary, message=f"{len(finished)} of {len(instances)} done")
        started = time.perf_counter()
        instance_seconds: list[float] = []
        try:
            for instance in instances:
                if instance.instance_id in finished:
                    continue
                if self.stop_event.is_set():
                    summary.status = "interrupted"
                    break
                instance_started = time.perf_counter()
                if not self._run_instance(run_id, instance, stored, summary):
                    summary.status = "interrupted"
                    break
                instance_seconds.append(time.perf_counter() - instance_started)
                summary.instances_done += 1
                remaining = summary.instances_total - summary.instances_done
                eta = sum(instance_seconds) / len(instance_seconds) * remaining
                reasons = self._followups.get(instance.instance_id, 0)
                outcome = f"{reasons} reasons" if reasons else "stopped after JUSTIFY"
                self._emit(
                    "instance", summary, instance_id=instance.instance_id, eta=eta, message=outcome
                )
            else:
                summary.status = "finished"
        except RunAbortedError:
            summary.status = "interrupted"
        except BaseException as exc:
            summary.status = "interrupted" if isinstance(exc, KeyboardInterrupt) else "failed"
            error = None if isinstance(exc, KeyboardInterrupt) else str(exc)
            self.store.update_run(
                run_id, status=summary.status, error=error, seconds=time.perf_counter() - started
            )
            raise
        summary.seconds = time.perf_counter() - started
        self.store.update_run(run_id, status=summary.status, seconds=summary.seconds)
        self._emit("run-finished", summary, message=summary.status)
        return summary

    def _run_instance(
        self,
        run_id: str,
        instance: InstanceRecord,
        stored: set[tuple[str, str, int]],
        summary: RunSummary,
    ) -> bool:
        """All stages of one instance, then its metrics; False when asked to stop."""
        explicit = self.config.prompting == "explicit"
        justify_task = STAGES["justify"].tasks(instance.text, None, explicit)[0]
        if not self._ensure(run_id, instance, justify_task, stored, summary):
            return False
        # the stored JUSTIFY row (just written, or from before a resume) decides what follows
        generations = self.store.instance_generations(run_id, instance.instance_id)
        justify = next(g for g in generations if g["stage"] == "justify")
        outcome = JustifyOutcome(cast(Stance, justify["decision"]), tuple(justify["reason_texts"]))
        stopped = (
            "unclear stance"
            if outcome.stance == "unclear"
            else "no reasons"
            if not outcome.reasons
            else None
        )
        self._followups[instance.instance_id] = 0 if stopped else len(outcome.reasons)
        if stopped is None:
            for name in self.config.stages[1:]:
                for task in STAGES[name].tasks(instance.text, outcome, explicit):
                    if not self._ensure(run_id, instance, task, stored, summary):
                        return False
            generations = self.store.instance_generations(run_id, instance.instance_id)
        self._save_result(
            run_id, instance, outcome.stance, len(outcome.reasons), stopped, generations
        )
        return True

    def _ensure(
        self,
        run_id: str,
        instance: InstanceRecord,
        task: GenerationTask,
        stored: set[tuple[str, str, int]],
        summary: RunSummary,
    ) -> bool:
        key = (instance.instance_id, task.stage, task.sub_index)
        if key in stored:
            return True
        if self.control.pause.is_set():
            self._emit("paused", summary, stage=task.stage, instance_id=instance.instance_id)
            while self.control.pause.is_set() and not self.stop_event.is_set():
                time.sleep(0.05)
            self._emit("resumed", summary, stage=task.stage, instance_id=instance.instance_id)
        if self.stop_event.is_set():
            return False
        if self.stream_tokens:
            self._emit(
                "generation-started",
                summary,
                stage=task.stage,
                instance_id=instance.instance_id,
                sub_index=task.sub_index,
            )
        record = self._generate(run_id, instance, task)
        self.store.save_generation(record)
        stored.add(key)
        summary.generations[task.stage] = summary.generations.get(task.stage, 0) + 1
        self._emit("generation", summary, stage=task.stage, instance_id=instance.instance_id)
        return True

    def _generate(
        self, run_id: str, instance: InstanceRecord, task: GenerationTask
    ) -> GenerationRecord:
        seed = generation_seed(
            self.config.decoding.seed, instance.instance_id, task.stage, str(task.sub_index)
        )
        settings = self.config.decoding.model_copy(update={"seed": seed})
        generation = self.backend.generate(
            task.messages, settings, on_token=self._token_callback(run_id, instance, task)
        )
        self._tokens += max(len(generation.tokens) - 1, 0)
        self._generation_seconds += generation.seconds - generation.prompt_seconds
        text, tokens = generation.text, generation.tokens
        parsed = self._parse(task.stage, text)
        decision_score = score_span(
            text, tokens, parsed.decision_start, parsed.decision_end, self.similarity
        )
        reasons = []
        diagnostics: list[tuple[str, str]] = []
        for index, reason in enumerate(parsed.reasons):
            score = score_span(text, tokens, reason.start, reason.end, self.similarity)
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

    def _token_callback(
        self, run_id: str, instance: InstanceRecord, task: GenerationTask
    ) -> TokenCallback:
        """Abandons the generation when the run is cancelled; streams each token to the
        listener when asked to."""
        abort, stream = self.control.abort, self.stream_tokens

        def on_token(token: GeneratedToken) -> None:
            if abort.is_set():
                raise RunAbortedError(run_id)
            if stream:
                self.listener(
                    ProgressEvent(
                        kind="token",
                        run_id=run_id,
                        stage=task.stage,
                        instance_id=instance.instance_id,
                        sub_index=task.sub_index,
                        message=token.text,
                    )
                )

        return on_token

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
        rate = self._tokens / self._generation_seconds if self._generation_seconds else 0.0
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


def _float(value: object) -> float:
    return math.nan if value is None else float(value)  # type: ignore[arg-type]
