"""``haf serve`` on llama.cpp's own ``llama-server`` (issue 37 §1), when it is there
(``make llama-server`` builds it into the virtual environment's ``bin``): one process, one
copy of the weights, ``--parallel`` requests decoded at once in its continuous batch
(``-np`` slots, each with the context ``--n-ctx``), instead of one copy of the model per
request in llama-cpp-python's server (:mod:`.serve`).

What haf passes: the model's file name as its ``/v1/models`` name (``--alias``, not where it
lives), ``--no-repack`` (llama.cpp's extra buffer types off, the AMX crash; ``--extra-buffers``
keeps them), the threads, the GPU layers, and the API key through ``--api-key-file`` (a
private temporary file, removed once the server answers: never on the process list). Raw
log-probabilities are per request in llama-server (``post_sampling_probs`` false, its
default, which haf's client sends), so no flag is needed for them.

What :mod:`.serve_guard` and :mod:`.serve_limits` do for llama-cpp-python's server does not
apply here: llama-server checks requests itself (a prompt over a slot's context, a bad JSON
body: a 400 answer), serves HTTP from its own thread pool (``--threads-http``) with its own
read and write timeout (``--timeout``, 600 s), and keeps no connection cap or loopback
``Host`` check of haf's; docs/servers.md says so."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from haf_tui.inference.base import InferenceError

PROGRAM: Final = "llama-server"
ENGINE_VARIABLE: Final = "HAF_LLAMA_SERVER"
"""An environment variable naming the llama-server program to use (its path)."""
HELP_SECONDS: Final = 20.0


@dataclass(frozen=True)
class LlamaServerLaunch:
    """What starts llama-server: its command line, and the key file to remove once it
    answers (None: no key)."""

    command: list[str]
    key_file: Path | None


def find_llama_server() -> Path | None:
    """The llama-server to serve with: ``$HAF_LLAMA_SERVER``, else the one beside this
    Python (the virtual environment's ``bin``, where ``make llama-server`` puts it), else one
    on the ``PATH``; None when there is none."""
    named = os.environ.get(ENGINE_VARIABLE)
    if named:
        path = Path(named).expanduser()
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise InferenceError(f"${ENGINE_VARIABLE}={named}: not an executable file")
        return path
    beside = Path(sys.executable).parent / PROGRAM
    if beside.is_file() and os.access(beside, os.X_OK):
        return beside
    found = shutil.which(PROGRAM)
    return Path(found) if found else None


def help_text(program: Path) -> str:
    """``llama-server --help`` (its flags: this build's, checked before they are passed)."""
    try:
        done = subprocess.run(
            [str(program), "--help"],
            capture_output=True,
            timeout=HELP_SECONDS,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InferenceError(f"{program} --help failed: {exc}") from exc
    text = (done.stdout + done.stderr).decode("utf-8", errors="replace")
    if "--parallel" not in text or "--port" not in text:
        raise InferenceError(f"{program} does not look like llama-server (no --parallel in --help)")
    return text


GPU_DEVICES: Final = ("CUDA", "ROCm", "Metal", "Vulkan", "SYCL", "MUSA")


def llama_server_offloads(program: Path) -> bool:
    """Whether this llama-server build sees a GPU (``--list-devices`` names one)."""
    try:
        done = subprocess.run(
            [str(program), "--list-devices"],
            capture_output=True,
            timeout=HELP_SECONDS,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    said = (done.stdout + done.stderr).decode("utf-8", errors="replace")
    listed = said.partition("Available devices:")[2]
    return any(name in listed for name in GPU_DEVICES)


def llama_server_launch(
    program: Path,
    help_says: str,
    *,
    model: Path,
    host: str,
    port: int,
    parallel: int,
    n_ctx: int,
    threads: int,
    n_gpu_layers: int,
    extra_buffers: bool,
    api_key: str | None,
) -> LlamaServerLaunch:
    """llama-server's command line for ``haf serve``'s settings (each slot gets ``n_ctx``
    tokens of context: the whole is ``n_ctx × parallel``); the API key written to a private
    file."""
    command = [str(program), "--model", str(model), "--alias", model.name]
    command += ["--host", host, "--port", str(port)]
    command += ["--parallel", str(parallel), "--ctx-size", str(n_ctx * parallel)]
    command += ["--threads", str(threads), "--threads-batch", str(threads)]
    command += ["--n-gpu-layers", str(n_gpu_layers)]
    if not extra_buffers and "--no-repack" in help_says:
        command.append("--no-repack")
    if "--no-webui" in help_says:
        command.append("--no-webui")
    # as haf's in-process engine decodes (inference.batched): no flash attention (llama-server's
    # "auto" turns it on, 0.27 nats off on a top-k value here), full-size SWA cells
    if "--flash-attn" in help_says:
        command += ["--flash-attn", "off"]
    if "--swa-full" in help_says:
        command.append("--swa-full")
    key_file = None
    if api_key is not None:
        if "--api-key-file" not in help_says:
            raise InferenceError(f"{program} has no --api-key-file: build a newer llama-server")
        handle, name = tempfile.mkstemp(prefix="haf-serve-key-")
        with os.fdopen(handle, "w") as key:  # (mkstemp: readable by this user only)
            key.write(api_key + "\n")
        key_file = Path(name)
        command += ["--api-key-file", name]
    return LlamaServerLaunch(command, key_file)


READY_SECONDS: Final = 600.0
"""How long llama-server may take to load the model and answer ``/health``."""
STOP_SECONDS: Final = 10.0
LOG_LINES: Final = 40
"""The last lines of llama-server's log kept (said when it exits before it is ready)."""


def free_port(host: str) -> int:
    """A port nobody listens on at ``host`` now (llama-server takes no socket: ``--port 0``
    is resolved here)."""
    import socket

    try:
        infos = socket.getaddrinfo(host, 0, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise InferenceError(f"cannot listen on {host}: {exc.strerror}") from exc
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as sock:
        try:
            sock.bind(address)
        except OSError as exc:
            raise InferenceError(f"cannot listen on {host}: {exc.strerror}") from exc
        return int(sock.getsockname()[1])


def _end_with_parent() -> None:
    """In the child, before llama-server starts: SIGKILL when ``haf serve`` dies, even by
    SIGKILL (Linux's PR_SET_PDEATHSIG), so that no server outlives it (SIGTERM let
    llama-server hold its clients' connections open without answering while it shut down)."""
    import ctypes

    pr_set_pdeathsig = 1
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).prctl(pr_set_pdeathsig, 9)


class LlamaServerProcess:
    """A running llama-server: started, waited for until ``/health`` answers 200, stopped
    (SIGTERM, then a kill after :data:`STOP_SECONDS`); its log read by a thread, the last
    :data:`LOG_LINES` lines kept."""

    def __init__(self, launch: LlamaServerLaunch, url: str):
        import collections
        import threading

        self.launch, self.url = launch, url
        self.log: collections.deque[str] = collections.deque(maxlen=LOG_LINES)
        try:
            self.process = subprocess.Popen(
                launch.command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                preexec_fn=_end_with_parent if sys.platform == "linux" else None,
            )
        except OSError as exc:
            self._forget_key()
            raise InferenceError(f"cannot start {launch.command[0]}: {exc.strerror}") from exc
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.log.append(line.decode("utf-8", errors="replace").rstrip())

    def _forget_key(self) -> None:
        if self.launch.key_file is not None:
            self.launch.key_file.unlink(missing_ok=True)

    def last_error(self) -> str:
        """The log's last line that says what went wrong (else its last line)."""
        lines = [line for line in self.log if line.strip()]
        wrong = [line for line in lines if "error" in line.lower() or "failed" in line.lower()]
        return (wrong or lines or ["(no output)"])[-1].strip()[:200]

    def wait_ready(self, seconds: float = READY_SECONDS) -> None:
        """Return once ``/health`` answers 200; a one-line :class:`InferenceError` when the
        process exits first or ``seconds`` pass."""
        import time

        import httpx

        deadline = time.monotonic() + seconds
        try:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    self._reader.join(timeout=2)
                    raise InferenceError(
                        f"llama-server exited with {self.process.returncode} before it was "
                        f"ready: {self.last_error()}"
                    )
                try:
                    if httpx.get(f"{self.url}/health", timeout=2).status_code == 200:
                        return
                except httpx.HTTPError:
                    pass
                time.sleep(0.2)
            self.stop()
            raise InferenceError(
                f"llama-server did not answer {self.url}/health in {seconds:.0f} s"
            )
        finally:
            self._forget_key()  # read at start: off the disk once it answers, or has failed

    def wait(self) -> int:
        """Until llama-server exits; its exit status."""
        return self.process.wait()

    def stop(self) -> None:
        """SIGTERM, then a kill when it lingers."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=STOP_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._forget_key()
