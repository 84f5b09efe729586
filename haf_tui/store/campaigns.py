"""Campaigns (``haf campaign``): a named grid of models × datasets, and its cells.

A cell is claimed before its run is made: its row names the run id the run will get
(committed first), so a campaign killed at any moment leaves at most one run per cell; the
row also keeps the fingerprint of the settings the cell was made with and those settings.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from haf_tui.store.db import Store


@dataclass(frozen=True)
class StoredCampaign:
    """A campaign in the database: its name and the grid file it was last run from."""

    name: str
    grid_path: str
    cells: int
    """Cells claimed so far."""


@dataclass(frozen=True)
class ClaimedCell:
    """A cell's claim: the run id its run has (or will get) and the settings it was made with."""

    model_label: str
    dataset_label: str
    run_id: str
    fingerprint: str
    settings: dict[str, Any]
    position: int


@dataclass(frozen=True)
class CellRun:
    """What a cell's run holds so far."""

    run_id: str
    status: str
    """As shown: a run marked running whose writer is gone is ``interrupted``."""
    planned: int
    done: int
    generations: int
    seconds: float
    model_file: str


def save_campaign(store: Store, name: str, grid_path: str) -> None:
    """Record the campaign (or the grid file it now runs from)."""
    with store.transaction() as con:
        con.execute(
            "INSERT INTO campaigns (name, grid_path) VALUES (?, ?) "
            "ON CONFLICT (name) DO UPDATE SET grid_path = excluded.grid_path",
            [name, grid_path],
        )


def known_campaigns(store: Store) -> list[StoredCampaign]:
    """Every stored campaign with its grid file and claimed cells, oldest first."""
    _, rows = store.query(
        "SELECT c.name, c.grid_path, "
        "(SELECT count(*) FROM campaign_cells k WHERE k.campaign = c.name) "
        "FROM campaigns c ORDER BY c.created_at, c.name"
    )
    return [StoredCampaign(str(n), str(p), int(k)) for n, p, k in rows]


def claimed_cells(store: Store, campaign: str) -> dict[tuple[str, str], ClaimedCell]:
    """The campaign's claimed cells by (model label, dataset label)."""
    _, rows = store.query(
        "SELECT model_label, dataset_label, claimed_run_id, fingerprint, "
        "CAST(settings AS VARCHAR), position FROM campaign_cells WHERE campaign = ? "
        "ORDER BY position",
        [campaign],
    )
    return {
        (str(m), str(d)): ClaimedCell(str(m), str(d), str(r), str(f), json.loads(s), int(p))
        for m, d, r, f, s, p in rows
    }


def claim_cell(store: Store, campaign: str, cell: ClaimedCell) -> None:
    """Claim a cell for its run id (committed before the run is made)."""
    with store.transaction() as con:
        con.execute(
            "INSERT INTO campaign_cells (campaign, model_label, dataset_label, claimed_run_id, "
            "fingerprint, settings, position) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                campaign,
                cell.model_label,
                cell.dataset_label,
                cell.run_id,
                cell.fingerprint,
                json.dumps(cell.settings, sort_keys=True),
                cell.position,
            ],
        )


def reclaim_cell(store: Store, campaign: str, cell: ClaimedCell) -> None:
    """Give a claimed cell whose run was never made the settings it is now made with."""
    with store.transaction() as con:
        con.execute(
            "UPDATE campaign_cells SET fingerprint = ?, settings = ?, position = ? "
            "WHERE campaign = ? AND model_label = ? AND dataset_label = ?",
            [
                cell.fingerprint,
                json.dumps(cell.settings, sort_keys=True),
                cell.position,
                campaign,
                cell.model_label,
                cell.dataset_label,
            ],
        )


def run_id_taken(store: Store, run_id: str) -> bool:
    """Whether a run or a claimed cell already has this id."""
    _, rows = store.query(
        "SELECT (SELECT count(*) FROM runs WHERE run_id = $id) "
        "+ (SELECT count(*) FROM campaign_cells WHERE claimed_run_id = $id)",
        {"id": run_id},
    )
    return bool(rows[0][0])


def cell_runs(store: Store, run_ids: Sequence[str]) -> dict[str, CellRun]:
    """The runs of these ids that exist, with their progress (a missing one: not made yet)."""
    if not run_ids:
        return {}
    _, rows = store.query(
        "SELECT r.run_id, r.status, r.n_planned, "
        "(SELECT count(*) FROM instance_results i WHERE i.run_id = r.run_id), "
        "(SELECT count(*) FROM generations g WHERE g.run_id = r.run_id), "
        "r.seconds_running, r.model_file "
        "FROM runs r WHERE list_contains($ids::VARCHAR[], r.run_id)",
        {"ids": list(run_ids)},
    )
    orphaned = store.orphaned_runs()
    found = {}
    for run_id, status, planned, done, generations, seconds, model_file in rows:
        shown = "interrupted" if status == "running" and run_id in orphaned else str(status)
        found[str(run_id)] = CellRun(
            str(run_id),
            shown,
            int(planned),
            int(done),
            int(generations),
            float(seconds),
            str(model_file),
        )
    return found
