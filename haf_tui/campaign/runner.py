"""Running a campaign: every unfinished cell, each model loaded once for all its cells (the
similarity model once for the whole campaign); the cells of different models side by side
when each has servers of its own (:mod:`~haf_tui.campaign.lanes`: ``cells_at_once``), else
one after another.

Exactly one run per cell, whenever the campaign is killed: a cell is claimed (its row, with
the run id its run will get, committed) before its run is made with exactly that id; run
again, a claimed cell whose run exists resumes it (the runner skips every stored generation),
and one whose run is missing (killed between the claim and the run) makes it with the
claimed id. Cells side by side each write through a store of their own on the campaign's
connection, one write at a time, and make their runs one at a time
(:mod:`~haf_tui.campaign.shared`).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field

from haf_tui.campaign.cells import CampaignPlan, PlannedCell
from haf_tui.campaign.lanes import (
    Lane,
    default_cells_at_once,
    lanes_of,
    side_by_side,
    startable,
)
from haf_tui.campaign.shared import CampaignShared, LaneStore, LockedSimilarity
from haf_tui.datasets import Dataset
from haf_tui.pipeline.events import ProgressListener, ignore_progress
from haf_tui.pipeline.models import LoadedModels, load_models
from haf_tui.pipeline.runner import RunControl, RunSummary
from haf_tui.pipeline.runs import (
    RunRequest,
    StartedRun,
    execute_run,
    fresh_run_id,
    resolve_dataset,
    start_or_resume,
)
from haf_tui.store import Store
from haf_tui.store.campaigns import (
    ClaimedCell,
    claim_cell,
    reclaim_cell,
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
    cells_at_once: int | None = None,
) -> CampaignSummary:
    """Run every unfinished cell of ``plan`` (refused cells: nothing is run), each model's
    cells one after another, up to ``cells_at_once`` models side by side (None: one per model
    with servers, one for the models in this process; :mod:`~haf_tui.campaign.lanes`);
    ``stop_event`` stops after the generations in flight (the cells resume next time)."""
    if plan.refused:
        raise HafError(plan.refused[0])
    hooks = hooks or CampaignHooks()
    control = RunControl(stop=stop_event or threading.Event())
    save_campaign(store, plan.grid.name, str(plan.grid.path))
    summary = CampaignSummary({cell.label: (None, "not started") for cell in plan.cells})
    for cell in plan.cells:
        if cell.finished:
            summary.cells[cell.label] = (request_id(cell), "skipped")
            hooks.skipped(cell)
    lanes = lanes_of(plan)
    at_once = cells_at_once or default_cells_at_once(lanes)
    shared = CampaignShared()
    if not side_by_side(lanes, at_once):
        for lane in lanes:
            if control.stop.is_set():
                break
            _run_lane(store, plan, lane, shared, hooks, control, summary)
    else:
        _side_by_side(store, plan, lanes, at_once, (shared, hooks, control, summary))
    summary.stopped = summary.stopped or control.stop.is_set()
    return summary


_LaneParts = tuple[CampaignShared, CampaignHooks, RunControl, CampaignSummary]


def _side_by_side(
    store: Store, plan: CampaignPlan, lanes: list[Lane], at_once: int, parts: _LaneParts
) -> None:
    """Run the lanes in threads, each as soon as :func:`startable` lets it; a lane that
    raises stops the others after their generations in flight, then raises here; a second
    Ctrl-C (KeyboardInterrupt here) abandons the generations in flight of every lane."""
    control = parts[2]
    waiting = list(lanes)
    running: dict[Lane, threading.Thread] = {}
    ended: queue.Queue[tuple[Lane, BaseException | None]] = queue.Queue()
    failure: BaseException | None = None
    try:
        while waiting or running:
            if failure is None and not control.stop.is_set():
                for lane in startable(waiting, list(running), at_once):
                    waiting.remove(lane)
                    running[lane] = threading.Thread(
                        target=_lane_thread,
                        args=(store, plan, lane, parts, ended),
                        name=f"campaign lane {lane.model}",
                        daemon=True,
                    )
                    running[lane].start()
            if not running:
                break
            try:
                lane, error = ended.get(timeout=0.5)
            except queue.Empty:
                continue
            running.pop(lane).join()
            if error is not None and failure is None:
                failure = error
                control.stop.set()
    except BaseException:
        control.cancel()
        for thread in running.values():
            thread.join()
        raise
    if failure is not None:
        raise failure


def _lane_thread(
    store: Store,
    plan: CampaignPlan,
    lane: Lane,
    parts: _LaneParts,
    ended: queue.Queue[tuple[Lane, BaseException | None]],
) -> None:
    """A lane in a thread of its own, on a store of its own; says how it ended."""
    shared, hooks, control, summary = parts
    error: BaseException | None = None
    lane_store = LaneStore(store, shared.writes)
    try:
        _run_lane(lane_store, plan, lane, shared, hooks, control, summary)
    except BaseException as exc:  # (raised again by the campaign's thread)
        error = exc
    finally:
        lane_store.close()
        ended.put((lane, error))


def _run_lane(
    store: Store,
    plan: CampaignPlan,
    lane: Lane,
    shared: CampaignShared,
    hooks: CampaignHooks,
    control: RunControl,
    summary: CampaignSummary,
) -> None:
    """A model's cells one after another, the model loaded once."""
    hooks.loading(lane.cells[0])
    models = _load(lane.cells[0], shared)
    try:
        for cell in lane.cells:
            if control.stop.is_set():
                summary.stopped = True
                break
            _run_cell(store, plan, cell, models, shared, hooks, control, summary)
    finally:
        models.backend.close()


def _load(cell: PlannedCell, shared: CampaignShared) -> LoadedModels:
    """The cell's model, with the campaign's similarity model (the first model loaded loads
    it, while the others wait for it)."""
    if shared.similarity is None:
        with shared.setup:
            if shared.similarity is None:
                models = load_models(cell.config, None)
                shared.similarity = LockedSimilarity(models.similarity)
                return LoadedModels(models.backend, shared.similarity)
    return load_models(cell.config, shared.similarity)


def _run_cell(
    store: Store,
    plan: CampaignPlan,
    cell: PlannedCell,
    models: LoadedModels,
    shared: CampaignShared,
    hooks: CampaignHooks,
    control: RunControl,
    summary: CampaignSummary,
) -> None:
    try:
        with shared.setup:  # (one cell's run made at a time: its claim, its id, its dataset)
            request = _request(store, plan, cell, models, shared.datasets)
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
                store, run_id, started.config, models, listener=listener, control=control
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
        cell.claim.run_id if cell.claim else fresh_run_id(store),
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
