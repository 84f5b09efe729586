"""Real inference servers for tests: ``haf serve`` (llama-cpp-python's own server, the same
pinned build as in process, with llama.cpp's extra buffer types off; or, with ``engine``,
llama.cpp's llama-server) as a real subprocess on a free 127.0.0.1 port with the embedded
GGUF."""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import IO

import httpx
import pytest


def free_port() -> int:
    """A TCP port nobody listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve_command(
    port: int,
    n_ctx: int = 2048,
    parallel: int = 1,
    extra: Sequence[str] = (),
    engine: str = "llama-cpp-python",
) -> list[str]:
    """The ``haf serve`` command line of the embedded GGUF on 127.0.0.1:``port`` (``extra``:
    more options, e.g. ``--api-key``; ``engine``: which server, llama-cpp-python's unless
    told)."""
    from haf_tui.defaults import embedded_model_path

    command = [sys.executable, "-m", "haf_tui.cli", "serve", "--model", str(embedded_model_path())]
    command += ["--host", "127.0.0.1", "--port", str(port), "--n-ctx", str(n_ctx)]
    command += ["--engine", engine]
    return [*command, "--threads", "1", "--parallel", str(parallel), *extra]


def start_server(
    n_ctx: int = 2048,
    wait_s: float = 300,  # (a model loading on a loaded machine: catches "never")
    parallel: int = 1,
    extra: Sequence[str] = (),
    api_key: str | None = None,
    stderr: int | IO[bytes] = subprocess.STDOUT,
    engine: str = "llama-cpp-python",
    env: Mapping[str, str] | None = None,
) -> tuple[subprocess.Popen[bytes], str]:
    """``haf serve`` with the embedded GGUF, answering (``extra``: more options; ``api_key``:
    the one given there, sent while waiting; ``stderr``: where its log goes, with its output
    by default); skips the test when llama-cpp-python's ``[server]`` extra is not
    installed; ``env``: its environment, else this process's)."""
    if engine == "llama-cpp-python":
        pytest.importorskip("uvicorn", reason="llama-cpp-python's [server] extra is not installed")
    port = free_port()
    command = serve_command(port, n_ctx, parallel, extra, engine)
    url = f"http://127.0.0.1:{port}"
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    with tempfile.TemporaryFile() as output:  # what it said, should it exit early
        process = subprocess.Popen(command, stdout=output, stderr=stderr, env=env)
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            try:
                answer = httpx.get(f"{url}/v1/models", headers=headers, timeout=1)
                if answer.status_code == 200:
                    return process, url
            except httpx.HTTPError:
                pass
            if process.poll() is not None:
                output.seek(0)
                said = output.read().decode(errors="replace")[-2000:]
                pytest.fail(f"haf serve exited with {process.returncode}: {said}")
            time.sleep(0.2)
    process.kill()
    pytest.fail(f"haf serve did not answer within {wait_s:.0f} s")


def stop(process: subprocess.Popen[bytes]) -> None:
    """Terminate a server (kill it if it lingers)."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def llama_server_or_skip() -> str:
    """The llama-server ``haf serve`` would use; skips the test when none is built."""
    from haf_tui.inference.serve_llama_server import find_llama_server

    program = find_llama_server()
    if program is None:
        pytest.skip("llama-server is not built (make llama-server builds it into .venv/bin)")
    return str(program)


@contextmanager
def running_server(
    n_ctx: int = 2048, parallel: int = 1, engine: str = "llama-cpp-python"
) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """A server for the duration of a ``with`` block."""
    process, url = start_server(n_ctx, parallel=parallel, engine=engine)
    try:
        yield process, url
    finally:
        stop(process)
