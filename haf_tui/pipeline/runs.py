"""One way to run an evaluation, for both faces: a :class:`RunRequest` (a new run: its
config and dataset; or a resume: its id) and :func:`start_or_resume`, then :func:`execute_run`.

Everything that can fail on bad input (the model file, the chat format, the dataset, the
suites, the similarity model) is checked before the run row is written, so a refused run
leaves nothing behind. The dataset a face picked (:class:`DatasetChoice`, or a name and a
file on the command line) is resolved here, once.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from haf_tui.config import RunConfig
from haf_tui.datasets import (
    DEFAULT_SAMPLE,
    DEFAULT_SEED,
    SAMPLE_PREFIX,
    Dataset,
    DatasetError,
    builtin_sample,
    demo_texts,
    find_paper_dataset,
    import_paper_sample,
    load_file,
    load_paper_dataset,
    load_stored,
    paper_datasets,
    paper_sample_file,
    sample_dataset,
    stated_mapping,
    store_dataset,
)
from haf_tui.datasets.builtin_samples import stored_form
from haf_tui.datasets.formats import RunDataset, format_for
from haf_tui.inference.base import InferenceError
from haf_tui.messages import ChatMessage
from haf_tui.methods.declared_parts import dataset_formats, run_datasets
from haf_tui.methods.registry import (
    first_tasks,
    methods,
    settle_config,
    suites_named,
)
from haf_tui.pipeline.events import ProgressListener, ignore_progress
from haf_tui.pipeline.models import LoadedModels, file_sha256, load_models, package_versions
from haf_tui.pipeline.runner import HafRunner, RunControl, RunSummary
from haf_tui.pipeline.served import check_resumed_model, record_servers
from haf_tui.store import Store, StoreError
from haf_tui.store.campaigns import run_id_taken
from haf_tui.store.dataset_catalog import find_datasets
from haf_tui.store.derived_runs import parent_run
from haf_tui.store.records import RunRecord


@dataclass(frozen=True)
class DatasetChoice:
    """A dataset picked in a face: ``kind`` says where from, ``name`` which (a path for
    files, a key for paper datasets, an id or name for stored ones); a seeded sample of
    ``sample_size`` instances is evaluated (None: all; paper datasets: 1024). A file without
    a ``text_column`` has its columns guessed; a paper dataset with ``files`` reads them
    instead of the Hub's cache."""

    kind: Literal["builtin", "stored", "paper", "paper-sample", "file", "run", "format"]
    name: str
    sample_size: int | None = None
    seed: int = DEFAULT_SEED
    text_column: str | None = None
    id_column: str | None = None
    label_column: str | None = None
    guess_label_column: bool = True
    """Without ``label_column``: a file's label column guessed (a well-known name with
    label-like values); False: none (the wizard's label picked as none)."""
    label_threshold: float | None = None
    """A file's label column is a score, toxic from this value up (None: its rule guessed)."""
    label_map: tuple[str, ...] = ()
    """A file's label values that mean toxic (``toxic=A,B``) or non-toxic (``non-toxic=C``)."""
    files: tuple[str, ...] = ()
    offline: bool | None = None
    """A paper dataset from the local cache only (True), or as ``HF_HUB_OFFLINE`` says."""
    format: str = ""
    """A file of a method's own format (``Method.dataset_formats``): the format's name; a
    dataset of a stored run (kind ``run``, ``Method.run_datasets``): its prefix."""


DEMO_TEXTS = "demo"
"""The name of the demo's texts (:func:`~haf_tui.datasets.demo_texts`) in a builtin choice:
``haf run --demo`` takes them; ``--dataset sample`` and the workbench's demo source (the
sample's first texts) do not."""
DEMO_CHOICE = DatasetChoice("builtin", DEMO_TEXTS)


