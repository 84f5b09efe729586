"""Which of a campaign's cells may run at once (``haf campaign run --cells-at-once N``).

A campaign's unfinished cells form one *lane* per model, in the grid's order: a lane runs its
model's cells one after another with the model loaded once. Lanes run side by side when each
has servers of its own:

- at most N lanes at once (default: one per model that has servers, plus one for the models
  run in this process, :func:`default_cells_at_once`);
- two models run in this process (llama.cpp: no servers) never at once, so one model's weights
  and this machine's cores are never shared between two;
- two models that share a server never at once (a server serves one model, and its slots are
  the cell's).

A lane that may not start yet waits for one that runs to end; lanes start in the grid's
order. Pure: the runner asks :func:`startable` whenever a lane ends.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import groupby

from haf_tui.campaign.cells import CampaignPlan, PlannedCell
from haf_tui.inference.server import ServerError, parse_endpoint


@dataclass(frozen=True, eq=False)
class Lane:
    """One model's unfinished cells, run one after another; ``servers``: the base URLs they
    generate on (empty: llama.cpp in this process)."""

    model: str
    servers: frozenset[str]
    cells: tuple[PlannedCell, ...]

    @property
    def in_process(self) -> bool:
        """Whether its model runs in this process (no servers)."""
        return not self.servers


def server_identity(spec: str) -> str:
    """The server a ``URL[#N]`` names (its base URL: ``#N``, ``/v1`` and trailing slashes
    do not make another server); a spec that does not parse stands for itself (the backend
    refuses it in one line when its cell starts)."""
    try:
        return parse_endpoint(spec).url
    except ServerError:
        return spec.strip()


def lanes_of(plan: CampaignPlan) -> list[Lane]:
    """The lanes of the plan's unfinished cells, one per model, in the grid's order."""
    lanes = []
    for model, group in groupby(plan.cells, key=lambda cell: cell.model.label):
        todo = tuple(cell for cell in group if not cell.finished)
        if todo:
            servers = frozenset(server_identity(s) for s in todo[0].config.model.servers)
            lanes.append(Lane(model, servers, todo))
    return lanes


def default_cells_at_once(lanes: Sequence[Lane]) -> int:
    """One per lane whose model has servers, one for the models run in this process (at
    least one)."""
    served = sum(1 for lane in lanes if not lane.in_process)
    return max(1, served + (1 if any(lane.in_process for lane in lanes) else 0))


def may_run_beside(lane: Lane, other: Lane) -> bool:
    """Whether two lanes may run at once: not both in this process, no server shared."""
    if lane.in_process and other.in_process:
        return False
    return not (lane.servers & other.servers)


def startable(waiting: Sequence[Lane], running: Sequence[Lane], cells_at_once: int) -> list[Lane]:
    """The waiting lanes to start now, in the grid's order: each may run beside every lane
    running (and every one started before it here), up to ``cells_at_once`` in all."""
    started: list[Lane] = []
    for lane in waiting:
        if len(running) + len(started) >= cells_at_once:
            break
        if all(may_run_beside(lane, other) for other in (*running, *started)):
            started.append(lane)
    return started


def side_by_side(lanes: Sequence[Lane], cells_at_once: int) -> bool:
    """Whether any two of the lanes may ever run at once (else they run one after another,
    in the campaign's own thread)."""
    if cells_at_once < 2:
        return False
    return any(
        may_run_beside(lane, other) for i, lane in enumerate(lanes) for other in lanes[i + 1 :]
    )


def time_left(lanes: Sequence[Lane], seconds: Mapping[Lane, float], cells_at_once: int) -> float:
    """How long ``lanes`` take (each ``seconds[lane]``) started as the runner starts them: in
    the grid's order, each as soon as :func:`startable` lets it. One after another, the sum."""
    waiting = list(lanes)
    ends: dict[Lane, float] = {}  # (the lanes running, by when each ends)
    now = 0.0
    while waiting or ends:
        for lane in startable(waiting, list(ends), cells_at_once):
            waiting.remove(lane)
            ends[lane] = now + seconds[lane]
        first = min(ends, key=lambda lane: ends[lane])
        now = ends.pop(first)
    return now
