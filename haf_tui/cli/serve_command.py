"""``haf serve``: an OpenAI-compatible completion server with raw log-probabilities, safe on
any CPU, for ``haf run --server``: llama.cpp's own llama-server when it is there
(``inference.serve_llama_server``: one copy of the model, ``--parallel`` slots), else
llama-cpp-python's server (``inference.serve`` builds it; uvicorn serves it)."""

from __future__ import annotations

import argparse
import os
import signal
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from haf_tui.defaults import API_KEY_VARIABLE, SERVE_MAX_CONNECTIONS

if TYPE_CHECKING:
    from haf_tui.inference.serve import ServeSettings

# The server's modules (llama.cpp, uvicorn, httpx) are imported when haf serve runs, not when
# its parser is built: ``haf --help`` stays light (issue 34 §8).

DEFAULT_PORT = 8080
DEFAULT_N_CTX = 4096
EMBEDDED = "embedded"
ENGINES = ("auto", "llama-server", "llama-cpp-python")


def add_serve_parser(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
) -> None:
    """``haf serve --model M.gguf [--host H] [--port P] [--n-gpu-layers N] [--parallel N]``."""
    serve = commands.add_parser(
        "serve",
        help="serve a GGUF to haf run --server (OpenAI-compatible, raw log-probabilities)",
        description=(
            "Serve a GGUF over HTTP for haf run --server: llama.cpp's llama-server when it is "
            "installed (make llama-server; one copy of the model, --parallel slots), else "
            "llama-cpp-python's OpenAI-compatible server; llama.cpp's extra buffer types off "
            "(they crash on some AMX CPUs), raw log-probabilities. Prints which server and the "
            "URL to pass to haf run --server once ready; Ctrl-C or SIGTERM stops it."
        ),
    )
    serve.add_argument(
        "--model",
        required=True,
        help=f"the GGUF file to serve, or {EMBEDDED!r} (the default model)",
    )
    serve.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default: 127.0.0.1); any other than this machine's "
        "loopback needs --api-key",
    )
    serve.add_argument(
        "--api-key",
        default=os.environ.get(API_KEY_VARIABLE) or None,
        help="the key clients must send as 'Authorization: Bearer KEY' (at least 8 "
        f"characters; default: ${API_KEY_VARIABLE}, which keeps it out of the process list)",
    )
    serve.add_argument(
        "--max-connections",
        type=int,
        default=SERVE_MAX_CONNECTIONS,
        help="connections open at once; further ones are closed at once "
        f"(default: {SERVE_MAX_CONNECTIONS})",
    )
    serve.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"port to listen on, 0 for any free one (default: {DEFAULT_PORT})",
    )
    serve.add_argument(
        "--n-gpu-layers",
        type=int,
        help="layers on the GPU, -1 for all (default: all when llama.cpp was built with GPU "
        "offload, else 0)",
    )
    serve.add_argument(
        "--parallel",
        type=int,
        default=1,
        help="requests decoded at once: llama-server's slots (one copy of the model), or "
        "llama-cpp-python's copies of the model (memory grows with it); further requests "
        "wait in a queue (default: 1)",
    )
    serve.add_argument(
        "--n-ctx",
        type=int,
        default=DEFAULT_N_CTX,
        help=f"context size in tokens of each slot or copy (default: {DEFAULT_N_CTX})",
    )
    serve.add_argument(
        "--threads",
        type=int,
        help="CPU threads per copy, or of llama-server (default: half the CPUs haf may run on, "
        "shared by the copies)",
    )
    serve.add_argument(
        "--engine",
        choices=ENGINES,
        default="auto",
        help="which server: llama-server when found ($HAF_LLAMA_SERVER, beside this Python, "
        "or on the PATH), else llama-cpp-python's (default: auto)",
    )
    serve.add_argument(
        "--extra-buffers",
        action="store_true",
        help="let llama.cpp use its extra buffer types (weight repacking, AMX): faster on "
        "some CPUs, crashes on others",
    )


