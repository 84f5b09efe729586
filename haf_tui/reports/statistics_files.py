"""Comparison statistics kept on disk, so that a comparison opened in a new process shows its
intervals without resampling (issue 44 §2): a run's means with their intervals (a mean over
no instance says the run has no value of the metric), and a pair of runs' paired differences,
each in one small JSON file under ``$HAF_HOME/cache/compare/``.

Why files and not the database: the workbench reads the database read-only while another
process may be writing it, so what the workbench computes could not always be written there;
and a pair's differences depend on which runs a user puts side by side, so they are computed
where they are asked for.

Each file holds its **key** whole: the kind, the database file (its resolved path), each run's
id with its :data:`~haf_tui.store.comparison_readers.RunVersion` (status, last change of its
row, its result and metric rows: a resumed or re-scored run adds rows, so its version, and
with it the key, changes), the bootstrap's seed, resamples and confidence, and what else
shapes its numbers (the draws' batch, numpy's and scipy's versions: after an upgrade the
intervals are computed anew, as ``haf report --report compare-ci`` computes them). The file's name
is a digest of the key; what is read is used only when its stored key equals the one asked
for. What is read is hostile until checked: only a regular file (``O_NONBLOCK``: a FIFO never
blocks; a symlink is not followed), at most :data:`FILE_LIMIT` bytes, JSON of exactly the
expected shape and types, each mean and interval as they can be (finite; none over no value, no
interval over one, a low not above its high, a p between 0 and 1); anything else is ignored
and written over by the next computation (a cache: nothing is lost). Writes are atomic (a
temporary file renamed into place), and a write that fails (a read-only or full disk) is left
out: the values shown were computed anyway.
The folder keeps the :data:`MAX_FILES` newest files.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import stat
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from haf_tui.defaults import haf_home
from haf_tui.reports.comparison import MeanInterval, Overlap, PairedDifference
from haf_tui.store.safe_files import atomic_target

FORMAT: Final = 1
"""The files' layout (a file of another is ignored)."""
FILE_LIMIT: Final = 16 << 20
"""The largest file read (bytes): a pair's file lists the ids only one run has, a few MB at most
for 100,000 instances."""
MAX_FILES: Final = 2048
"""Files kept in the folder (the oldest are removed when a write passes it)."""
STALE_TEMPORARY_SECONDS: Final = 3600.0
"""A temporary file (a write's, before its rename) older than this was left by a process that
died mid-write: removed at the next write (a younger one may be another process's, writing)."""

Kind = Literal["means", "paired"]


def cache_folder() -> Path:
    """Where the files are: ``$HAF_HOME/cache/compare``."""
    return haf_home() / "cache" / "compare"


@dataclass(frozen=True)
class StatisticsKey:
    """What a file's statistics were computed from (see the module)."""

    kind: Kind
    database: str
    runs: tuple[tuple[str, tuple[str, str, int, int]], ...]
    seed: int
    n_resamples: int
    confidence: float
    method: tuple[str, ...]
    """:func:`~haf_tui.reports.bootstrap.method_versions`: the draws' batch, numpy's and
    scipy's versions."""

    def as_json(self) -> Any:
        """The key as JSON data (what the file stores and is compared with)."""
        return json.loads(
            json.dumps(
                {
                    "kind": self.kind,
                    "database": self.database,
                    "runs": [[run_id, list(version)] for run_id, version in self.runs],
                    "seed": self.seed,
                    "n_resamples": self.n_resamples,
                    "confidence": self.confidence,
                    "method": list(self.method),
                }
            )
        )

    def file_name(self) -> str:
        """The file's name: a digest of the key."""
        text = json.dumps(self.as_json(), sort_keys=True)
        return f"{self.kind}-{hashlib.sha256(text.encode()).hexdigest()[:40]}.json"


@dataclass(frozen=True)
class PairStatistics:
    """A pair's kept paired differences (metric → difference) and which finished instances
    both runs have (None: not computed yet)."""

    paired: dict[str, PairedDifference]
    overlap: Overlap | None


