"""What the campaigns screen shows, read in a worker: each stored campaign's cells as a grid
of models × datasets (no widget here).

A campaign's cells come from its grid file (the one it was last run from) and the store; when
that file is gone or no longer reads, from the cells the store has claimed, and the screen
says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from haf_tui.campaign import CampaignStatus, CellState, GridError, campaign_status, load_grid
from haf_tui.campaign.status import duration_text, known_campaigns
from haf_tui.store import Store
from haf_tui.store.campaigns import cell_runs, claimed_cells

STATUS_MARKS = {
    "finished": "✓",
    "running": "▶",
    "created": "▶",
    "interrupted": "‖",
    "failed": "✗",
    "pending": "·",
}
"""How a cell's status is drawn in the grid."""

LEGEND = (
    "✓ finished  ▶ running  ‖ interrupted (haf campaign run resumes it)  ✗ failed  · pending · "
    "done/planned instances · ETA: instances left × seconds per instance, at the cell's own "
    "pace, else at its model's (its finished cells', else its cells under way)"
)
"""The grid's definitions (shown under it and by ``?``)."""


@dataclass(frozen=True)
class CampaignGrid:
    """One campaign as the screen draws it: its cells by (model, dataset), in the grid
    file's order, and where they came from."""

    name: str
    grid_path: str
    status: CampaignStatus
    models: list[str]
    datasets: list[str]
    note: str | None = None
    """Why only the claimed cells are shown (the grid file is gone or unreadable)."""

    def cell(self, model: str, dataset: str) -> CellState | None:
        """The cell of ``model`` × ``dataset`` (None: the grid has no such cell)."""
        for cell in self.status.cells:
            if cell.model == model and cell.dataset == dataset:
                return cell
        return None

    def run_ids(self) -> list[str]:
        """The runs of the campaign's cells that have one, in the grid's order."""
        return [cell.run_id for cell in self.status.cells if cell.run_id is not None]


def read_campaigns(store: Store) -> list[CampaignGrid]:
    """Every campaign stored in the database, oldest first."""
    grids = []
    for stored in known_campaigns(store):
        note = None
        try:
            grid = load_grid(stored.grid_path)
        except GridError as exc:
            note = f"its grid file does not read ({exc}): the cells made so far"
            status = _claimed_status(store, stored.name)
        else:
            status = campaign_status(store, grid.model_copy(update={"name": stored.name}))
        models = list(dict.fromkeys(cell.model for cell in status.cells))
        datasets = list(dict.fromkeys(cell.dataset for cell in status.cells))
        grids.append(CampaignGrid(stored.name, stored.grid_path, status, models, datasets, note))
    return grids


def _claimed_status(store: Store, name: str) -> CampaignStatus:
    """A campaign's status from its claimed cells only (no grid file to say what is pending)."""
    claims = sorted(claimed_cells(store, name).values(), key=lambda claim: claim.position)
    runs = cell_runs(store, [claim.run_id for claim in claims])
    cells = []
    for claim in claims:
        run = runs.get(claim.run_id)
        cells.append(
            CellState(
                claim.model_label,
                claim.dataset_label,
                claim.position,
                run.run_id if run else None,
                run.status if run else "pending",
                run.done if run else 0,
                run.planned if run else None,
                run.generations if run else 0,
                run.seconds if run else 0.0,
            )
        )
    return CampaignStatus(name, cells, None, False)


def cell_text(cell: CellState | None) -> str:
    """A grid cell: its mark, instances done/planned and, unfinished, its ETA."""
    if cell is None:
        return ""
    planned = "?" if cell.planned is None else str(cell.planned)
    text = f"{STATUS_MARKS.get(cell.status, '?')} {cell.done}/{planned}"
    if cell.status != "finished" and cell.eta_seconds is not None:
        text += f" {duration_text(cell.eta_seconds)}"
    return text


def cell_detail(cell: CellState) -> str:
    """The line under the grid for the cell under the cursor."""
    if cell.run_id is None:
        return f"{cell.model} × {cell.dataset}: pending (no run yet)"
    eta = "" if cell.eta_seconds is None else f" · ETA {duration_text(cell.eta_seconds)}"
    return (
        f"{cell.model} × {cell.dataset}: run {cell.run_id}, {cell.status}, "
        f"{cell.done}/{cell.planned} instances, {cell.generations} generations, "
        f"{duration_text(cell.seconds)} running{eta}"
    )


def campaign_line(grid: CampaignGrid) -> str:
    """The campaign's summary: cells finished and the time left."""
    status = grid.status
    line = f"campaign {grid.name}: {status.finished}/{len(status.cells)} cells finished"
    if status.running:
        line += f" · {status.running} running"
    if status.eta_seconds is not None:
        bound = "" if status.eta_complete else "≥ "
        line += f" · ETA {bound}{duration_text(status.eta_seconds)}"
    return line