def choice_by_name(name: str, file: str | None, store: Store) -> DatasetChoice:
    """The dataset a command line names: ``sample`` (built-in), a stored dataset's name or
    id, a paper dataset's name, a file (with a paper dataset's name: that dataset's
    downloaded file), ``run:RUN_ID``: that run's JUSTIFY explanations (to judge them), or
    ``edits:RUN_ID``: those and their edits (the judge's sensitivity,
    docs/methods/judge.md#56-sensitivity-to-edits);
    ``paper-sample:NAME`` not stored yet: the paper's sample file of NAME
    (:func:`~haf_tui.datasets.paper_sample_file`)."""
    from_runs = run_datasets()
    for source in from_runs:
        if name.startswith(f"{source.prefix}:"):
            return DatasetChoice(
                "run", name.removeprefix(f"{source.prefix}:"), format=source.prefix
            )
    own = format_for(dataset_formats(), name, file) if file else None
    if file and own is not None:
        return DatasetChoice("format", file, format=own.name)
    paper = find_paper_dataset(name) if name != "sample" else None
    if file:
        if paper is not None:
            return DatasetChoice("paper", paper.key, files=(file,))
        return DatasetChoice("file", file)
    if name == "sample":
        return DatasetChoice("builtin", "sample")
    if find_datasets(store, name):
        return DatasetChoice("stored", name)
    if name.startswith(SAMPLE_PREFIX):  # not imported yet: the paper's sample file
        return DatasetChoice("paper-sample", str(paper_sample_file(name[len(SAMPLE_PREFIX) :])))
    if paper is not None:
        return DatasetChoice("paper", paper.key)
    known = ", ".join(d.key for d in paper_datasets())
    runs = "".join(f", {s.prefix}:RUN_ID ({s.description})" for s in from_runs)
    raise DatasetError(
        f"unknown dataset {name!r}: use sample, a stored dataset (haf datasets list), "
        f"a paper dataset ({known}){runs} or --file PATH"
    )


def run_dataset_choice(
    value: str, *, seed: int = 0, sample_size: int | None = None
) -> DatasetChoice | None:
    """The choice of a dataset made of a stored run (``PREFIX:RUN_ID``, a method's
    ``run_datasets``: what the wizard offers for a judge run), or None for any other value."""
    prefix, _, run_id = value.partition(":")
    if not run_id or all(source.prefix != prefix for source in run_datasets()):
        return None
    return DatasetChoice("run", run_id, format=prefix, seed=seed, sample_size=sample_size)


def paper_selection(suites: Sequence[str]) -> Literal["paper", "every_post"]:
    """Which posts of a paper dataset a run evaluates, from what its methods want
    (``Method.posts``): the paper's selection when one of them wants it (one run's instances
    are shared by its suites), every post when one wants that (the rationales method:
    HateXplain's normal posts too, docs/methods/rationales.md), else the paper's."""
    wanted = {method.posts for name, method in methods().items() if name in suites}
    return "every_post" if "every_post" in wanted and "paper" not in wanted else "paper"


def resolve_dataset(
    choice: DatasetChoice, store: Store | None, suites: Sequence[str] = ()
) -> Dataset:
    """The instances of ``choice`` (from the package, a file, the database or the Hub cache),
    sampled with its seed when a sample size is given; a paper dataset's posts as the run's
    ``suites`` select them (:func:`paper_selection`)."""
    if choice.kind == "paper":
        selection = paper_selection(suites)
        if choice.files:
            return load_paper_dataset(choice.name, files=list(choice.files), selection=selection)
        return load_paper_dataset(
            choice.name,
            n=choice.sample_size or DEFAULT_SAMPLE,
            seed=choice.seed,
            offline=choice.offline,
            selection=selection,
        )
    if choice.kind == "builtin":
        dataset = demo_texts() if choice.name == DEMO_TEXTS else builtin_sample()
    elif choice.kind == "file":
        mapping = stated_mapping(
            choice.name, text=choice.text_column, id=choice.id_column, label=choice.label_column
        )
        dataset = load_file(
            choice.name,
            mapping,
            label_threshold=choice.label_threshold,
            label_map=choice.label_map,
            guess_label_column=choice.guess_label_column,
        )
    elif choice.kind == "paper-sample":
        dataset = import_paper_sample(choice.name)
    elif choice.kind == "stored" and store is not None:
        dataset = load_stored(store, choice.name)
    elif choice.kind == "format" and (own := format_for(dataset_formats(), choice.format, None)):
        dataset = own.read([Path(choice.name)])
    elif choice.kind == "run" and store is not None and (source := _from_run(choice.format)):
        dataset = source.load(store, choice.name, seed=choice.seed)
    else:
        raise DatasetError(f"unknown dataset {choice.kind}:{choice.name}")
    if choice.sample_size and choice.sample_size < len(dataset.instances):
        dataset = sample_dataset(dataset, choice.sample_size, choice.seed)
    return dataset