class StatisticsFiles:
    """The files in one folder (:func:`cache_folder` unless told)."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder if folder is not None else cache_folder()

    def read_means(self, key: StatisticsKey) -> dict[str, MeanInterval] | None:
        """The run's means kept under ``key`` (None: none, or not readable)."""
        found: dict[str, MeanInterval] | None = self._read(key, _means_from)
        return found

    def read_pair(self, key: StatisticsKey) -> PairStatistics | None:
        """The pair's differences kept under ``key`` (None: none, or not readable)."""
        found: PairStatistics | None = self._read(key, _pair_from)
        return found

    def write_means(self, key: StatisticsKey, means: Mapping[str, MeanInterval]) -> None:
        """Keep a run's means (metric → interval) under ``key`` (replacing what was kept)."""
        self._write(key, {"means": {m: [i.n, i.mean, i.low, i.high] for m, i in means.items()}})

    def write_pair(self, key: StatisticsKey, found: PairStatistics) -> None:
        """Keep a pair's differences under ``key`` (replacing what was kept)."""
        split = found.overlap
        paired = {
            m: [d.n, d.mean, d.low, d.high, d.statistic, d.p_value,
                list(d.only_first), list(d.only_second)]
            for m, d in found.paired.items()
        }  # fmt: skip
        both = None
        if split is not None:
            both = [list(split.both), list(split.only_first), list(split.only_second)]
        self._write(key, {"paired": paired, "overlap": both})

    def _read(self, key: StatisticsKey, parse: Callable[[Mapping[str, Any]], Any]) -> Any:
        raw = _read_regular(self.folder / key.file_name(), FILE_LIMIT)
        if raw is None:
            return None
        try:
            found = json.loads(raw.decode("utf-8"))
            if not isinstance(found, dict) or found.get("format") != FORMAT:
                return None
            if found.get("key") != key.as_json():
                return None
            return parse(found)
        except (ValueError, TypeError, KeyError, RecursionError):
            return None

    def _write(self, key: StatisticsKey, body: dict[str, Any]) -> None:
        text = json.dumps({"format": FORMAT, "key": key.as_json(), **body})
        try:
            with atomic_target(self.folder / key.file_name()) as temporary:
                temporary.write_text(text, encoding="utf-8")
            self._prune()
        except OSError:
            return  # (a cache: what was computed is shown all the same)

    def _prune(self) -> None:
        now = time.time()
        for temporary in self.folder.glob(".*.tmp"):
            with contextlib.suppress(OSError):
                if now - temporary.lstat().st_mtime > STALE_TEMPORARY_SECONDS:
                    temporary.unlink()
        files = [path for path in self.folder.glob("*.json") if path.is_file()]
        if len(files) <= MAX_FILES:
            return
        files.sort(key=lambda path: path.stat().st_mtime_ns)
        for path in files[: len(files) - MAX_FILES]:
            with contextlib.suppress(OSError):
                path.unlink()


def _read_regular(path: Path, limit: int) -> bytes | None:
    """At most ``limit`` bytes of the regular file at ``path`` (None for anything else)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return None
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(descriptor, 1 << 16):
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                return None
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(descriptor)


def _count(value: object) -> int:
    if type(value) is not int or value < 0:
        raise ValueError(f"not a count: {value!r}")
    return value


def _number(value: object) -> float | None:
    if value is None:
        return None
    if type(value) is not float or not math.isfinite(value):
        raise ValueError(f"not a number: {value!r}")
    return value


def _ids(value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(type(item) is str for item in value):
        raise ValueError("not a list of ids")
    return tuple(value)


def _fields(value: object, size: int) -> Sequence[object]:
    if not isinstance(value, list) or len(value) != size:
        raise ValueError(f"not {size} fields")
    return value


def _named(value: object) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError("not an object")
    return value


def _interval(n: object, mean: object, low: object, high: object) -> None:
    """Check what a mean and its interval can be: none over no value, no interval over one,
    all three over more, the interval's low not above its high (ValueError if not)."""
    count, numbers = _count(n), (_number(mean), _number(low), _number(high))
    present = tuple(number is not None for number in numbers)
    expected = (False, False, False) if count == 0 else (True, count > 1, count > 1)
    if present != expected:
        raise ValueError(f"a mean over {count} values cannot be {numbers}")
    if numbers[1] is not None and numbers[2] is not None and numbers[1] > numbers[2]:
        raise ValueError("an interval whose low is above its high")


def _means_from(found: Mapping[str, Any]) -> dict[str, MeanInterval]:
    means: dict[str, MeanInterval] = {}
    for metric, stored in _named(found["means"]).items():
        n, mean, low, high = _fields(stored, 4)
        _interval(n, mean, low, high)
        means[metric] = MeanInterval(_count(n), _number(mean), _number(low), _number(high))
    return means


def _pair_from(found: Mapping[str, Any]) -> PairStatistics:
    paired: dict[str, PairedDifference] = {}
    for metric, stored in _named(found["paired"]).items():
        n, mean, low, high, statistic, p_value, only_first, only_second = _fields(stored, 8)
        _interval(n, mean, low, high)
        p = _number(p_value)
        if (p is None) != (_number(statistic) is None) or (p is not None and not 0 <= p <= 1):
            raise ValueError(f"not a test's statistic and p: {statistic!r}, {p_value!r}")
        paired[metric] = PairedDifference(
            _count(n), _number(mean), _number(low), _number(high), _number(statistic),
            _number(p_value), _ids(only_first), _ids(only_second),
        )  # fmt: skip
    stored_split = found["overlap"]
    split = None
    if stored_split is not None:
        both, only_first, only_second = _fields(stored_split, 3)
        split = Overlap(_ids(both), _ids(only_first), _ids(only_second))
    return PairStatistics(paired, split)
