"""How ``haf serve`` starts llama-server (issue 37 §1), without a model: the program found,
its command line from ``haf serve``'s settings and the flags its ``--help`` lists, the API key
only in a private file, the GPU seen from ``--list-devices``, and a program that exits before
it is ready one line with its own last error. A stand-in ``llama-server`` (a shell script) is
the real subprocess here; tests/test_llama_server.py runs the real one."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from haf_tui.inference.base import InferenceError
from haf_tui.inference.serve_llama_server import (
    ENGINE_VARIABLE,
    LlamaServerLaunch,
    LlamaServerProcess,
    find_llama_server,
    help_text,
    llama_server_launch,
    llama_server_offloads,
)

HELP = "usage: llama-server\n-np, --parallel N\n--port PORT\n-nr, --no-repack\n--no-webui\n"
HELP += "--api-key-file FNAME\n"


def _program(folder: Path, body: str) -> Path:
    program = folder / "llama-server"
    program.write_text("#!/bin/sh\n" + body + "\n")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return program


def _launch(help_says: str = HELP, **changes: object) -> LlamaServerLaunch:
    settings: dict[str, object] = {
        "model": Path("/models/M.gguf"),
        "host": "127.0.0.1",
        "port": 8080,
        "parallel": 8,
        "n_ctx": 2048,
        "threads": 4,
        "n_gpu_layers": 0,
        "extra_buffers": False,
        "api_key": None,
    }
    settings.update(changes)
    return llama_server_launch(Path("/bin/llama-server"), help_says, **settings)  # type: ignore[arg-type]


def _after(command: list[str], flag: str) -> str:
    return command[command.index(flag) + 1]


def test_the_command_line_has_one_copy_n_slots_and_their_context() -> None:
    command = _launch().command
    assert _after(command, "--parallel") == "8"
    assert _after(command, "--ctx-size") == str(8 * 2048)  # each slot its --n-ctx
    assert _after(command, "--alias") == "M.gguf"  # /v1/models: the file, not its folders
    assert _after(command, "--host") == "127.0.0.1" and _after(command, "--port") == "8080"
    assert _after(command, "--threads") == "4" and _after(command, "--n-gpu-layers") == "0"
    assert "--no-repack" in command and "--no-webui" in command


def test_no_repack_only_when_the_build_has_it_and_extra_buffers_are_not_asked() -> None:
    assert "--no-repack" not in _launch(extra_buffers=True).command
    assert "--no-repack" not in _launch(HELP.replace("--no-repack", "")).command


def test_the_api_key_goes_in_a_private_file_never_on_the_command_line() -> None:
    launch = _launch(api_key="a-secret-key-1234")
    try:
        assert not [part for part in launch.command if "a-secret-key-1234" in part]
        assert launch.key_file is not None
        assert _after(launch.command, "--api-key-file") == str(launch.key_file)
        assert launch.key_file.read_text() == "a-secret-key-1234\n"
        assert stat.S_IMODE(launch.key_file.stat().st_mode) == 0o600
    finally:
        if launch.key_file is not None:
            launch.key_file.unlink()
    with pytest.raises(InferenceError, match="no --api-key-file"):
        _launch(HELP.replace("--api-key-file", ""), api_key="a-secret-key-1234")


def test_the_program_is_found_from_the_variable_and_a_bad_one_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    program = _program(tmp_path, f"echo '{HELP}'")
    monkeypatch.setenv(ENGINE_VARIABLE, str(program))
    assert find_llama_server() == program
    assert "--parallel" in help_text(program)
    monkeypatch.setenv(ENGINE_VARIABLE, str(tmp_path / "absent"))
    with pytest.raises(InferenceError, match="not an executable file"):
        find_llama_server()


def test_a_program_that_is_not_llama_server_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(InferenceError, match="does not look like llama-server"):
        help_text(_program(tmp_path, "echo 'usage: something else'"))


def test_a_gpu_is_seen_only_in_the_device_list(tmp_path: Path) -> None:
    cpu = "echo 'load_backend: loaded CPU backend'; echo 'Available devices:'"
    assert not llama_server_offloads(_program(tmp_path, cpu))
    gpu = "echo 'Available devices:'; echo '  CUDA0: NVIDIA H100 80GB HBM3 (81000 MiB)'"
    assert llama_server_offloads(_program(tmp_path, gpu))
    before = "echo 'ggml_cuda_init: failed: no CUDA devices'; echo 'Available devices:'"
    assert not llama_server_offloads(_program(tmp_path, before))


def test_exiting_before_it_is_ready_is_one_line_with_its_error(tmp_path: Path) -> None:
    key = tmp_path / "key"
    key.write_text("k\n")
    body = "echo 'loading model'; echo 'error: failed to load model M.gguf' >&2; exit 1"
    launch = LlamaServerLaunch([str(_program(tmp_path, body))], key)
    server = LlamaServerProcess(launch, "http://127.0.0.1:9")
    with pytest.raises(InferenceError) as raised:
        server.wait_ready(seconds=30)
    said = str(raised.value)
    assert (
        said == "llama-server exited with 1 before it was ready: error: failed to load model M.gguf"
    )
    assert not key.exists()  # the key file goes, whatever happened


HEALTHY = """
import http.server, sys
args = sys.argv[1:]
port = int(args[args.index("--port") + 1])
key = open(args[args.index("--api-key-file") + 1]).read()
open(sys.argv[0] + ".key-read", "w").write(key)
class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/health" else 404)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", port), Health).serve_forever()
"""


def test_the_key_file_is_removed_once_the_server_answers(tmp_path: Path) -> None:
    """The key file is read by the server at start, then gone from the disk while it keeps
    serving (a stand-in llama-server that reads it and answers /health)."""
    import sys

    from haf_tui.inference.serve_llama_server import free_port

    script = tmp_path / "stand_in.py"
    script.write_text(HEALTHY)
    program = _program(tmp_path, f'exec {sys.executable} {script} "$@"')
    port = free_port("127.0.0.1")
    launch = llama_server_launch(
        program, HELP, model=tmp_path / "M.gguf", host="127.0.0.1", port=port, parallel=1,
        n_ctx=512, threads=1, n_gpu_layers=0, extra_buffers=False, api_key="a-secret-key-1234",
    )  # fmt: skip
    assert launch.key_file is not None and launch.key_file.exists()
    server = LlamaServerProcess(launch, f"http://127.0.0.1:{port}")
    try:
        server.wait_ready(seconds=120)  # (a loaded machine starts Python slowly)
        assert server.process.poll() is None  # still serving
        assert not launch.key_file.exists()  # off the disk once it answered
        assert Path(f"{script}.key-read").read_text() == "a-secret-key-1234\n"  # it read it
    finally:
        server.stop()
        launch.key_file.unlink(missing_ok=True)


def test_the_process_is_killed_when_haf_serve_dies(tmp_path: Path) -> None:
    """The child of a killed ``haf serve`` goes with it at once (Linux's parent-death
    signal, SIGKILL)."""
    import subprocess
    import sys
    import time

    if sys.platform != "linux":
        pytest.skip("PR_SET_PDEATHSIG is Linux's")
    marker = tmp_path / "pid"
    loop = "while true; do sleep 0.1; done"
    program = _program(tmp_path, f"trap '' TERM; echo $$ > {marker}; {loop}")
    code = (
        "from haf_tui.inference.serve_llama_server import LlamaServerLaunch, LlamaServerProcess\n"
        f"LlamaServerProcess(LlamaServerLaunch([{str(program)!r}], None), 'http://x')\n"
        "import time; time.sleep(600)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    parent = subprocess.Popen([sys.executable, "-c", code], env=env)
    deadline = time.monotonic() + 120  # (a loaded machine starts Python slowly)
    while not (marker.exists() and marker.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.1)
    child = Path(f"/proc/{marker.read_text().strip()}")
    assert child.exists()
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 30
    while child.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not child.exists()  # killed though it ignores SIGTERM, and reaped


@pytest.mark.parametrize("layers", [8, -1, 1])  # (-1: all of them)
def test_gpu_layers_on_a_build_that_lists_no_gpu_is_one_line_and_nothing_starts(
    tmp_path: Path, layers: int
) -> None:
    from haf_tui.cli.serve_llama import serve_on_llama_server
    from haf_tui.inference.serve import ServeSettings

    started = tmp_path / "started"
    body = f"""case "$1" in
  --list-devices) echo 'Available devices:' ;;
  --help) printf '{HELP}' ;;
  *) touch {started}; sleep 30 ;;
esac"""
    settings = ServeSettings(
        model=tmp_path / "M.gguf", n_gpu_layers=layers, parallel=1, n_ctx=512, threads=1,
        extra_buffers=False, api_key=None, max_connections=8,
    )  # fmt: skip
    with pytest.raises(InferenceError, match=rf"^--n-gpu-layers {layers}: this llama-server build"):
        serve_on_llama_server(_program(tmp_path, body), "127.0.0.1", 0, settings)
    assert not started.exists()
