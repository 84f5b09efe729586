"""``haf campaign``: the paper's grid (models × datasets × suites) as one resumable whole.

- :mod:`~haf_tui.campaign.grid` — the grid file (``grid.toml``) and :class:`GridError`;
- :mod:`~haf_tui.campaign.cells` — its cells planned against the store (configs,
  fingerprints, claims, refusals);
- :mod:`~haf_tui.campaign.runner` — running them, each model loaded once;
- :mod:`~haf_tui.campaign.status` — where a campaign stands, as data;
- :mod:`~haf_tui.campaign.report` — its paper report (tables, figures; Markdown, LaTeX, CSV,
  HTML).

It sits between the faces and the pipeline: the command line and the workbench use it, it
uses the pipeline (``start_or_resume``, ``execute_run``) and the store.
"""

from haf_tui.campaign.grid import DatasetEntry, Grid, GridError, ModelEntry, load_grid
from haf_tui.campaign.status import (
    CampaignStatus,
    CellState,
    campaign_cells,
    campaign_status,
    known_campaigns,
)

__all__ = [
    "CampaignStatus",
    "CellState",
    "DatasetEntry",
    "Grid",
    "GridError",
    "ModelEntry",
    "campaign_cells",
    "campaign_status",
    "known_campaigns",
    "load_grid",
]
