"""Running a campaign: every unfinished cell, one after another, each model loaded once for
all its cells (the similarity model once for the whole campaign).

Exactly one run per cell, whenever the campaign is killed: a cell is claimed (its row, with
the run id its run will get, committed) before its run is made with exactly that id; run
again, a claimed cell whose run exists resumes it (the runner skips every stored generation),
and one whose run is missing (killed between the claim and the run) makes it with the
claimed id.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from itertools import groupby

from haf_tui.campaign.cells import CampaignPlan, PlannedCell
from haf_tui.datasets import Dataset
from haf_tui.pipeline.events import ProgressListener, ignore_progress
from haf_tui.pipeline.models import LoadedModels, load_models
from haf_tui.pipeline.runner import RunSummary
from haf_tui.pipeline.runs import (
    RunRequest,
    StartedRun,
    execute_run,
    new_run_id,
    resolve_dataset,
    start_or_resume,
)
from haf_tui.similarity import SimilarityModel
from haf_tui.store import Store
from haf_tui.store.campaigns import (
    ClaimedCell,
    claim_cell,
    reclaim_cell,
    run_id_taken,
    save_campaign,
)
from haf_tui.vocabulary import HafError, first_line


@contextmanager
def _no_bars(cell: PlannedCell, started: StartedRun) -> Iterator[ProgressListener]:
    yield ignore_progress


@dataclass
class CampaignHooks:
    """What a face hears of a campaign: a cell skipped (finished already), a model loading,
    a cell's progress (a context around its run giving the listener), a cell done or failed."""

    skipped: Callable[[PlannedCell], None] = lambda cell: None
    loading: Callable[[PlannedCell], None] = lambda cell: None
    progress: Callable[[PlannedCell, StartedRun], AbstractContextManager[ProgressListener]] = (
        _no_bars
    )
    done: Callable[[PlannedCell, RunSummary], None] = lambda cell, summary: None
    failed: Callable[[PlannedCell, str], None] = lambda cell, message: None


@dataclass
class CampaignSummary:
    """How a campaign run ended: each cell's run id and status (``skipped``: finished before;
    ``failed``; ``not started``: stopped before it)."""

    cells: dict[str, tuple[str | None, str]] = field(default_factory=dict)
    stopped: bool = False

    @property
    def finished(self) -> bool:
        """Whether every cell's run is finished now."""
        return all(status in ("finished", "skipped") for _, status in self.cells.values())


def run_campaign(
    store: Store,
    plan: CampaignPlan,
    *,
    hooks: CampaignHooks | None = None,
    stop_event: threading.Event | None = None,
) -> CampaignSummary:
    """Run every unfinished cell of ``plan`` (refused cells: nothing is run), model by model;
    ``stop_event`` stops after the generations in flight (the cell resumes next time)."""
    if plan.refused:
        raise HafError(plan.refused[0])
    hooks = hooks or CampaignHooks()
    stop = stop_event or threading.Event()
    save_campaign(store, plan.grid.name, str(plan.grid.path))
    summary = CampaignSummary({cell.label: (None, "not started") for cell in plan.cells})
    datasets: dict[str, Dataset] = {}
    similarity: SimilarityModel | None = None
    for _, group in groupby(plan.cells, key=lambda cell: cell.model.label):
        cells = list(group)
        for cell in cells:
            if cell.finished:
                summary.cells[cell.label] = (cell.claim.run_id if cell.claim else None, "skipped")
                hooks.skipped(cell)
        todo = [cell for cell in cells if not cell.finished]
        if not todo or stop.is_set():
            continue
        hooks.loading(todo[0])
        models = load_models(todo[0].config, similarity)
        similarity = models.similarity
        try:
            for cell in todo:
                if stop.is_set():
                    summary.stopped = True
                    break
                _run_cell(store, plan, cell, models, datasets, hooks, stop, summary)
        finally:
            models.backend.close()
    summary.stopped = summary.stopped or stop.is_set()
    return summary


def _run_cell(
    store: Store,
    plan: CampaignPlan,
    cell: PlannedCell,
    models: LoadedModels,
    datasets: dict[str, Dataset],
    hooks: CampaignHooks,
    stop: threading.Event,
    summary: CampaignSummary,
) -> None:
    try:
        request = _request(store, plan, cell, models, datasets)
        started = start_or_resume(store, request)
    except (HafError, ValueError) as exc:
        summary.cells[cell.label] = (request_id(cell), "failed")
        hooks.failed(cell, first_line(exc))
        return
    run_id = started.run_id
    summary.cells[cell.label] = (run_id, "running")
    try:
        with hooks.progress(cell, started) as listener:
            result = execute_run(
                store, run_id, started.config, models, listener=listener, stop_event=stop
            )
    except (HafError, ValueError) as exc:  # (the runner marked the run failed)
        if store.get_run(run_id).status == "created":  # (it failed before the runner began)
            store.update_run(run_id, status="failed")
        summary.cells[cell.label] = (run_id, "failed")
        hooks.failed(cell, first_line(exc))
        return
    except BaseException:  # (Ctrl-C, or a face's hook failing): never left "created"
        if store.get_run(run_id).status == "created":
            store.update_run(run_id, status="interrupted")
        raise
    summary.cells[cell.label] = (run_id, result.status)
    hooks.done(cell, result)


def request_id(cell: PlannedCell) -> str | None:
    """The run id a cell has claimed (None: not claimed)."""
    return cell.claim.run_id if cell.claim else None


def _request(
    store: Store,
    plan: CampaignPlan,
    cell: PlannedCell,
    models: LoadedModels,
    datasets: dict[str, Dataset],
) -> RunRequest:
    """Resume the cell's run, or claim the cell and make its run with the claimed id."""
    if cell.claim is not None and cell.run is not None:
        return RunRequest(
            resume_run_id=cell.claim.run_id,
            overrides=cell.runtime_overrides(),
            preloaded=models,
        )
    claim = ClaimedCell(
        cell.model.label,
        cell.dataset.label,
        cell.claim.run_id if cell.claim else _fresh_run_id(store),
        cell.fingerprint,
        cell.settings,
        cell.position,
    )
    if cell.claim is None:
        claim_cell(store, plan.grid.name, claim)
    else:  # claimed, killed before its run was made: the same id, today's settings
        reclaim_cell(store, plan.grid.name, claim)
    if cell.dataset.label not in datasets:
        datasets[cell.dataset.label] = resolve_dataset(cell.choice, store, cell.config.suites)
    return RunRequest(
        config=cell.config,
        dataset=datasets[cell.dataset.label],
        preloaded=models,
        run_id=claim.run_id,
    )


def _fresh_run_id(store: Store) -> str:
    run_id = new_run_id()
    while run_id_taken(store, run_id):
        run_id = new_run_id()
    return run_id
