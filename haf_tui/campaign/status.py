"""Where a campaign stands, as data (the command line's table, the workbench's grid, the
report's cell list): each cell's run, status, instances done of planned, and an ETA.

Read-only: it reads the grid file and the store, never the models.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from haf_tui.campaign.grid import Grid
from haf_tui.campaign.lanes import Lane, default_cells_at_once, server_identity, time_left
from haf_tui.store import Store
from haf_tui.store.campaigns import StoredCampaign, cell_runs, claimed_cells, known_campaigns

__all__ = [
    "CampaignStatus",
    "CellState",
    "StoredCampaign",
    "campaign_cells",
    "campaign_status",
    "duration_text",
    "known_campaigns",
]


@dataclass(frozen=True)
class CellState:
    """One cell as the store has it. ``status``: ``pending`` (no run yet), else its run's
    (``created``, ``running``, ``interrupted``, ``finished``, ``failed``). ``planned``: the
    run's instances; a pending cell's is the grid's limit (at most), or None."""

    model: str
    dataset: str
    position: int
    run_id: str | None
    status: str
    done: int
    planned: int | None
    generations: int
    seconds: float
    eta_seconds: float | None = None
    """Seconds still to go: from the cell's own pace, else (pending) from its model's pace per
    instance (its finished cells', else, before one finishes, its cells under way); None: not
    known yet (or nothing left)."""


@dataclass(frozen=True)
class CampaignStatus:
    """A campaign's cells and the time left for all of them."""

    name: str
    cells: list[CellState]
    eta_seconds: float | None
    """The time left: the cells' ETAs, a model's cells one after another, models side by side
    as the grid file lets them (its servers, ``cells_at_once``; one after another: the sum;
    None: none known)."""
    eta_complete: bool
    """Whether every unfinished cell's ETA is known (else the sum is a lower bound)."""

    @property
    def finished(self) -> int:
        """Cells whose run is finished."""
        return sum(1 for cell in self.cells if cell.status == "finished")

    @property
    def running(self) -> int:
        """Cells whose run runs now (side by side: more than one)."""
        return sum(1 for cell in self.cells if cell.status == "running")


def campaign_cells(store: Store, grid: Grid) -> list[CellState]:
    """Every cell of ``grid`` in order, with its claimed run (if any) and its progress."""
    claims = claimed_cells(store, grid.name)
    runs = cell_runs(store, [claim.run_id for claim in claims.values()])
    cells = []
    for position, (model, dataset) in enumerate(grid.cells()):
        claim = claims.get((model.label, dataset.label))
        run = runs.get(claim.run_id) if claim else None
        if run is None:
            cells.append(
                CellState(
                    model.label, dataset.label, position, None, "pending", 0, grid.limit, 0, 0.0
                )
            )
            continue
        cells.append(
            CellState(
                model.label,
                dataset.label,
                position,
                run.run_id,
                run.status,
                run.done,
                run.planned,
                run.generations,
                run.seconds,
            )
        )
    return cells


def campaign_status(store: Store, grid: Grid) -> CampaignStatus:
    """:func:`campaign_cells` with each cell's ETA and the campaign's."""
    cells = campaign_cells(store, grid)
    pace: dict[str, tuple[float, int]] = {}  # model → (seconds, instances) of its finished cells
    started: dict[str, tuple[float, int]] = {}  # … of its cells under way (no finished cell yet)
    for cell in cells:
        if cell.done and cell.seconds > 0:
            paces = pace if cell.status == "finished" else started
            seconds, done = paces.get(cell.model, (0.0, 0))
            paces[cell.model] = (seconds + cell.seconds, done + cell.done)
    pace = started | pace
    timed = [_with_eta(cell, pace.get(cell.model)) for cell in cells]
    open_cells = [cell for cell in timed if cell.status != "finished"]
    known = [cell.eta_seconds for cell in open_cells if cell.eta_seconds is not None]
    return CampaignStatus(
        grid.name,
        timed,
        _time_left(grid, open_cells) if known else None,
        len(known) == len(open_cells),
    )


def _time_left(grid: Grid, open_cells: list[CellState]) -> float:
    """The open cells' ETAs as the campaign runs them: a model's cells one after another,
    models side by side as the grid's servers and ``cells_at_once`` let them (one after
    another: the sum)."""
    left: dict[str, float] = {}  # model → its open cells' ETAs (the known ones), grid's order
    for cell in open_cells:
        left[cell.model] = left.get(cell.model, 0.0) + (cell.eta_seconds or 0.0)
    servers = {model.label: model.servers or grid.servers for model in grid.models}
    lanes = [
        Lane(model, frozenset(server_identity(s) for s in servers.get(model, ())), ())
        for model in left
    ]
    at_once = grid.cells_at_once or default_cells_at_once(lanes)
    return time_left(lanes, {lane: left[lane.model] for lane in lanes}, at_once)


def _with_eta(cell: CellState, model_pace: tuple[float, int] | None) -> CellState:
    if cell.status == "finished":
        return cell
    left = None if cell.planned is None else max(cell.planned - cell.done, 0)
    per_instance = None
    if cell.done and cell.seconds > 0:
        per_instance = cell.seconds / cell.done
    elif model_pace is not None and model_pace[1]:
        per_instance = model_pace[0] / model_pace[1]
    eta = None if left is None or per_instance is None else left * per_instance
    return replace(cell, eta_seconds=eta)


def duration_text(seconds: float) -> str:
    """``42s``, ``3m20s``, ``2h05m``."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
