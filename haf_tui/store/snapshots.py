"""Snapshots: a database file and its write-ahead log copied into a temporary folder named
after this process, to be read while another process writes the file; the folders of
processes that are gone are removed by the next copy."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from haf_tui.store.errors import StoreError
from haf_tui.store.holder import pid_alive

SNAPSHOT_PREFIX = "haf-snapshot-"


def remove_stale_snapshots(root: Path | None = None) -> int:
    """Remove snapshot folders whose process is gone (a killed ``--snapshot`` reader);
    returns how many."""
    root = root or Path(tempfile.gettempdir())
    removed = 0
    for folder in root.glob(SNAPSHOT_PREFIX + "*"):
        pid_text = folder.name.removeprefix(SNAPSHOT_PREFIX).split("-", 1)[0]
        if pid_text.isdigit() and not pid_alive(int(pid_text)) and folder.is_dir():
            shutil.rmtree(folder, ignore_errors=True)
            removed += 1
    return removed


def copy_database(db_path: Path, *, attempts: int = 5) -> tuple[Path, Callable[[], None]]:
    """Copy a database file and its write-ahead log into a new temporary folder (named after
    this process, so a later call removes it if this process dies); returns the copy and the
    function that removes it."""
    remove_stale_snapshots()
    folder = Path(tempfile.mkdtemp(prefix=f"{SNAPSHOT_PREFIX}{os.getpid()}-"))

    def remove() -> None:
        shutil.rmtree(folder, ignore_errors=True)

    target = folder / db_path.name
    wal = db_path.with_name(db_path.name + ".wal")
    try:
        for _ in range(attempts):
            before = db_path.stat().st_mtime_ns, db_path.stat().st_size
            shutil.copyfile(db_path, target)
            if wal.exists():
                shutil.copyfile(wal, folder / wal.name)
            if (db_path.stat().st_mtime_ns, db_path.stat().st_size) == before:
                return target, remove
            time.sleep(0.2)
    except OSError as exc:
        remove()
        raise StoreError(f"cannot copy database {db_path}: {exc.strerror or exc}") from exc
    remove()
    raise StoreError(f"database {db_path} kept changing while copying it; try again")
