"""``haf serve``: llama-cpp-python's OpenAI-compatible server (its ``llama_cpp.server`` app,
served by uvicorn) made safe and parallel for HAF runs.

- llama.cpp's extra buffer types (weight repacking, AMX) are off unless asked for: with them
  the server process died on the first multi-token prompt on this project's AMX Xeon VMs, and
  ``python -m llama_cpp.server`` has no flag for it (see :func:`llama_load.extra_buffer_types`).
- llama-cpp-python's server decodes one request at a time per model: ``parallel`` copies of
  the model (each in memory) take that many requests at once, each decoding in its own thread
  (llama.cpp releases the GIL); more requests wait in a queue, none is refused.
- Its ``/v1/completions`` returns raw log-probabilities (``logits_all``), which the server
  backend's probe accepts (``inference.server``).
- One request cannot kill or exhaust it: :mod:`~haf_tui.inference.serve_guard` lets through
  only what haf's client sends (no grammar, bounded log-probabilities, the prompt and
  ``max_tokens`` within the context, the API key when one is set) and answers errors without
  internals; :mod:`~haf_tui.inference.serve_limits` caps connections and log lines.
  ``/v1/models`` names the GGUF's file, not its path.
- The copies load with ``verbose=True`` and quiet (:func:`llama_load.quiet_llama_cpp`): at
  ``verbose=False`` llama-cpp-python silences a load through the process's descriptors.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from haf_tui.defaults import SERVE_MAX_CONNECTIONS
from haf_tui.inference.base import InferenceError
from haf_tui.inference.context_size import check_context_size
from haf_tui.inference.gguf import read_gguf_info
from haf_tui.inference.llama_load import (
    extra_buffer_types,
    gpu_offload_supported,
    quiet_llama_cpp,
)
from haf_tui.inference.serve_guard import GuardSettings, ServeGuard

DEFAULT_MAX_CONNECTIONS = SERVE_MAX_CONNECTIONS


@dataclass(frozen=True)
class ServeSettings:
    """What ``haf serve`` loads and how: the GGUF, GPU layers (-1 all), model copies (requests
    decoded at once), context per copy, CPU threads per copy, llama.cpp's extra buffers, the
    API key clients must send (None: none) and the most connections open at once."""

    model: Path
    n_gpu_layers: int
    parallel: int
    n_ctx: int
    threads: int
    extra_buffers: bool = False
    api_key: str | None = None
    max_connections: int = DEFAULT_MAX_CONNECTIONS


def default_gpu_layers() -> int:
    """All layers (-1) on the GPU when the installed llama.cpp can offload, none otherwise."""
    return -1 if gpu_offload_supported() else 0


def check_serve_settings(settings: ServeSettings, *, check_offload: bool = True) -> None:
    """One-line :class:`InferenceError` for a missing or non-GGUF model file, a context
    larger than the model's (:func:`~haf_tui.inference.context_size.check_context_size`, as
    ``haf run`` checks it: llama-cpp-python's server would allocate 4 bytes × the vocabulary
    a token for it first), or settings the installed llama.cpp cannot honour
    (``check_offload`` false: GPU layers are llama-server's own build's to honour)."""
    info = read_gguf_info(settings.model)
    if settings.parallel < 1:
        raise InferenceError(f"--parallel {settings.parallel}: at least one request at once")
    if settings.n_ctx < 16:
        raise InferenceError(f"--n-ctx {settings.n_ctx}: at least 16 tokens")
    check_context_size(settings.n_ctx, info)  # as haf run: before llama.cpp allocates for it
    if settings.threads < 1:
        raise InferenceError(f"--threads {settings.threads}: at least one thread")
    if settings.max_connections < 1:
        raise InferenceError(f"--max-connections {settings.max_connections}: at least one")
    if settings.api_key is not None and (
        len(settings.api_key) < 8 or not settings.api_key.isascii() or " " in settings.api_key
    ):
        raise InferenceError("--api-key: at least 8 characters, ASCII, no spaces")
    if check_offload and settings.n_gpu_layers != 0 and not gpu_offload_supported():
        raise InferenceError(
            f"--n-gpu-layers {settings.n_gpu_layers}: this llama.cpp build has no GPU offload "
            "(install a CUDA or Metal build of llama-cpp-python, or leave it at 0)"
        )


def is_loopback(host: str) -> bool:
    """Whether ``host`` names only this machine's loopback addresses (``0.0.0.0``, ``::`` and
    the empty host listen on every interface: not loopback)."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        return False
    addresses = {info[4][0] for info in infos}
    return bool(addresses) and all(ipaddress.ip_address(a).is_loopback for a in addresses)


