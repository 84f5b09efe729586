"""Real inference servers for tests: llama-cpp-python's own server (its ``[server]`` extra,
the same pinned build as in process) on a free 127.0.0.1 port with the embedded GGUF."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest

LAUNCH = """
import runpy
import llama_cpp.llama_cpp as c_api

original = c_api.llama_model_default_params

def without_extra_buffers():
    params = original()
    params.use_extra_bufts = False
    return params

c_api.llama_model_default_params = without_extra_buffers
runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
"""
"""``python -m llama_cpp.server`` with llama.cpp's extra buffer types off, as the in-process
path loads models (``inference.llama.open_llama``): with them (weight repacking, AMX), ggml's
CPU backend crashes on the first multi-token decode on this project's AMX Xeon VMs, and the
server has no flag for it (llama-server's is ``--no-repack``)."""


def free_port() -> int:
    """A TCP port nobody listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(n_ctx: int = 2048, wait_s: float = 90) -> tuple[subprocess.Popen[bytes], str]:
    """llama-cpp-python's server with the embedded GGUF, answering; skips the test when the
    ``[server]`` extra is not installed."""
    pytest.importorskip("uvicorn", reason="llama-cpp-python's [server] extra is not installed")
    from haf_tui.defaults import embedded_model_path

    port = free_port()
    command = [sys.executable, "-c", LAUNCH, "--model", str(embedded_model_path())]
    command += ["--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx)]
    command += ["--logits_all", "true", "--n_threads", "1"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/v1/models", timeout=1).status_code == 200:
                return process, url
        except httpx.HTTPError:
            pass
        if process.poll() is not None:
            pytest.fail(f"llama-cpp-python's server exited with {process.returncode}")
        time.sleep(0.2)
    process.kill()
    pytest.fail(f"llama-cpp-python's server did not answer within {wait_s:.0f} s")


def stop(process: subprocess.Popen[bytes]) -> None:
    """Terminate a server (kill it if it lingers)."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextmanager
def running_server(n_ctx: int = 2048) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """A server for the duration of a ``with`` block."""
    process, url = start_server(n_ctx)
    try:
        yield process, url
    finally:
        stop(process)
