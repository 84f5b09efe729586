"""The models of a run: the GGUF backend and the similarity model, loaded and identified
(the file's sha256, the versions of the packages that decide a run's numbers)."""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from haf_tui.config import RunConfig
from haf_tui.defaults import haf_home
from haf_tui.inference.backend import Backend
from haf_tui.inference.registry import backend_named
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

    backend: Backend
    similarity: SimilarityModel


def backend_name_for(config: RunConfig) -> str:
    """The backend a run's model settings call for: ``server`` with servers, else
    ``llama.cpp``."""
    return "server" if config.model.servers else "llama.cpp"


def load_models(config: RunConfig, similarity: SimilarityModel | None = None) -> LoadedModels:
    """Load the run's backend by name (:func:`backend_name_for`: the GGUF, metadata checked
    first; with servers: its tokenizer and template only, the servers identified and their
    log-probabilities checked raw) and the similarity model (``similarity``: one already
    loaded for the same settings)."""
    backend = backend_named(backend_name_for(config))(config.model)
    try:
        return LoadedModels(backend, similarity or _similarity(config))
    except BaseException:  # (the similarity model failed: the GGUF is freed now)
        backend.close()
        raise


def _similarity(config: RunConfig) -> SimilarityModel:
    return load_similarity(
        config.similarity.model, config.similarity.kind, device=config.similarity.device
    )


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
    """Versions of the packages that decide a run's numbers (those this process imported: read
    from their metadata once; each read was a few ms of every run and re-score made)."""
    return dict(_package_versions())


@functools.cache
def _package_versions() -> tuple[tuple[str, str], ...]:
    versions = []
    for name in VERSIONED_PACKAGES:
        try:
            versions.append((name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            versions.append((name, "absent"))
    return tuple(versions)
