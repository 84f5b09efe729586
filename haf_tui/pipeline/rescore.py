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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from haf_tui.config import RunConfig, SimilaritySettings
from haf_tui.inference.base import Generation
from haf_tui.methods.base import Answer, SuiteContext, Task
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
    children_of,
    create_derived_run,
    discard_unfinished,
    generation_source,
    save_rescored_generation,
    source_generations,
)
from haf_tui.store.records import InstanceRecord, InstanceResult
from haf_tui.vocabulary import HafError, first_line

RescoreProgress = Callable[[int, int], None]
"""Called after every instance with (instances done, instances in the re-score)."""


class RescoreError(HafError, RuntimeError):
    """A re-score that cannot be made (one line)."""


@dataclass(frozen=True)
class RescoreSummary:
    """How a re-score ended: the derived run, its parent, instances done of the total, its
    status and the seconds it took this time; ``resumed``: it went on with a stored one."""

    run_id: str
    parent_run_id: str
    instances_done: int
    instances_total: int
    status: str
    seconds: float
    resumed: bool


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
) -> RescoreSummary:
    """Re-score the finished run ``run_id`` (a derived run: its parent) with ``similarity``:
    a new derived run, or the unfinished one with this g, resumed. Stops between instances
    when ``stop_event`` is set; Ctrl-C leaves the instances done stored and the run stopped."""
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
    probe_similarity(similarity)
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
        discard_unfinished(store, derived_id)
    else:
        from haf_tui.pipeline.runs import new_run_id as fresh_id

        derived_id, resumed = (new_run_id or fresh_id)(), False
        create_derived_run(
            store,
            derived_id,
            parent_id,
            config_json=config.model_dump_json(),
            similarity_model=name,
            similarity_kind=kind,
            n_planned=len(instances),
            versions=package_versions(),
        )
    done = store.finished_instances(derived_id)
    todo = [i for i in instances if i.instance_id not in done]
    total, finished = len(instances), len(instances) - len(todo)
    if not todo:
        store.update_run(derived_id, status="finished")
        return RescoreSummary(derived_id, parent_id, finished, total, "finished", 0.0, resumed)
    context = SuiteContext(derived_id, config, similarity)
    store.update_run(derived_id, status="running")
    started = time.perf_counter()
    status = "stopped"
    error: str | None = None
    try:
        for instance in todo:
            if stop_event is not None and stop_event.is_set():
                break
            try:
                _rescore_instance(store, context, parent_id, instance)
            except (SimilarityError, RescoreError) as exc:  # (g's scores unusable: failed,
                status, error = "failed", first_line(exc)  # never "finished" with NULLs)
                raise RescoreError(
                    f"re-score {derived_id} of run {parent_id} failed at instance "
                    f"{instance.instance_id}: {error}"
                ) from exc
            finished += 1
            if on_progress is not None:
                on_progress(finished, total)
        else:
            status = "finished"
    finally:
        seconds = time.perf_counter() - started
        store.update_run(derived_id, status=status, seconds=seconds, error=error)
    return RescoreSummary(derived_id, parent_id, finished, total, status, seconds, resumed)


PROBE = ("a probe of the similarity model", "another text to compare it with")
"""The pair g scores before a derived run is made: a g that cannot score (a device it cannot
run on, weights that give NaN) leaves nothing behind."""


def probe_similarity(similarity: SimilarityModel) -> None:
    """One pair scored, or one line saying why g cannot score."""
    try:
        similarity.similarities([PROBE])
    except SimilarityError as exc:
        raise RescoreError(first_line(exc)) from exc
    except (RuntimeError, ValueError, TypeError, NotImplementedError) as exc:  # (torch's)
        raise RescoreError(
            f"similarity model {similarity.name!r} cannot score a pair: "
            f"{first_line(exc)[:200] or type(exc).__name__}"
        ) from exc


def _rescore_instance(
    store: Store, context: SuiteContext, parent_id: str, instance: InstanceRecord
) -> None:
    """One instance: every stored HAF generation recorded again with the new g (stored
    without its texts and tokens), then its results from those answers."""
    answers = []
    for source in source_generations(store, parent_id, instance.instance_id, HAF.stages):
        generation = Generation(
            source.prompt_text,
            source.prompt_tokens,
            source.output_text,
            list(source.tokens),
            source.finish_reason,
            source.seconds,
        )
        task = Task(source.stage, source.sub_index, source.test, ())
        record = HAF.record(context, instance, task, source.seed, generation, None)
        save_rescored_generation(store, record, len(source.tokens))
        answers.append(Answer.of_record(record))
    if not answers:
        raise RescoreError(f"instance {instance.instance_id} of run {parent_id} has no answers")
    outcome = HAF.finish(context, instance, answers)
    result = InstanceResult(
        context.run_id, instance.instance_id, outcome.stance, outcome.n_reasons, outcome.stopped
    )
    result.reason_metrics = list(outcome.reason_metrics)
    result.instance_metrics = list(outcome.instance_metrics)
    result.rows = dict(outcome.rows)
    store.save_instance_result(result)
