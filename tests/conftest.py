"""Shared pytest fixtures: where ``../shared`` lives and how its reference fixtures load."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


def shared_dir() -> Path:
    """The ``shared/`` folder beside the checkout (``HAF_SHARED_DIR`` overrides)."""
    override = os.environ.get("HAF_SHARED_DIR")
    return Path(override) if override else REPO_ROOT.parent / "shared"


def reference_fixture_paths() -> list[Path]:
    """Every ``MODEL__DATASET.json`` of the authors' reference outputs, sorted."""
    folder = shared_dir() / "fixtures" / "haf-reference"
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


@pytest.fixture(scope="session")
def reference_fixtures() -> list[dict[str, Any]]:
    """All reference fixtures loaded; skips the test when ``../shared`` is absent."""
    paths = reference_fixture_paths()
    if not paths:
        pytest.skip(f"reference fixtures not found under {shared_dir()}/fixtures/haf-reference")
    return [json.loads(p.read_text(encoding="utf-8")) for p in paths]


@pytest.fixture(scope="session")
def embedded_backend() -> Any:
    """The embedded Gemma 3 270M GGUF loaded once through llama.cpp (CPU, small context)."""
    from haf_tui.defaults import embedded_model_path
    from haf_tui.inference.llama import LlamaCppBackend

    return LlamaCppBackend(embedded_model_path(), n_ctx=1024, n_gpu_layers=0)


@pytest.fixture(scope="session")
def minilm() -> Any:
    """The bundled all-MiniLM-L6-v2 bi-encoder, loaded offline, cached by pair."""
    from haf_tui.similarity import load_similarity

    return load_similarity()
