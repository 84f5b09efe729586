"""Where a comparison's statistics are kept (:data:`~haf_tui.tui.run_cache.RUN_CACHE` in
front of the files of :mod:`haf_tui.reports.statistics_files`), keyed by the runs' versions,
the seed, resamples, confidence and the libraries' versions; what one run's means or one
pair's differences hold so far (:class:`Found`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from haf_tui.reports import bootstrap
from haf_tui.reports.comparison import CONFIDENCE, N_RESAMPLES, SEED, Overlap
from haf_tui.reports.statistics_files import Kind, PairStatistics, StatisticsFiles, StatisticsKey
from haf_tui.store.comparison_readers import RunVersion
from haf_tui.tui.run_cache import RUN_CACHE


@dataclass
class Found:
    """What one run's means or one pair's differences hold so far, and how to compute the
    rest (the key None: nothing is kept)."""

    key: StatisticsKey | None
    kept: dict[str, Any]
    split: Overlap | None = None
    changed: bool = False


class Shelf:
    """Where a comparison's statistics are kept: :data:`RUN_CACHE` in front of the files."""

    def __init__(self, database: str, files: StatisticsFiles | None) -> None:
        self.database = database
        self._files: StatisticsFiles | None = files

    @property
    def files(self) -> StatisticsFiles:
        """The files (those under ``$HAF_HOME`` unless told: looked up when first needed)."""
        if self._files is None:
            self._files = StatisticsFiles()
        return self._files

    def key(self, kind: Kind, *runs: tuple[str, RunVersion | None]) -> StatisticsKey | None:
        """The key of ``runs`` at their versions (None: a version unknown, or no database)."""
        if not self.database or any(version is None for _, version in runs):
            return None
        at = tuple((run_id, version) for run_id, version in runs if version is not None)
        method = bootstrap.method_versions()
        return StatisticsKey(kind, self.database, at, SEED, N_RESAMPLES, CONFIDENCE, method)

    def means(self, run_id: str, version: RunVersion | None) -> Found:
        """A run's kept means (in memory, else in its file)."""
        key = self.key("means", (run_id, version))
        if key is None:
            return Found(None, {})
        held = RUN_CACHE.get(key)
        if isinstance(held, Found):
            return Found(key, dict(held.kept))
        return Found(key, dict(self.files.read_means(key) or {}))

    def pair(self, first: str, second: str, versions: dict[str, RunVersion]) -> Found:
        """A pair's kept differences and overlap (in memory, else in its file)."""
        key = self.key("paired", (first, versions.get(first)), (second, versions.get(second)))
        if key is None:
            return Found(None, {})
        held = RUN_CACHE.get(key)
        if isinstance(held, Found):
            return Found(key, dict(held.kept), held.split)
        read = self.files.read_pair(key)
        if read is None:
            return Found(key, {})
        return Found(key, dict(read.paired), read.overlap)

    def keep(self, means: dict[str, Found], pairs: dict[str, Found]) -> None:
        """Keep what changed, in memory and in its file."""
        for found in means.values():
            if found.key is not None and found.changed:
                RUN_CACHE.put(found.key, Found(found.key, dict(found.kept)))
                self.files.write_means(found.key, found.kept)
        for found in pairs.values():
            if found.key is not None and found.changed:
                RUN_CACHE.put(found.key, Found(found.key, dict(found.kept), found.split))
                self.files.write_pair(found.key, PairStatistics(found.kept, found.split))
