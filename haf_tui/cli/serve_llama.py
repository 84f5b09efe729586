"""``haf serve`` on llama-server (issue 37 §1): the same command line and guarantees as on
llama-cpp-python's server (one ready line naming the server, bound to 127.0.0.1 unless
``--host`` says otherwise, an API key when given, Ctrl-C or SIGTERM a one-line stop), the
process itself run by :mod:`haf_tui.inference.serve_llama_server`."""

from __future__ import annotations

import signal
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from haf_tui.inference.serve import ServeSettings


class _SignalledError(Exception):
    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _raise(signum: int, frame: FrameType | None) -> None:
    raise _SignalledError(signum)


def serve_on_llama_server(program: Path, host: str, port: int, settings: ServeSettings) -> int:
    """Start llama-server with ``settings``, print the ready line once ``/health`` answers,
    and serve until Ctrl-C or SIGTERM (0) or until llama-server exits on its own (a one-line
    error)."""
    from haf_tui.inference.base import InferenceError
    from haf_tui.inference.serve import ready_url
    from haf_tui.inference.serve_llama_server import (
        LlamaServerProcess,
        free_port,
        help_text,
        llama_server_launch,
        llama_server_offloads,
    )

    if settings.n_gpu_layers != 0 and not llama_server_offloads(program):
        raise InferenceError(
            f"--n-gpu-layers {settings.n_gpu_layers}: this llama-server build has no GPU offload "
            f"(it lists no GPU device: {program}); build it with `make llama-server "
            "GGML_CUDA=on`, or leave --n-gpu-layers at 0"
        )
    port = port or free_port(host)
    launch = llama_server_launch(
        program,
        help_text(program),
        model=settings.model,
        host=host,
        port=port,
        parallel=settings.parallel,
        n_ctx=settings.n_ctx,
        threads=settings.threads,
        n_gpu_layers=settings.n_gpu_layers,
        extra_buffers=settings.extra_buffers,
        api_key=settings.api_key,
    )
    url = ready_url(host, port)
    handled = (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.signal(sig, _raise) for sig in handled}
    server: LlamaServerProcess | None = None
    try:
        server = LlamaServerProcess(launch, url)
        server.wait_ready()
        slots = f"{settings.parallel} slots" if settings.parallel > 1 else "one slot"
        print(
            f"haf serve: {settings.model.name} ready (llama-server, {slots}, one copy, "
            f"{settings.n_gpu_layers} GPU layers) at {url}; "
            f"haf run --server {url}#{settings.parallel}",
            flush=True,
        )
        status = server.wait()
        raise InferenceError(f"llama-server exited with {status}: {server.last_error()}")
    except _SignalledError as signalled:
        stopped_by = signal.Signals(signalled.signum).name
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if server is not None:
            server.stop()
    print(f"haf serve: stopped ({stopped_by})", flush=True)
    return 0
