"""``make bench``'s servers part (issue 37 §1): ``haf run --server`` against one llama-server
with ``-np 8`` beside the in-process engine with ``--parallel 8`` on the same texts, the two
arms interleaved (:mod:`benchmarks.method`), instances per hour of each whole ``haf run``
(start, model or vocabulary load, the probe, generation, storing) and their ratio; and the
memory (peak RSS) of one llama-server serving 8 at once against ``haf serve --parallel 8`` on
llama-cpp-python's server (8 copies of the model), each after the same run through it.

``python -m benchmarks.servers`` runs it alone (figures to ``bench-results/servers.json``)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from benchmarks.method import compare, load_average

ROOT = Path(__file__).resolve().parents[1]
READY_S = 300.0


def _haf(argv: list[str], home: Path) -> float:
    """One ``haf`` command as its own process; its wall seconds (a failure raises)."""
    env = {**os.environ, "HAF_HOME": str(home), "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "haf_tui.cli", *argv], capture_output=True, text=True, env=env
    )
    if done.returncode != 0:
        raise RuntimeError(f"haf {' '.join(argv[:4])}: {done.stderr.strip()[-300:]}")
    return time.perf_counter() - started


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Served:
    """``haf serve`` with ``engine`` and ``parallel`` (and ``threads``, else its default) on a
    free loopback port."""

    def __init__(
        self, engine: str, parallel: int, n_ctx: int, home: Path, threads: int | None = None
    ):
        from haf_tui.defaults import embedded_model_path

        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        command = [sys.executable, "-m", "haf_tui.cli", "serve"]
        command += ["--model", str(embedded_model_path()), "--port", str(self.port)]
        command += ["--engine", engine, "--parallel", str(parallel), "--n-ctx", str(n_ctx)]
        command += ["--threads", str(threads)] if threads is not None else []
        env = {**os.environ, "HAF_HOME": str(home), "PYTHONPATH": str(ROOT)}
        self.process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
        )
        deadline = time.monotonic() + READY_S
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/v1/models", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if self.process.poll() is not None:
                raise RuntimeError(f"haf serve --engine {engine} exited")
            time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"haf serve --engine {engine} was not ready in {READY_S:.0f} s")

    def peak_rss_mib(self) -> dict[str, float]:
        """Peak resident memory (VmHWM) of ``haf serve`` and of each process under it."""
        tree = {"haf serve": self.process.pid}
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        if children.exists():
            for pid in children.read_text().split():
                name = Path(f"/proc/{pid}/comm").read_text().strip()
                tree[name] = int(pid)
        return {name: _vm_hwm(pid) for name, pid in tree.items()}

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _vm_hwm(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def bench_servers(
    instances: int, max_new: int, parallel: int, rounds: int, home: Path
) -> dict[str, Any]:
    """The interleaved comparison and the memory of the two servers."""
    from haf_tui.inference.serve_llama_server import find_llama_server

    if find_llama_server() is None:
        return {"skipped": "llama-server is not built (make llama-server)"}
    run = ["run", "--dataset", "sample", "--limit", str(instances)]
    run += ["--max-new-tokens", str(max_new), "--stages", "justify", "--suites", "haf"]
    n_ctx = 2048
    served = Served("llama-server", parallel, n_ctx, home)
    try:
        counter = iter(range(10**6))

        def arm(extra: list[str]) -> Callable[[], float]:
            def timed() -> float:
                db = home / f"servers-{next(counter)}.duckdb"
                seconds = _haf(["--db", str(db), *run, *extra], home)
                db.unlink(missing_ok=True)
                return instances / seconds * 3600

            return timed

        row = compare(
            {
                "llama_server": arm(["--server", f"{served.url}#{parallel}"]),
                "in_process": arm(["--parallel", str(parallel)]),
            },
            rounds,
            {"server_over_in_process": ("llama_server", "in_process")},
        )
        llama_memory = served.peak_rss_mib()
    finally:
        served.stop()
    python_served = Served("llama-cpp-python", parallel, n_ctx, home)
    try:
        _haf(["--db", str(home / "python.duckdb"), *run, "--server", python_served.url], home)
        python_memory = python_served.peak_rss_mib()
    finally:
        python_served.stop()
    row["unit"] = f"instances/hour of haf run ({instances} instances, {max_new} tokens, justify)"
    row["memory_peak_rss_mib"] = {
        f"llama-server -np {parallel} (haf serve --engine llama-server)": llama_memory,
        f"haf serve --parallel {parallel} (llama-cpp-python, {parallel} copies)": python_memory,
    }
    return row


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.servers", description=__doc__)
    parser.add_argument("--instances", type=int, default=8)
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--parallel", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default="bench-results")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="haf-bench-servers-") as home:
        row = bench_servers(
            args.instances, args.max_new_tokens, args.parallel, args.rounds, Path(home)
        )
    row["load_at_end"] = load_average()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "servers.json").write_text(json.dumps(row, indent=2) + "\n")
    print(json.dumps(row, indent=2))


if __name__ == "__main__":
    main()
