"""Starting and resuming runs: what the CLI and the TUI call.

Everything that can fail on bad input (the model file, the chat format, the dataset, the
similarity model) is checked before the run row is written, so a refused run leaves nothing
behind.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import threading
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from haf_tui.config import ModelSettings, RunConfig
from haf_tui.datasets import Dataset, store_dataset
from haf_tui.defaults import embedded_model_path, haf_home
from haf_tui.inference.base import InferenceError
from haf_tui.inference.llama import LlamaCppBackend
from haf_tui.pipeline.events import ProgressListener, ignore_progress
from haf_tui.pipeline.runner import HafRunner, RunControl, RunSummary
from haf_tui.prompts import justify_messages
from haf_tui.similarity import SimilarityModel, load_similarity
from haf_tui.store import Store, StoreError
from haf_tui.store.records import RunRecord

VERSIONED_PACKAGES = (
    "haf-tui",
    "llama-cpp-python",
    "sentence-transformers",
    "torch",
    "transformers",
    "duckdb",
    "numpy",
)


@dataclass
class LoadedModels:
    """The generation backend and similarity model of a run."""

    backend: LlamaCppBackend
    similarity: SimilarityModel


def resolve_model_path(settings: ModelSettings) -> Path:
    """The GGUF a run uses: ``settings.path``, else the embedded default."""
    return Path(settings.path).expanduser() if settings.path else embedded_model_path()


def load_models(config: RunConfig) -> LoadedModels:
    """Load the GGUF (metadata checked first) and the similarity model."""
    model = config.model
    backend = LlamaCppBackend(
        resolve_model_path(model),
        chat_format=model.chat_format,
        n_ctx=model.n_ctx,
        n_gpu_layers=model.n_gpu_layers,
        n_threads=model.n_threads,
        n_batch=model.n_batch,
        extra_buffers=model.extra_buffers,
    )
    similarity = load_similarity(
        config.similarity.model, config.similarity.kind, device=config.similarity.device
    )
    return LoadedModels(backend, similarity)


def file_sha256(path: Path) -> str:
    """sha256 of a model file, cached in ``$HAF_HOME/model-hashes.json`` by path, size, mtime."""
    cache_file = haf_home() / "model-hashes.json"
    stat = path.stat()
    key = f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
    try:
        cache: dict[str, str] = json.loads(cache_file.read_text())
    except (OSError, ValueError):
        cache = {}
    if key not in cache:
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 22), b""):
                digest.update(block)
        cache[key] = digest.hexdigest()
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        cache_file.write_text(json.dumps(cache, indent=1))
    return cache[key]


def package_versions() -> dict[str, str]:
    """Versions of the packages that decide a run's numbers."""
    versions = {}
    for name in VERSIONED_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "absent"
    return versions


def new_run_id() -> str:
    """A readable, unique run id: date, time and a random suffix."""
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(2)


def check_prompts_fit(models: LoadedModels, config: RunConfig, dataset: Dataset) -> None:
    """Refuse a run whose JUSTIFY prompts do not fit the context, before anything is stored."""
    backend = models.backend
    explicit = config.prompting == "explicit"
    instances = dataset.instances[: config.limit] if config.limit else dataset.instances
    for instance in instances:
        messages = justify_messages(instance.text, explicit=explicit)
        needed = len(backend.tokenize_prompt(backend.render(messages))) + 1
        if needed > backend.n_ctx:
            raise InferenceError(
                f"instance {instance.instance_id}: its prompt of {needed - 1} tokens does not fit "
                f"the context of {backend.n_ctx} tokens: raise --n-ctx"
            )


def create_run(
    store: Store, config: RunConfig, dataset: Dataset, models: LoadedModels
) -> tuple[str, RunConfig]:
    """Store the dataset (once) and a new run row; returns the run id and its config."""
    check_prompts_fit(models, config, dataset)
    store_dataset(store, dataset)  # once, with its metadata and skipped rows
    config = config.model_copy(update={"dataset_id": dataset.dataset_id})
    planned = len(store.instances(dataset.dataset_id, config.limit))
    if planned == 0:
        raise StoreError(f"dataset {dataset.name} has no instances to evaluate")
    backend = models.backend
    run_id = new_run_id()
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
            versions=package_versions(),
        )
    )
    return run_id, config


def run_config_of(store: Store, run_id: str, **model_overrides: Any) -> tuple[str, RunConfig]:
    """A stored run's full id and config; runtime-only model settings may be overridden."""
    record = store.get_run(run_id)
    if record.status == "finished":
        raise StoreError(f"run {record.run_id} is already finished")
    config = RunConfig.model_validate_json(record.config_json)
    allowed = {"n_ctx", "n_gpu_layers", "n_threads", "n_batch", "n_parallel", "extra_buffers"}
    updates = {k: v for k, v in model_overrides.items() if v is not None and k in allowed}
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
