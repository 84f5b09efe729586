"""A full disk (a file size limit on the writing process): ``haf run`` ends with one line,
the run is interrupted, and a resume with room to write finishes it with no duplicates."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from haf_tui.store import open_store

pytestmark = [pytest.mark.real_model, pytest.mark.real_similarity]
LIMIT_BYTES = 48_000
"""Room for the database, the dataset, the run and a generation or two (about 20 kB before the
first generation here): the first answers of 4 texts need more whatever the model says. (At
400 kB, a CPU on which fewer texts went past JUSTIFY let the run finish under the limit.)"""


def _haf(db: Path, *args: str, limit: int | None = None) -> subprocess.CompletedProcess[str]:
    def cap() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))  # type: ignore[arg-type]

    return subprocess.run(
        [sys.executable, "-m", "haf_tui.cli", "--db", str(db), *args],
        capture_output=True,
        text=True,
        timeout=600,
        preexec_fn=cap if limit else None,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def test_a_full_disk_interrupts_the_run_and_it_resumes(tmp_path: Path) -> None:
    db = tmp_path / "haf.duckdb"
    args = ["run", "--demo", "--limit", "4", "--max-new-tokens", "64"]
    full = _haf(db, *args, limit=LIMIT_BYTES)
    assert full.returncode == 2, full.stdout + full.stderr
    err = full.stderr.strip()
    assert err.startswith("error: cannot write to database") and "\n" not in err, err
    assert "haf run --resume" in err and "Traceback" not in full.stdout + full.stderr
    with open_store(db, read_only=True) as store:
        (run,) = store.list_runs()
        assert run["status"] == "interrupted" and run["n_done"] < 4
    resumed = _haf(db, "run", "--resume", run["run_id"])
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    with open_store(db, read_only=True) as store:
        (run,) = store.list_runs()
        assert run["status"] == "finished" and run["n_done"] == 4
        duplicates = store.query(
            "SELECT count(*) - count(DISTINCT (instance_id, stage, sub_index)) FROM generations"
        )[1][0][0]
        assert duplicates == 0
