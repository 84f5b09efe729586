"""A campaign's cells planned against the store: each cell's run config and fingerprint, its
claim (the run id it has or will get) and its run so far, and the cells whose settings
changed since their run was made (refused, never mixed).

A cell's fingerprint covers what its run computes: the config the grid gives it without the
model's runtime settings (threads, batch, GPU layers, context size, servers: a resume may
change them) and the dataset entry. A setting only one side knows (one a newer haf-tui added)
is not a change.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from haf_tui.campaign.grid import DatasetEntry, Grid, GridError, ModelEntry
from haf_tui.config import RunConfig
from haf_tui.datasets import DatasetError
from haf_tui.methods.registry import UnknownSuiteError, suites_named
from haf_tui.pipeline.runs import RUNTIME_MODEL_SETTINGS, DatasetChoice, choice_by_name
from haf_tui.store import Store
from haf_tui.store.campaigns import (
    CellRun,
    ClaimedCell,
    cell_runs,
    claimed_cells,
    known_campaigns,
)


@dataclass(frozen=True)
class PlannedCell:
    """One cell: its model and dataset, the config its run is made with, its fingerprint,
    its claim and its run (None: not claimed, not made)."""

    model: ModelEntry
    dataset: DatasetEntry
    position: int
    config: RunConfig
    settings: dict[str, Any]
    fingerprint: str
    choice: DatasetChoice
    claim: ClaimedCell | None = None
    run: CellRun | None = None

    @property
    def label(self) -> str:
        """``model × dataset``, as messages name the cell."""
        return f"{self.model.label} × {self.dataset.label}"

    @property
    def finished(self) -> bool:
        """Whether the cell's run is finished (the campaign skips it)."""
        return self.run is not None and self.run.status == "finished"

    def runtime_overrides(self) -> dict[str, Any]:
        """The model's runtime settings the grid gives now (a resumed run takes them)."""
        model = self.config.model.model_dump()
        return {key: model[key] for key in RUNTIME_MODEL_SETTINGS}


@dataclass(frozen=True)
class CampaignPlan:
    """Every cell of a grid, and a line for each cell refused (its settings changed)."""

    grid: Grid
    cells: list[PlannedCell]
    refused: list[str]


def cell_config(base: RunConfig, model: ModelEntry, servers: Sequence[str]) -> RunConfig:
    """The run config of a cell of ``model``: the grid's config with the model's file, chat
    format and ``servers`` (none: llama.cpp in this process)."""
    updates: dict[str, Any] = {"path": model.path, "chat_format": model.chat_format}
    if servers:
        updates["servers"] = tuple(servers)
    return base.model_copy(update={"model": base.model.model_copy(update=updates)})


def cell_settings(config: RunConfig, dataset: DatasetEntry) -> dict[str, Any]:
    """What a cell's fingerprint covers, flattened to dotted keys."""
    data = config.model_dump(mode="json")
    data.pop("dataset_id", None)
    for key in RUNTIME_MODEL_SETTINGS:
        data["model"].pop(key, None)
    columns = {k: list(v) if isinstance(v, tuple) else v for k, v in dataset.columns().items()}
    data["dataset"] = {"name": dataset.name, "file": dataset.file, **columns}
    return _flatten(data)


def fingerprint(settings: dict[str, Any]) -> str:
    """A short hash of a cell's settings."""
    text = json.dumps(settings, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def changed_settings(stored: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """The settings both know whose values differ."""
    return sorted(key for key in stored.keys() & now.keys() if stored[key] != now[key])


def plan_campaign(
    store: Store, grid: Grid, base: RunConfig, extra_servers: Sequence[str] = ()
) -> CampaignPlan:
    """Every cell of ``grid`` with its config (``base``: the grid's suites, limit, seed and
    settings as ``haf run`` reads them; ``extra_servers``: servers added for every model),
    its claim and run; a refusal line for each cell whose run was made with other settings."""
    try:
        suites_named(base.suites)
    except UnknownSuiteError as exc:
        raise GridError(f"{grid.path}: {exc}") from exc
    claims = claimed_cells(store, grid.name)
    runs = cell_runs(store, [claim.run_id for claim in claims.values()])
    choices = {d.label: _choice(store, grid, d) for d in grid.datasets}
    cells: list[PlannedCell] = []
    refused: list[str] = []
    other = _other_grid_file(store, grid)
    if other is not None:
        refused.append(
            f"campaign {grid.name} in this database is the grid {other}: give {grid.path} a "
            f'name of its own (name = "…"), or run that file'
        )
    for position, (model, dataset) in enumerate(grid.cells()):
        config = cell_config(base, model, (*(model.servers or grid.servers), *extra_servers))
        settings = cell_settings(config, dataset)
        claim = claims.get((model.label, dataset.label))
        run = runs.get(claim.run_id) if claim else None
        cell = PlannedCell(
            model,
            dataset,
            position,
            config,
            settings,
            fingerprint(settings),
            choices[dataset.label],
            claim,
            run,
        )
        cells.append(cell)
        if claim is not None and run is not None:
            changed = changed_settings(claim.settings, settings)
            if changed:
                refused.append(_refusal(cell, claim, changed))
    return CampaignPlan(grid, cells, refused)


def _other_grid_file(store: Store, grid: Grid) -> str | None:
    """Another grid file still there that the stored campaign of this name was run from (two
    ``grid.toml`` in two folders both named "grid"); None: this one, or one moved away."""
    for stored in known_campaigns(store):
        if stored.name == grid.name and Path(stored.grid_path) != grid.path:
            return stored.grid_path if Path(stored.grid_path).is_file() else None
    return None


def _choice(store: Store, grid: Grid, dataset: DatasetEntry) -> DatasetChoice:
    try:
        choice = choice_by_name(dataset.name, dataset.file, store)
    except DatasetError as exc:
        raise GridError(f"{grid.path}: dataset {dataset.label!r}: {exc}") from exc
    columns = dataset.columns()
    if columns and choice.kind != "file":
        raise GridError(
            f"{grid.path}: dataset {dataset.label!r}: {', '.join(columns)} go with a dataset "
            f"file, not a {choice.kind} dataset"
        )
    return replace(choice, **columns)


def _refusal(cell: PlannedCell, claim: ClaimedCell, changed: list[str]) -> str:
    shown = ", ".join(
        f"{key} {_value(claim.settings[key])} → {_value(cell.settings[key])}" for key in changed[:3]
    )
    more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
    return (
        f"cell {cell.label}: its settings changed since run {claim.run_id} was made "
        f"({shown}{more}); put them back, or name a new campaign"
    )


def _value(value: Any) -> str:
    return json.dumps(value) if not isinstance(value, str) else value


def _flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            flat |= _flatten(value, name + ".")
        else:
            flat[name] = value
    return flat
