"""A run that another live process writes, for the workbench's watch-mode tests: a database
holding a run marked 'running' by that process's PID (nothing generated yet), the file held
open for writing by it as ``haf run`` holds it."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from haf_tui.store import open_store


def store_running_run(db: Path, writer_pid: int, still_clock: bool = False) -> str:
    """A database holding a run marked 'running' by ``writer_pid`` on this host, nothing
    generated yet. ``still_clock``: its row written an hour ahead, so the running time the
    monitor shows (stored time plus the seconds since the row was written, none when that is
    negative) is 0 s however long the test takes to get there (a snapshot of it read "0 s" or
    "1 s" with the machine's pace)."""
    import socket

    from haf_tui.config import RunConfig
    from haf_tui.datasets import builtin_sample
    from haf_tui.store.records import RunRecord

    sample = builtin_sample()
    with open_store(db) as store:
        store.save_dataset(sample.dataset_id, sample.name, sample.source, sample.instances)
        store.create_run(
            RunRecord(
                run_id="20261122-000000-orph",
                status="running",
                dataset_id=sample.dataset_id,
                n_planned=16,
                config_json=RunConfig().model_dump_json(),
                model_file="SmolLM2-135M-Instruct.Q4_1.gguf",
                similarity_model="all-MiniLM-L6-v2",
                similarity_kind="bi-encoder",
            )
        )
        store.connection.execute(
            "UPDATE runs SET writer_pid = ?, writer_host = ?", [writer_pid, socket.gethostname()]
        )
        if still_clock:
            store.connection.execute("UPDATE runs SET updated_at = now() + INTERVAL 1 HOUR")
    return "20261122-000000-orph"


@contextlib.contextmanager
def run_going_elsewhere(db: Path, still_clock: bool = False) -> Iterator[str]:
    """A run that another live process writes: it holds the file open for writing (as
    ``haf run`` does), so the app reads a snapshot, and the run's writer is alive."""
    code = (
        "import sys, duckdb; sys.stdin.readline(); c = duckdb.connect(sys.argv[1]); "
        "print('ready', flush=True); sys.stdin.readline()"  # (held until killed)
    )
    process = subprocess.Popen(
        [sys.executable, "-c", code, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        run_id = store_running_run(db, process.pid, still_clock)
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(b"go\n")
        process.stdin.flush()
        assert process.stdout.readline().strip() == b"ready"
        yield run_id
    finally:
        process.kill()
        process.wait()
