"""The models of a run: the GGUF backend and the similarity model, loaded and identified
(the file's sha256, the versions of the packages that decide a run's numbers)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from haf_tui.config import ModelSettings, RunConfig
from haf_tui.defaults import embedded_model_path, haf_home
from haf_tui.inference.llama import LlamaCppBackend
from haf_tui.inference.server import parse_endpoint
from haf_tui.inference.server_backend import ServerBackend
from haf_tui.similarity import SimilarityModel, load_similarity

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

    backend: LlamaCppBackend | ServerBackend
    similarity: SimilarityModel


def resolve_model_path(settings: ModelSettings) -> Path:
    """The GGUF a run uses: ``settings.path``, else the embedded default."""
    return Path(settings.path).expanduser() if settings.path else embedded_model_path()


def load_models(config: RunConfig) -> LoadedModels:
    """Load the GGUF (metadata checked first; with servers: its tokenizer and template only,
    the servers identified and their log-probabilities checked raw) and the similarity
    model."""
    model = config.model
    backend: LlamaCppBackend | ServerBackend
    if model.servers:
        backend = ServerBackend(
            resolve_model_path(model),
            [parse_endpoint(spec) for spec in model.servers],
            chat_format=model.chat_format,
            n_ctx=model.n_ctx,
        )
        return LoadedModels(backend, _similarity(config))
    backend = LlamaCppBackend(
        resolve_model_path(model),
        chat_format=model.chat_format,
        n_ctx=model.n_ctx,
        n_gpu_layers=model.n_gpu_layers,
        n_threads=model.n_threads,
        n_batch=model.n_batch,
        extra_buffers=model.extra_buffers,
    )
    return LoadedModels(backend, _similarity(config))


def _similarity(config: RunConfig) -> SimilarityModel:
    return load_similarity(
        config.similarity.model, config.similarity.kind, device=config.similarity.device
    )


def server_versions(backend: LlamaCppBackend | ServerBackend) -> dict[str, str]:
    """The servers a run generates on, as ``versions`` entries: kind, version, model, URL."""
    servers = getattr(backend, "servers", [])
    return {
        f"server {n}": f"{s.kind} {s.version} · {s.model} · {s.url}"
        for n, s in enumerate(servers, start=1)
    }


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
