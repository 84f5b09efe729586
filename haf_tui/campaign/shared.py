"""What cells running side by side share, made safe to share between their threads.

- The store: DuckDB has one writer connection per process, and one connection's transaction
  is not for two threads. Each lane gets :class:`LaneStore`, a store on a cursor of the
  campaign's connection (its own transaction context, the same database), whose write
  transactions take one lock the lanes share: never two writes at once, so two cells never
  conflict (two cells storing the same dataset see each other's), while reads go on
  beside them. Inside a lane, its run's scorer thread writes as it does in ``haf run``.
- The similarity model: loaded once; its text-pair cache and a tokenizer are not for two
  threads, so :class:`LockedSimilarity` lets one call in at a time.
- Making a cell's run (claiming it, choosing a fresh run id, storing its dataset, creating
  the run): one lane at a time (:attr:`CampaignShared.setup`), so a fresh id checked free is
  still free when it is claimed.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from haf_tui.datasets import Dataset
from haf_tui.similarity import SimilarityModel
from haf_tui.store import Store


class LaneStore(Store):
    """A store on a cursor of ``store``'s connection whose write transactions hold
    ``write_lock`` (shared by every lane of the campaign)."""

    def __init__(self, store: Store, write_lock: threading.RLock) -> None:
        super().__init__(store.connection.cursor(), store.path, store.read_only, file=store.file)
        self._write_lock = write_lock

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        """:meth:`Store.transaction`, one lane at a time."""
        with self._write_lock, super().transaction() as connection:
            yield connection


class LockedSimilarity:
    """A similarity model one thread at a time."""

    def __init__(self, inner: SimilarityModel) -> None:
        self.inner = inner
        self.name = inner.name
        self._lock = threading.Lock()

    def similarities(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """The inner model's g, while no other thread is in it."""
        with self._lock:
            return self.inner.similarities(pairs)


@dataclass
class CampaignShared:
    """What a campaign's lanes share: the similarity model once loaded, the datasets once
    read, and the locks."""

    similarity: SimilarityModel | None = None
    datasets: dict[str, Dataset] = field(default_factory=dict)
    setup: threading.RLock = field(default_factory=threading.RLock)
    """Held while a cell's run is made, and while the first model loads (with the similarity
    model the others take)."""
    writes: threading.RLock = field(default_factory=threading.RLock)
    """Held by every write transaction of a lane's store."""
