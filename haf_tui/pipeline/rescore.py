"""``haf rescore``: a finished run's HAF values recomputed with another similarity model g,
stored as a derived run, without generating anything again.

Every stored HAF generation of the parent (its output and its recorded tokens) goes through
the HAF suite's own :meth:`~haf_tui.methods.haf.suite.suite.HafSuite.record` (parse, the
follow-up decision where similarity decides it, TokenSAR relevance and confidence of every
span) and each instance through its :meth:`~haf_tui.methods.haf.suite.suite.HafSuite.finish`
(the six metrics): the code a run scores with, fed the stored answers instead of a model's.
The derived run holds HAF's values only: the other suites' (classify, rationales, judge) do
not depend on g and stay with the parent. It resumes like a run (the instances whose results
are stored are skipped; one stopped inside an instance is scored again whole).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from haf_tui.config import RunConfig, SimilaritySettings
from haf_tui.inference.base import Generation
from haf_tui.methods.base import Answer, SuiteContext, SuiteOutcome, Task
from haf_tui.methods.haf.suite.suite import HAF
from haf_tui.pipeline.models import package_versions
from haf_tui.similarity import (
    SimilarityError,
    SimilarityKind,
    SimilarityModel,
    SimilarityRefusedError,
    check_device,
    load_similarity,
)
from haf_tui.store import Store
from haf_tui.store.derived_runs import (
    RescoredInstance,
    children_of,
    create_derived_run,
    discard_unfinished,
    generation_source,
    save_rescored_instances,
    source_generations_of,
)
from haf_tui.store.records import GenerationRecord, InstanceRecord, InstanceResult
from haf_tui.vocabulary import HafError, first_line

RescoreProgress = Callable[[int, int], None]
"""Called after every instance with (instances done, instances in the re-score)."""


class RescoreError(HafError, RuntimeError):
    """A re-score that cannot be made (one line)."""


@dataclass(frozen=True)
class RescoreSummary:
    """How a re-score ended: the derived run, its parent, instances done of the total, its
    status and the seconds it took this time; ``resumed``: it went on with a stored one. A
    re-score asked to stop before it began: ``stopped``, the run id empty when none was made."""

    run_id: str
    parent_run_id: str
    instances_done: int
    instances_total: int
    status: str
    seconds: float
    resumed: bool


INSTANCES_PER_BATCH = 16
"""How many instances' pairs g scores in one batch before they are recorded: every distinct
sentence of the batch encoded once, in one call (a bi-encoder's per-call cost, paid per
follow-up decision and per span, was most of a re-score's time)."""


def load_rescore_similarity(
    model: str, kind: SimilarityKind = "bi-encoder", *, device: str = "cpu"
) -> SimilarityModel:
    """The similarity model to re-score with, or one line saying how to make it loadable (a
    device it cannot run on: one line saying so, before anything loads)."""
    try:
        check_device(device)
        return load_similarity(model, kind, device=device)
    except SimilarityRefusedError as exc:
        raise RescoreError(str(exc)) from exc
    except SimilarityError as exc:
        cause = first_line(exc.__cause__) if exc.__cause__ else first_line(exc)
        if _is_path(model):
            raise RescoreError(
                f"cannot load the {kind} at {model} ({cause[:160]}): pass the folder of a "
                "saved sentence-transformers model (its modules.json beside the weights), or "
                "a model's name in the Hugging Face cache"
            ) from exc
        raise RescoreError(
            f"cannot load the {kind} {model!r} ({cause[:160]}): put it in the Hugging Face "
            f"cache (on a machine with a connection: huggingface-cli download {model}, then "
            "copy ~/.cache/huggingface here) or pass its local folder"
        ) from exc


def _is_path(model: str) -> bool:
    """Whether ``model`` names a folder rather than a Hub id (``org/name``: one slash)."""
    return (
        model.startswith(("/", ".", "~"))
        or model.count("/") > 1
        or Path(model).expanduser().exists()
    )


def rescore_run(
    store: Store,
    run_id: str,
    similarity: SimilarityModel,
    kind: SimilarityKind = "bi-encoder",
    *,
    device: str = "cpu",
    on_progress: RescoreProgress | None = None,
    stop_event: threading.Event | None = None,
    new_run_id: Callable[[], str] | None = None,
    score_ahead: int = INSTANCES_PER_BATCH,
) -> RescoreSummary:
    """Re-score the finished run ``run_id`` (a derived run: its parent) with ``similarity``:
    a new derived run, or the unfinished one with this g, resumed. Stops between instances
    when ``stop_event`` is set (set before it begins: nothing scored, nothing written); Ctrl-C
    leaves the batches done stored and the run stopped. Each batch of instances is stored in
    one transaction (with the run's status when it is the last), its progress said once it is.

    g scores the pairs of ``score_ahead`` instances at a time in one batch (0: each pair when
    the suite asks for it, in the batches the run itself used: a bi-encoder's float32
    embeddings differ in their last bits with their batch, about 1e-7). The first batch's
    pairs are g's probe (:func:`probe_similarity`): scored before anything is written, a g
    that cannot score them leaves nothing behind (a probe pair of its own was an encoder call
    of its own, 15 ms to 0.9 s, for two sentences)."""
    parent_id = generation_source(store, store.get_run(run_id).run_id)
    parent = store.get_run(parent_id)
    parent_config = RunConfig.model_validate_json(parent.config_json)
    if "haf" not in parent_config.suites:
        raise RescoreError(f"run {parent_id} has no HAF suite: none of its values depend on g")
    status = store.shown_status(parent_id, parent.status)
    if status != "finished":
        raise RescoreError(
            f"run {parent_id} is {status}: resume it to the end first (a re-score reads a "
            "finished run)"
        )
    parent_done = store.finished_instances(parent_id)
    instances = [
        i for i in store.instances(parent.dataset_id, None) if i.instance_id in parent_done
    ]
    name = similarity.name
    existing = [
        d
        for d in children_of(store, parent_id)
        if d.similarity_model == name and d.similarity_kind == kind
    ]
    config = parent_config.model_copy(
        update={
            "similarity": SimilaritySettings(model=name, kind=kind, device=device),
            "suites": ("haf",),
            "settings": {"haf": parent_config.settings.get("haf", {})},
        }
    )
    if existing:
        derived_id, resumed = existing[0].run_id, True
        done = store.finished_instances(derived_id)
    else:
        from haf_tui.pipeline.runs import fresh_run_id

        made = new_run_id() if new_run_id is not None else fresh_run_id(store)
        derived_id, resumed, done = made, False, set()
    todo = [i for i in instances if i.instance_id not in done]
    context = SuiteContext(derived_id, config, similarity)
    step = max(1, score_ahead)
    first = todo[:step] if score_ahead > 0 else []
    if stop_event is not None and stop_event.is_set():  # (before g's probe: nothing scored)
        shown = derived_id if existing else ""
        done_count = len(instances) - len(todo)
        return RescoreSummary(shown, parent_id, done_count, len(instances), "stopped", 0.0, resumed)
    started = time.perf_counter()  # (the first batch's scoring is the re-score's own)
    first_sources = _sources(store, parent_id, first) if first else {}
    probe_similarity(similarity, _pairs_ahead(context, first, first_sources))
    if existing:
        discard_unfinished(store, derived_id)  # (the instances done stay done)
        if todo:
            store.update_run(derived_id, status="running")
    else:
        create_derived_run(
            store,
            derived_id,
            parent_id,
            config_json=config.model_dump_json(),
            similarity_model=name,
            similarity_kind=kind,
            n_planned=len(instances),
            versions=package_versions(),
            running=True,  # (in its own transaction: one commit less)
        )
    total, finished = len(instances), len(instances) - len(todo)
    if not todo:
        store.update_run(derived_id, status="finished")
        return RescoreSummary(derived_id, parent_id, finished, total, "finished", 0.0, resumed)
    status = "stopped"
    error: str | None = None
    try:
        for chunk_start in range(0, len(todo), step):
            chunk = todo[chunk_start : chunk_start + step]
            if stop_event is not None and stop_event.is_set():
                break
            try:
                if chunk_start == 0 and first:  # (read and scored as the probe)
                    sources = first_sources
                else:
                    sources = _sources(store, parent_id, chunk)
                    if score_ahead > 0:
                        _score_ahead(context, chunk, sources)
            except (SimilarityError, RescoreError) as exc:
                status, error = "failed", first_line(exc)
                raise RescoreError(
                    f"re-score {derived_id} of run {parent_id} failed at instances "
                    f"{chunk[0].instance_id}…{chunk[-1].instance_id}: {error}"
                ) from exc
            recorded: list[RescoredInstance] = []
            try:
                for instance in chunk:
                    if recorded and stop_event is not None and stop_event.is_set():
                        break
                    recorded.append(_rescored(context, instance, sources[instance.instance_id]))
            except (SimilarityError, RescoreError) as exc:  # (g's scores unusable: failed,
                status, error = "failed", first_line(exc)  # never "finished" with NULLs)
                save_rescored_instances(store, recorded)  # (the instances before it kept)
                raise RescoreError(
                    f"re-score {derived_id} of run {parent_id} failed at instance "
                    f"{chunk[len(recorded)].instance_id}: {error}"
                ) from exc
            last = finished + len(recorded) == total  # (the run set finished with it)
            elapsed = time.perf_counter() - started if last else None
            save_rescored_instances(store, recorded, finished_after=elapsed)  # (a transaction)
            status = "finished" if last else status
            for _ in recorded:
                finished += 1
                if on_progress is not None:
                    on_progress(finished, total)
    finally:
        seconds = time.perf_counter() - started
        if status != "finished":  # (a finished run's status and time: its last batch's)
            store.update_run(derived_id, status=status, seconds=seconds, error=error)
    return RescoreSummary(derived_id, parent_id, finished, total, status, seconds, resumed)


PROBE = ("a probe of the similarity model", "another text to compare it with")
"""The pair g scores before a derived run is made when no other is asked of it: a g that
cannot score (a device it cannot run on, weights that give NaN) leaves nothing behind."""


def probe_similarity(similarity: SimilarityModel, pairs: Sequence[tuple[str, str]] = ()) -> None:
    """``pairs`` scored (none: :data:`PROBE`), or one line saying why g cannot score."""
    try:
        similarity.similarities(list(pairs) or [PROBE])
    except SimilarityError as exc:
        raise RescoreError(first_line(exc)) from exc
    except (RuntimeError, ValueError, TypeError, NotImplementedError) as exc:  # (torch's)
        raise RescoreError(
            f"similarity model {similarity.name!r} cannot score a pair: "
            f"{first_line(exc)[:200] or type(exc).__name__}"
        ) from exc


Source = tuple[Task, int, Generation]
"""A stored generation as the suite records it: its task, its seed and the answer."""


class PairCollector:
    """A similarity model that scores nothing: it writes down every pair asked of it, in
    order, and answers 0.5. The suite's code run over an instance with it names the pairs
    the instance will ask of g (a follow-up decided by similarity may ask a few others once
    scored with g's real values: those are scored when asked)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.pairs: dict[tuple[str, str], None] = {}

    def similarities(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        self.pairs.update(dict.fromkeys(pairs))
        return [0.5] * len(pairs)


def _score_ahead(
    context: SuiteContext,
    instances: Sequence[InstanceRecord],
    sources: dict[str, list[Source]],
) -> None:
    """Every pair ``instances`` will ask of g, scored in one batch (g keeps the scores: a
    cached g by pair, a bi-encoder its embeddings by sentence)."""
    pairs = _pairs_ahead(context, instances, sources)
    if pairs:
        context.similarity.similarities(pairs)


def _pairs_ahead(
    context: SuiteContext,
    instances: Sequence[InstanceRecord],
    sources: dict[str, list[Source]],
) -> list[tuple[str, str]]:
    """Every pair ``instances`` will ask of g, in the order asked, each once."""
    collector = PairCollector(context.similarity.name)
    ahead = SuiteContext(context.run_id, context.config, collector)
    for instance in instances:
        _scored(ahead, instance, sources[instance.instance_id])
    return list(collector.pairs)


def _sources(
    store: Store, parent_id: str, instances: Sequence[InstanceRecord]
) -> dict[str, list[Source]]:
    """The parent's stored HAF generations of each of ``instances``, in stage order (one
    read for them all)."""
    ids = [instance.instance_id for instance in instances]
    stored = source_generations_of(store, parent_id, ids, HAF.stages)
    for instance_id in ids:
        if not stored.get(instance_id):
            raise RescoreError(f"instance {instance_id} of run {parent_id} has no answers")
    return {
        instance_id: [
            (
                Task(source.stage, source.sub_index, source.test, ()),
                source.seed,
                Generation(
                    source.prompt_text,
                    source.prompt_tokens,
                    source.output_text,
                    list(source.tokens),
                    source.finish_reason,
                    source.seconds,
                ),
            )
            for source in stored[instance_id]
        ]
        for instance_id in ids
    }


def _scored(
    context: SuiteContext, instance: InstanceRecord, sources: Sequence[Source]
) -> tuple[list[GenerationRecord], SuiteOutcome]:
    """Every generation recorded with the context's g, and the instance's outcome."""
    records = [
        HAF.record(context, instance, task, seed, generation, None)
        for task, seed, generation in sources
    ]
    return records, HAF.finish(context, instance, [Answer.of_record(r) for r in records])


def _rescored(
    context: SuiteContext, instance: InstanceRecord, sources: Sequence[Source]
) -> RescoredInstance:
    """One instance: every stored HAF generation recorded again with the new g (stored
    without its texts and tokens, each with its output's token count), and its results from
    those answers."""
    records, outcome = _scored(context, instance, sources)
    counted = [
        (record, len(generation.tokens))
        for record, (_, _, generation) in zip(records, sources, strict=True)
    ]
    result = InstanceResult(
        context.run_id, instance.instance_id, outcome.stance, outcome.n_reasons, outcome.stopped
    )
    result.reason_metrics = list(outcome.reason_metrics)
    result.instance_metrics = list(outcome.instance_metrics)
    result.rows = dict(outcome.rows)
    return counted, result
