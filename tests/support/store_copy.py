"""A fresh copy of a test's template store for the workbench's read-ahead tests: the file
as the app opens it, and nothing the workbench kept in memory from an earlier test."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from haf_tui.tui import read_ahead
from haf_tui.tui.run_cache import RUN_CACHE, VALUES_CACHE

AN_HOUR = 3600


def store_copy(template: Path, folder: Path, *, settled: bool = True) -> Path:
    """``template`` copied to ``folder``/haf.duckdb, written an hour ago (``settled``: what is
    read from it is kept) or just now (nothing would be kept); the caches of values read
    and the runs list's last read ahead emptied."""
    path = folder / "haf.duckdb"
    shutil.copyfile(template, path)
    if settled:
        at = time.time() - AN_HOUR
        os.utime(path, (at, at))
    VALUES_CACHE.clear()
    RUN_CACHE.clear()
    read_ahead._last_read.clear()
    return path
