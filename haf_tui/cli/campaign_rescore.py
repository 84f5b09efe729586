"""``haf campaign run``'s last step when the grid lists several similarity models: each
finished cell re-scored with every g after the first (:mod:`haf_tui.campaign.rescores`), one
line per cell; Ctrl-C keeps what is done."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from haf_tui.campaign.grid import Grid
from haf_tui.campaign.rescores import RescoreHooks, rescore_campaign
from haf_tui.campaign.similarities import SimilarityEntry
from haf_tui.campaign.status import CellState
from haf_tui.pipeline.rescore import RescoreSummary
from haf_tui.store import Store


def rescore_grid(grid: Grid, grid_file: str, store: Store, device: str, console: Console) -> int:
    """Re-score the grid's finished cells with its other g's; the exit status."""
    if len(grid.similarity) < 2:
        return 0

    def loading(entry: SimilarityEntry) -> None:
        console.print(Text(f"loading similarity model {entry.label} ({entry.kind}) ..."))

    def done(cell: CellState, entry: SimilarityEntry, summary: RescoreSummary) -> None:
        console.print(
            Text(
                f"{cell.model} × {cell.dataset}: re-scored with {entry.label} as run "
                f"{summary.run_id} ({summary.instances_done}/{summary.instances_total} "
                f"instances, {summary.seconds:.1f} s)"
            )
        )

    try:
        rescore_campaign(store, grid, device=device, hooks=RescoreHooks(loading, done))
    except KeyboardInterrupt:
        Console(stderr=True).print(
            Text(f"interrupted: haf campaign run {grid_file} goes on with the re-scores")
        )
        return 130
    return 0