def _from_run(prefix: str) -> RunDataset | None:
    """The dataset of a run's answers whose prefix is ``prefix`` (a method's)."""
    return next((s for s in run_datasets() if s.prefix == prefix), None)


@dataclass
class RunRequest:
    """A run to start (``config`` and ``dataset``) or to resume (``resume_run_id``, with
    runtime-only model settings in ``overrides``); ``preloaded``: models already loaded."""

    config: RunConfig | None = None
    dataset: Dataset | None = None
    resume_run_id: str | None = None
    overrides: dict[str, Any] = field(default_factory=dict)
    preloaded: LoadedModels | None = None
    run_id: str | None = None
    """A new run's id chosen beforehand (a campaign claims it first); None: a fresh one."""


@dataclass
class StartedRun:
    """A run ready to execute: its id, its config and its loaded models."""

    run_id: str
    config: RunConfig
    models: LoadedModels
    dataset: Dataset | None = None


def start_or_resume(store: Store, request: RunRequest) -> StartedRun:
    """Load the models, then create the run (a new one) or read its stored config (a
    resume: refused when the GGUF is not the run's file or the servers serve another model;
    servers not recorded yet are added to the run's record); nothing is written when
    something is refused."""
    if request.resume_run_id:
        run_id, config = run_config_of(store, request.resume_run_id, **request.overrides)
        models = request.preloaded or load_models(config)
        try:
            record = store.get_run(run_id)
            # the run's own GGUF, served the run's model (issue 33 §3)
            check_resumed_model(record, models.backend)
            record_servers(store, record, models.backend)
            store.account_unstored_time(run_id)  # (a killed session's time since its count)
        except BaseException:  # (refused: the model loaded here is freed now)
            if request.preloaded is None:
                models.backend.close()
            raise
        return StartedRun(run_id, config, models)
    if request.config is None or request.dataset is None:
        raise ValueError("a new run needs a config and a dataset")
    suites_named(request.config.suites)  # (an unknown suite: refused before loading)
    models = request.preloaded or load_models(request.config)
    try:
        run_id, config = create_run(
            store, request.config, request.dataset, models, run_id=request.run_id
        )
    except BaseException:  # (a prompt too long, a store error: the model loaded here freed)
        if request.preloaded is None:
            models.backend.close()
        raise
    return StartedRun(run_id, config, models, request.dataset)


def new_run_id() -> str:
    """A readable run id: date, time and a random suffix (two made in a second may clash:
    :func:`fresh_run_id` checks it against the store)."""
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(2)


def fresh_run_id(store: Store) -> str:
    """A new run id no run or claimed campaign cell of ``store`` has (re-scores made ~40 a
    second clashed: the run's INSERT failed on its key with a traceback)."""
    run_id = new_run_id()
    while run_id_taken(store, run_id):
        run_id = new_run_id()
    return run_id


def check_prompts_fit(models: LoadedModels, config: RunConfig, dataset: Dataset) -> None:
    """Refuse a run whose first prompts (JUSTIFY's, the classification's) do not fit the
    context, before anything is stored."""
    backend = models.backend
    instances = dataset.instances[: config.limit] if config.limit else dataset.instances
    for instance in instances:
        replies: dict[tuple[ChatMessage, ...], list[str]] = {}  # (each prompt counted once)
        first_of_stage: dict[str, tuple[ChatMessage, ...]] = {}
        for _, task in first_tasks(config, instance):
            # a stage's later first prompts score shorter texts (the rationales suite's texts
            # without some words): its first prompt is the longest
            if first_of_stage.setdefault(task.stage, task.messages) != task.messages:
                continue
            replies.setdefault(task.messages, []).extend([task.forced] if task.forced else [])
        counts = [backend.tokens_needed(messages, forced) for messages, forced in replies.items()]
        known = [count for count in counts if count is not None]
        needed = 1 + max(known, default=0)
        if known and needed > backend.n_ctx:
            raise InferenceError(
                f"instance {instance.instance_id}: its prompt of {needed - 1} tokens does not fit "
                f"the context of {backend.n_ctx} tokens: raise --n-ctx"
            )