def serve_settings(args: argparse.Namespace, program: Path | None = None) -> ServeSettings:
    """The command line's settings, defaults filled in (``program``: the llama-server that
    serves, whose own build says whether it offloads; its slots share the threads)."""
    from haf_tui.defaults import available_cpus, embedded_model_path
    from haf_tui.inference.serve import ServeSettings, default_gpu_layers
    from haf_tui.inference.serve_llama_server import llama_server_offloads

    parallel = max(1, args.parallel)
    copies = 1 if program is not None else parallel  # llama-server: one batch for all slots
    threads = args.threads or max(1, available_cpus() // 2 // copies)
    if args.n_gpu_layers is not None:
        gpu_layers = args.n_gpu_layers
    elif program is not None:
        gpu_layers = -1 if llama_server_offloads(program) else 0
    else:
        gpu_layers = default_gpu_layers()
    model = embedded_model_path() if args.model == EMBEDDED else Path(args.model).expanduser()
    return ServeSettings(
        model=model,
        n_gpu_layers=gpu_layers,
        parallel=args.parallel,
        n_ctx=args.n_ctx,
        threads=threads,
        extra_buffers=args.extra_buffers,
        api_key=args.api_key,
        max_connections=args.max_connections,
    )


def _url(host: str, sock: socket.socket) -> str:
    from haf_tui.inference.serve import ready_url

    return ready_url(host, int(sock.getsockname()[1]))


def _llama_server(engine: str) -> Path | None:
    """The llama-server program to serve with (None: llama-cpp-python's server); a one-line
    error when llama-server is asked for and not found."""
    from haf_tui.inference.base import InferenceError
    from haf_tui.inference.serve_llama_server import find_llama_server

    if engine == "llama-cpp-python":
        return None
    program = find_llama_server()
    if program is None and engine == "llama-server":
        raise InferenceError(
            "--engine llama-server: no llama-server found (make llama-server builds it into "
            ".venv/bin; or set $HAF_LLAMA_SERVER to its path)"
        )
    return program


def _stop_on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def serve_command(args: argparse.Namespace) -> int:
    """Load the model, listen, print the URL once ready and serve until Ctrl-C or SIGTERM."""
    from haf_tui.inference.serve import (
        check_exposure,
        check_serve_settings,
        create_serve_app,
        listening_socket,
    )

    program = _llama_server(args.engine)
    settings = serve_settings(args, program)
    check_exposure(args.host, settings.api_key)
    check_serve_settings(settings, check_offload=program is None)
    if program is not None:
        from haf_tui.cli.serve_llama import serve_on_llama_server

        return serve_on_llama_server(program, args.host, args.port, settings)
    previous = signal.signal(signal.SIGTERM, _stop_on_sigterm)  # while the model loads
    try:
        sock = listening_socket(args.host, args.port)
        with sock:
            app = create_serve_app(settings)
            stopped_by = _serve(app, sock, _url(args.host, sock), settings)
    except KeyboardInterrupt:
        stopped_by = "a signal"
    finally:
        signal.signal(signal.SIGTERM, previous)
    print(f"haf serve: stopped ({stopped_by})", flush=True)
    return 0


def _serve(app: Any, sock: socket.socket, url: str, settings: ServeSettings) -> str:
    """Serve ``app`` on ``sock`` until a signal; the signal's name."""
    import uvicorn

    from haf_tui.inference.serve_limits import (
        KEEP_ALIVE_SECONDS,
        capped_protocol,
        configure_logging,
    )

    class Server(uvicorn.Server):
        """uvicorn's server that says once when it is ready, and that ends on Ctrl-C or
        SIGTERM without re-raising the signal (a line, not a traceback or a kill)."""

        def __init__(self, config: uvicorn.Config) -> None:
            super().__init__(config)
            self.signals: list[int] = []

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if self.started:
                copies = f"{settings.parallel} copies" if settings.parallel > 1 else "one copy"
                print(
                    f"haf serve: {settings.model.name} ready ({copies}, "
                    f"{settings.n_gpu_layers} GPU layers; llama-cpp-python's server) at {url}; "
                    f"haf run --server {url}",
                    flush=True,
                )

        @contextmanager
        def capture_signals(self) -> Iterator[None]:
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            handled = (signal.SIGINT, signal.SIGTERM)
            originals = {sig: signal.signal(sig, self._exit) for sig in handled}
            try:
                yield
            finally:
                for sig, handler in originals.items():
                    signal.signal(sig, handler)

        def _exit(self, sig: int, frame: FrameType | None) -> None:
            self.signals.append(sig)
            self.handle_exit(sig, frame)
            self._captured_signals.clear()

    configure_logging()
    config = uvicorn.Config(
        app,
        http=capped_protocol(settings.max_connections),
        log_config=None,
        log_level="warning",
        access_log=False,
        lifespan="off",
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
    )
    server = Server(config)
    server.run(sockets=[sock])
    return signal.Signals(server.signals[0]).name if server.signals else "shut down"
