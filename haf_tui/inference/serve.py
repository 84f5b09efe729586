"""``haf serve``: llama-cpp-python's OpenAI-compatible server (its ``llama_cpp.server`` app,
served by uvicorn) made safe and parallel for HAF runs.

- llama.cpp's extra buffer types (weight repacking, AMX) are off unless asked for: with them
  the server process died on the first multi-token prompt on this project's AMX Xeon VMs, and
  ``python -m llama_cpp.server`` has no flag for it (see :func:`llama.extra_buffer_types`).
- llama-cpp-python's server decodes one request at a time per model: ``parallel`` copies of
  the model (each in memory) take that many requests at once, each decoding in its own thread
  (llama.cpp releases the GIL); more requests wait in a queue, none is refused.
- Its ``/v1/completions`` returns raw log-probabilities (``logits_all``), which the server
  backend's probe accepts (``inference.server``).
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from haf_tui.inference.base import InferenceError
from haf_tui.inference.gguf import read_gguf_info
from haf_tui.inference.llama import extra_buffer_types, gpu_offload_supported


@dataclass(frozen=True)
class ServeSettings:
    """What ``haf serve`` loads and how: the GGUF, GPU layers (-1 all), model copies (requests
    decoded at once), context per copy, CPU threads per copy, llama.cpp's extra buffers."""

    model: Path
    n_gpu_layers: int
    parallel: int
    n_ctx: int
    threads: int
    extra_buffers: bool = False


def default_gpu_layers() -> int:
    """All layers (-1) on the GPU when the installed llama.cpp can offload, none otherwise."""
    return -1 if gpu_offload_supported() else 0


def check_serve_settings(settings: ServeSettings) -> None:
    """One-line :class:`InferenceError` for a missing or non-GGUF model file, or settings the
    installed llama.cpp cannot honour."""
    read_gguf_info(settings.model)
    if settings.parallel < 1:
        raise InferenceError(f"--parallel {settings.parallel}: at least one request at once")
    if settings.n_ctx < 16:
        raise InferenceError(f"--n-ctx {settings.n_ctx}: at least 16 tokens")
    if settings.threads < 1:
        raise InferenceError(f"--threads {settings.threads}: at least one thread")
    if settings.n_gpu_layers != 0 and not gpu_offload_supported():
        raise InferenceError(
            f"--n-gpu-layers {settings.n_gpu_layers}: this llama.cpp build has no GPU offload "
            "(install a CUDA or Metal build of llama-cpp-python, or leave it at 0)"
        )


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` (0: any free port); a one-line error when it cannot be."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise InferenceError(f"cannot listen on {host}:{port}: {exc.strerror}") from exc
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise InferenceError(f"cannot listen on {host}:{port}: {exc.strerror}") from exc
    sock.set_inheritable(True)
    return sock


def _model_settings(settings: ServeSettings) -> Any:
    from llama_cpp.server.settings import ModelSettings

    return ModelSettings(
        model=str(settings.model),
        n_gpu_layers=settings.n_gpu_layers,
        n_ctx=settings.n_ctx,
        n_threads=settings.threads,
        n_threads_batch=settings.threads,
        logits_all=True,  # the completions' log-probabilities need every row
        verbose=False,
    )


def _pooled(proxies: list[Any]) -> Callable[[], AsyncIterator[Any]]:
    """llama-cpp-python's ``get_llama_proxy`` over several model copies: a request takes a
    free copy, or waits for one."""
    import anyio

    free = list(proxies)
    slots = anyio.Semaphore(len(proxies))

    async def get_llama_proxy() -> AsyncIterator[Any]:
        async with slots:
            proxy = free.pop()
            try:
                yield proxy
            finally:
                free.append(proxy)

    return get_llama_proxy


def create_serve_app(settings: ServeSettings) -> Any:
    """The FastAPI app of llama-cpp-python's server with ``settings.parallel`` copies of the
    model loaded (extra buffers as asked), each request served by a free copy."""
    import llama_cpp.server.app as server_app
    from llama_cpp.server.model import LlamaProxy
    from llama_cpp.server.settings import ServerSettings

    model_settings = _model_settings(settings)
    with extra_buffer_types(settings.extra_buffers):
        app = server_app.create_app(
            server_settings=ServerSettings(interrupt_requests=False),
            model_settings=[model_settings],
        )
        proxies = [server_app._llama_proxy]
        proxies += [LlamaProxy(models=[model_settings]) for _ in range(settings.parallel - 1)]
    pooled = _pooled(proxies)
    # the completion routes call the module's get_llama_proxy by name; the others Depend on it
    app.dependency_overrides[server_app.get_llama_proxy] = pooled
    server_app.get_llama_proxy = pooled
    return app