def create_run(
    store: Store,
    config: RunConfig,
    dataset: Dataset,
    models: LoadedModels,
    *,
    run_id: str | None = None,
) -> tuple[str, RunConfig]:
    """Store the dataset (once) and a new run row (``run_id``, else a new id); returns the
    run id and its config. A sample of the built-in sample is stored as the one dataset its
    seed's samples share, the run's limit its size (:func:`stored_form`)."""
    check_prompts_fit(models, config, dataset)
    dataset, sample_size = stored_form(dataset)
    if sample_size is not None:
        limit = min(config.limit or sample_size, sample_size)
        config = config.model_copy(update={"limit": limit})
    store_dataset(store, dataset)  # once, with its metadata and skipped rows
    config = config.model_copy(update={"dataset_id": dataset.dataset_id})
    config = settle_config(config, store.instances(dataset.dataset_id, None))
    planned = len(store.instances(dataset.dataset_id, config.limit))
    if planned == 0:
        raise StoreError(f"dataset {dataset.name} has no instances to evaluate")
    backend = models.backend
    run_id = run_id or fresh_run_id(store)
    store.create_run(
        RunRecord(
            run_id=run_id,
            status="created",
            dataset_id=dataset.dataset_id,
            n_planned=planned,
            config_json=config.model_dump_json(),
            model_file=backend.info.path.name,
            model_size=backend.info.size_bytes,
            model_sha256=file_sha256(backend.info.path),
            model_arch=backend.info.architecture,
            model_quant=backend.info.quantization,
            chat_format=backend.chat_format,
            similarity_model=models.similarity.name,
            similarity_kind=config.similarity.kind,
            offload_supported=backend.offload_supported,
            n_gpu_layers=backend.n_gpu_layers,
            versions=package_versions() | backend.versions(),
        )
    )
    return run_id, config


RUNTIME_MODEL_SETTINGS = frozenset(
    {"n_ctx", "n_gpu_layers", "n_threads", "n_batch", "n_parallel", "extra_buffers", "servers"}
)
"""Model settings that say how a run is computed, not what: a resume may change them."""


def run_config_of(store: Store, run_id: str, **model_overrides: Any) -> tuple[str, RunConfig]:
    """A stored run's full id and config; runtime-only model settings may be overridden."""
    record = store.get_run(run_id)
    if record.status == "finished":
        raise StoreError(f"run {record.run_id} is already finished")
    parent = parent_run(store, record.run_id)
    if parent is not None:  # (a resume would generate into a run that reads its parent's)
        raise StoreError(
            f"run {record.run_id} is a re-score of run {parent}: go on with haf rescore "
            f"{parent} --similarity {record.similarity_model}"
        )
    config = RunConfig.model_validate_json(record.config_json)
    updates = {
        k: v for k, v in model_overrides.items() if v is not None and k in RUNTIME_MODEL_SETTINGS
    }
    if updates:
        config = config.model_copy(update={"model": config.model.model_copy(update=updates)})
    return record.run_id, config


def execute_run(
    store: Store,
    run_id: str,
    config: RunConfig,
    models: LoadedModels,
    *,
    listener: ProgressListener = ignore_progress,
    stop_event: threading.Event | None = None,
    control: RunControl | None = None,
    stream_tokens: bool = False,
) -> RunSummary:
    """Run (or resume) ``run_id`` to the end, or until ``stop_event`` is set (or ``control``
    stops, pauses or cancels it); ``stream_tokens`` sends every token to ``listener``."""
    runner = HafRunner(
        store,
        models.backend,
        models.similarity,
        config,
        listener=listener,
        stop_event=stop_event,
        control=control,
        stream_tokens=stream_tokens,
    )
    return runner.run(run_id)
