"""Real inference servers for tests: ``haf serve`` (llama-cpp-python's own server, the same
pinned build as in process, with llama.cpp's extra buffer types off) as a real subprocess on a
free 127.0.0.1 port with the embedded GGUF."""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest


def free_port() -> int:
    """A TCP port nobody listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve_command(port: int, n_ctx: int = 2048, parallel: int = 1) -> list[str]:
    """The ``haf serve`` command line of the embedded GGUF on 127.0.0.1:``port``."""
    from haf_tui.defaults import embedded_model_path

    command = [sys.executable, "-m", "haf_tui.cli", "serve", "--model", str(embedded_model_path())]
    command += ["--host", "127.0.0.1", "--port", str(port), "--n-ctx", str(n_ctx)]
    return [*command, "--threads", "1", "--parallel", str(parallel)]


def start_server(
    n_ctx: int = 2048, wait_s: float = 90, parallel: int = 1
) -> tuple[subprocess.Popen[bytes], str]:
    """``haf serve`` with the embedded GGUF, answering; skips the test when llama-cpp-python's
    ``[server]`` extra is not installed."""
    pytest.importorskip("uvicorn", reason="llama-cpp-python's [server] extra is not installed")
    port = free_port()
    command = serve_command(port, n_ctx, parallel)
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryFile() as output:  # what it said, should it exit early
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{url}/v1/models", timeout=1).status_code == 200:
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


@contextmanager
def running_server(
    n_ctx: int = 2048, parallel: int = 1
) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """A server for the duration of a ``with`` block."""
    process, url = start_server(n_ctx, parallel=parallel)
    try:
        yield process, url
    finally:
        stop(process)