def check_exposure(host: str, api_key: str | None) -> None:
    """One-line :class:`InferenceError` for a server reachable from other machines without
    an API key."""
    if api_key is None and not is_loopback(host):
        raise InferenceError(
            f"--host {host or repr(host)} lets other machines reach the model: give --api-key KEY "
            "(clients send it as 'Authorization: Bearer KEY'), or listen on 127.0.0.1"
        )


def ready_url(host: str, port: int) -> str:
    """The URL a client reaches a server listening on ``host:port`` by: every interface
    (``0.0.0.0``, ``::``, empty) through loopback, an IPv6 address in brackets
    (``http://[::1]:8080``; ``http://::1:8080`` is no URL)."""
    shown = host.strip()
    if shown in ("0.0.0.0", ""):
        shown = "127.0.0.1"
    elif shown.strip("[]") == "::":
        shown = "::1"
    if ":" in shown and not shown.startswith("["):
        shown = f"[{shown}]"
    return f"http://{shown}:{port}"


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
        model_alias=settings.model.name,  # /v1/models names the file, not where it lives
        n_gpu_layers=settings.n_gpu_layers,
        n_ctx=settings.n_ctx,
        n_threads=settings.threads,
        n_threads_batch=settings.threads,
        logits_all=True,  # the completions' log-probabilities need every row
        verbose=True,  # (False silences the load through the process's descriptors)
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


def _added_tokens(llama: Any) -> int:
    """The tokens llama-cpp-python's ``create_completion`` adds around a text prompt: a first
    (CLS or BOS) when the model adds one, a last (SEP or EOS) when the model adds an EOS or
    has a SEP token."""
    model = llama._model
    first = model.token_cls() if model.token_cls() != -1 else llama.token_bos()
    adds_first = model.add_bos_token() and first != -1
    adds_last = model.add_eos_token() or model.token_sep() != -1
    return int(bool(adds_first)) + int(bool(adds_last))


def create_serve_app(settings: ServeSettings) -> Any:
    """llama-cpp-python's server app with ``settings.parallel`` copies of the model loaded
    (extra buffers as asked), each request served by a free copy, behind :class:`ServeGuard`
    (only haf's requests, checked; the API key; errors without internals)."""
    import llama_cpp.server.app as server_app
    from llama_cpp.server.model import LlamaProxy
    from llama_cpp.server.settings import ServerSettings

    model_settings = _model_settings(settings)
    quiet_llama_cpp()  # (verbose=True: llama.cpp's lines to the collector, no prints)
    with extra_buffer_types(settings.extra_buffers):
        app = server_app.create_app(
            server_settings=ServerSettings(interrupt_requests=False),
            model_settings=[model_settings],
        )
        proxies: list[Any] = [server_app._llama_proxy]
        proxies += [LlamaProxy(models=[model_settings]) for _ in range(settings.parallel - 1)]
    pooled = _pooled(proxies)
    # the completion routes call the module's get_llama_proxy by name; the others Depend on it
    app.dependency_overrides[server_app.get_llama_proxy] = pooled
    server_app.get_llama_proxy = pooled
    llama = proxies[0]()
    extra = _added_tokens(llama)

    def count_tokens(prompt: str) -> int:
        return extra + len(llama.tokenize(prompt.encode("utf-8"), add_bos=False, special=True))

    n_vocab = int(llama.n_vocab())
    guard = GuardSettings(
        settings.n_ctx, n_vocab, settings.api_key, count_tokens, settings.model.name
    )
    return ServeGuard(app, guard)
