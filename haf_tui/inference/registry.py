"""Backends by name: a factory builds one from a run's :class:`~haf_tui.config.ModelSettings`.

Two are built in: ``llama.cpp`` (the GGUF in process) and ``server`` (OpenAI-compatible
servers, the GGUF's tokenizer and template here); each imports its module only when used.
Other packages add theirs through the entry-point group :data:`ENTRY_POINT_GROUP` (the
entry point's name is the backend's, its object the factory), loaded the first time that name
is asked for.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Final

from haf_tui.config import ModelSettings
from haf_tui.defaults import embedded_model_path
from haf_tui.inference.backend import Backend
from haf_tui.inference.base import InferenceError

BackendFactory = Callable[[ModelSettings], Backend]
"""Builds a backend from a run's model settings (its errors: one-line ``HafError``s)."""

ENTRY_POINT_GROUP: Final = "haf_tui.backends"
"""The entry-point group other packages register backends in."""

_FACTORIES: dict[str, BackendFactory] = {}


def register_backend(name: str, factory: BackendFactory) -> None:
    """Make ``factory`` the backend called ``name`` (replacing one of that name)."""
    _FACTORIES[name] = factory


def backend_named(name: str) -> BackendFactory:
    """The factory of the backend called ``name``: a registered one, else the entry point of
    that name (loaded now). A one-line :class:`InferenceError` when there is none, or when its
    entry point cannot be loaded."""
    factory = _FACTORIES.get(name)
    if factory is not None:
        return factory
    for entry in metadata.entry_points(group=ENTRY_POINT_GROUP):
        if entry.name == name:
            factory = _load_entry_point(entry)
            _FACTORIES[name] = factory
            return factory
    raise InferenceError(f"no backend is called {name!r}: known are {', '.join(backend_names())}")


def backend_names() -> list[str]:
    """The backends there are: registered ones and those of entry points (not loaded)."""
    found = {entry.name for entry in metadata.entry_points(group=ENTRY_POINT_GROUP)}
    return sorted(found | _FACTORIES.keys())


def _load_entry_point(entry: metadata.EntryPoint) -> BackendFactory:
    """An entry point's factory, or one line naming the entry point and what went wrong."""
    where = f"backend {entry.name!r} (entry point {entry.value} in {ENTRY_POINT_GROUP})"
    try:
        factory = entry.load()
    except Exception as exc:  # whatever a foreign package raises while importing
        reason = " ".join(str(exc).split()) or "no message"
        raise InferenceError(
            f"{where} could not be loaded: {type(exc).__name__}: {reason}"
        ) from exc
    if not callable(factory):
        raise InferenceError(f"{where} is not a backend factory: {type(factory).__name__}")
    return factory  # type: ignore[no-any-return]


def resolve_model_path(settings: ModelSettings) -> Path:
    """The GGUF a run uses: ``settings.path``, else the embedded default."""
    return Path(settings.path).expanduser() if settings.path else embedded_model_path()


def _llama_cpp(settings: ModelSettings) -> Backend:
    """The GGUF in process, through llama.cpp (metadata checked first)."""
    from haf_tui.inference.llama import LlamaCppBackend

    return LlamaCppBackend(
        resolve_model_path(settings),
        chat_format=settings.chat_format,
        n_ctx=settings.n_ctx,
        n_gpu_layers=settings.n_gpu_layers,
        n_threads=settings.n_threads,
        n_batch=settings.n_batch,
        extra_buffers=settings.extra_buffers,
    )


def _server(settings: ModelSettings) -> Backend:
    """The servers of ``settings.servers``, identified and their log-probabilities checked
    raw; the GGUF's tokenizer and template only, here."""
    from haf_tui.inference.server import parse_endpoint
    from haf_tui.inference.server_backend import ServerBackend

    return ServerBackend(
        resolve_model_path(settings),
        [parse_endpoint(spec) for spec in settings.servers],
        chat_format=settings.chat_format,
        n_ctx=settings.n_ctx,
    )


register_backend("llama.cpp", _llama_cpp)
register_backend("server", _server)
