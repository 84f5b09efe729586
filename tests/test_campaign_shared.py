"""What a campaign's cells side by side share between their threads (issue 37 §2): the store
(each lane on its own cursor of the campaign's connection, one write at a time, on a real DuckDB
file) and the similarity model (one call at a time)."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path

from haf_tui.campaign.shared import LaneStore, LockedSimilarity
from haf_tui.store import open_store
from haf_tui.store.records import InstanceRecord


def test_lanes_storing_the_same_dataset_at_once_store_it_once(tmp_path: Path) -> None:
    """Two lanes' stores (cursors of one connection) write one at a time: the second sees
    the first's dataset instead of failing on its key."""
    instances = [InstanceRecord(instance_id="i0", position=0, text="a text", label="toxic")]
    lock = threading.RLock()
    errors: list[BaseException] = []
    with open_store(tmp_path / "c.duckdb") as store:
        together = threading.Barrier(4)

        def save() -> None:
            lane = LaneStore(store, lock)
            try:
                together.wait()
                for n in range(15):
                    lane.save_dataset(f"d{n}", "d", "test", instances)
            except BaseException as exc:
                errors.append(exc)
            finally:
                lane.close()

        threads = [threading.Thread(target=save) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        _, rows = store.query("SELECT count(*) FROM datasets")
        _, kept = store.query("SELECT count(*) FROM instances")
    assert not errors, errors[0]
    assert rows == [(15,)] and kept == [(15,)]


class _OneAtATime:
    """A similarity model that notes two threads in it at once."""

    name = "one-at-a-time"

    def __init__(self) -> None:
        self.inside = 0
        self.most = 0

    def similarities(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        self.inside += 1
        self.most = max(self.most, self.inside)
        time.sleep(0.01)
        self.inside -= 1
        return [0.5 for _ in pairs]


def test_the_shared_similarity_model_takes_one_thread_at_a_time() -> None:
    inner = _OneAtATime()
    shared = LockedSimilarity(inner)
    threads = [
        threading.Thread(target=lambda: [shared.similarities([("a", "b")]) for _ in range(5)])
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert inner.most == 1 and shared.name == "one-at-a-time"
