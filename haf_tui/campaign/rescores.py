"""A campaign's other similarity models: every finished cell re-scored with each g of the
grid's ``similarity`` list after the first (``haf rescore``'s derived runs; a cell re-scored
before is skipped, one stopped goes on). The derived runs are found from their cell's run and
their g (:func:`haf_tui.store.derived_runs.children_of`): the campaign's own tables are
unchanged."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from haf_tui.campaign.grid import Grid, GridError
from haf_tui.campaign.similarities import SimilarityEntry
from haf_tui.campaign.status import CellState, campaign_cells
from haf_tui.pipeline.rescore import (
    RescoreError,
    RescoreSummary,
    load_rescore_similarity,
    probe_similarity,
    rescore_run,
)
from haf_tui.store import Store
from haf_tui.store.derived_runs import children_of


@dataclass(frozen=True)
class RescoreHooks:
    """What the face shows: a g loading, a cell re-scored."""

    loading: Callable[[SimilarityEntry], None] = lambda entry: None
    done: Callable[[CellState, SimilarityEntry, RescoreSummary], None] = lambda c, e, s: None


def check_similarities(
    grid: Grid, *, device: str = "cpu", loading: Callable[[SimilarityEntry], None] | None = None
) -> None:
    """Load every g the grid names and score one pair with it, before its first cell: a bad
    path, a model not in the cache, a cross-encoder without its head, a g that scores NaN or a
    device it cannot run on is one line naming the grid's entry, not a failure after every
    cell has generated. Each is dropped again (the cells' g loads with the first model, the
    others when their re-scores start)."""
    for entry in grid.similarity:
        if loading is not None:
            loading(entry)
        try:
            probe_similarity(load_rescore_similarity(entry.model, entry.kind, device=device))
        except RescoreError as exc:
            raise GridError(f"{grid.path}: similarity {entry.label!r}: {exc}") from exc


def derived_cell(store: Store, run_id: str, entry: SimilarityEntry) -> str | None:
    """The finished derived run of ``run_id`` with ``entry``'s g, if there is one."""
    for derived in children_of(store, run_id):
        if (derived.similarity_model, derived.similarity_kind) == (entry.model, entry.kind):
            return derived.run_id if derived.status == "finished" else None
    return None


def rescore_campaign(
    store: Store,
    grid: Grid,
    *,
    device: str = "cpu",
    hooks: RescoreHooks | None = None,
    stop_event: threading.Event | None = None,
) -> list[tuple[CellState, SimilarityEntry, RescoreSummary]]:
    """Re-score every finished cell with every g after the grid's first; each g is loaded
    once, and only when a cell still needs it."""
    hooks = hooks or RescoreHooks()
    cells = [c for c in campaign_cells(store, grid) if c.status == "finished" and c.run_id]
    done: list[tuple[CellState, SimilarityEntry, RescoreSummary]] = []
    for entry in grid.similarity[1:]:
        todo = [c for c in cells if derived_cell(store, str(c.run_id), entry) is None]
        if not todo:
            continue
        hooks.loading(entry)
        similarity = load_rescore_similarity(entry.model, entry.kind, device=device)
        for cell in todo:
            if stop_event is not None and stop_event.is_set():
                return done
            summary = rescore_run(
                store, str(cell.run_id), similarity, entry.kind, device=device,
                stop_event=stop_event,
            )  # fmt: skip
            if not summary.run_id:  # (stopped before it began: nothing made)
                return done
            hooks.done(cell, entry, summary)
            done.append((cell, entry, summary))
    return done
