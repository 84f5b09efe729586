"""A grid's further similarity models (``campaign/rescores.py``) and the report's
"sensitivity to g" table (``campaign/report/sensitivity.py``), on the stores of
tests/test_rescore.py: only finished cells are re-scored, a re-score stopped before is resumed
(never counted done), a stop asked before a cell re-scores nothing, and the table shows
finished re-scores only, and only the metrics the cell's own run defines."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from haf_tui.campaign.grid import Grid, load_grid
from haf_tui.campaign.report import build_campaign_report
from haf_tui.campaign.rescores import RescoreHooks, rescore_campaign
from haf_tui.store import Store
from haf_tui.store.campaigns import ClaimedCell, claim_cell, save_campaign
from haf_tui.store.derived_runs import children_of
from tests.test_rescore import models, stopped_rescore, stored

__all__ = ["models", "stored"]  # (the fixtures)


def _grid(store: Store, models: tuple[Path, Path], tmp_path: Path) -> Grid:
    """A grid of two cells (the parent's, finished, and the scratch run's) and two gs."""
    first, second = (str(m) for m in models)
    path = tmp_path / "grid.toml"
    path.write_text(
        'name = "g"\nmodels = ["embedded"]\n'
        'datasets = ["sample", { label = "again", name = "sample" }]\n'
        f'similarity = ["{first}", {{ model = "{second}", label = "tiny-2" }}]\n'
    )
    save_campaign(store, "g", str(path))
    claim_cell(store, "g", ClaimedCell("embedded", "sample", "parent", "fp", {}, 0))
    claim_cell(store, "g", ClaimedCell("embedded", "again", "scratch", "fp2", {}, 1))
    return load_grid(path)


def _stopped_rescore(store: Store, models: tuple[Path, Path]) -> str:
    """A re-score of the parent with the second g, stopped after its first instance."""
    summary = stopped_rescore(store, models)
    assert summary.status == "stopped"
    return summary.run_id


def _sensitivity(store: Store) -> list[dict[str, Any]]:
    report = build_campaign_report(store, "g", [("embedded", "sample", "parent")])
    tables = [t for t in report.run_tables if t.slug == "sensitivity-to-g"]
    return [dict(zip(t.columns, row, strict=True)) for t in tables for row in t.rows]


def test_only_finished_cells_are_rescored(
    stored: Store, models: tuple[Path, Path], tmp_path: Path
) -> None:
    grid = _grid(stored, models, tmp_path)
    stored.update_run("scratch", status="stopped")
    done = rescore_campaign(stored, grid)
    assert [(cell.run_id, summary.status) for cell, _, summary in done] == [("parent", "finished")]
    assert children_of(stored, "scratch") == []


def test_a_stopped_rescore_is_resumed_and_shown_only_once_finished(
    stored: Store, models: tuple[Path, Path], tmp_path: Path
) -> None:
    grid = _grid(stored, models, tmp_path)
    stored.update_run("scratch", status="stopped")
    stopped = _stopped_rescore(stored, models)
    assert _sensitivity(stored) == []  # (a stopped re-score's values are not all there)
    ((_, _, summary),) = rescore_campaign(stored, grid)
    assert summary.resumed and summary.run_id == stopped and summary.status == "finished"
    assert {row["run"] for row in _sensitivity(stored)} == {"parent", stopped}


def test_a_stop_asked_before_a_cell_rescores_nothing(
    stored: Store, models: tuple[Path, Path], tmp_path: Path
) -> None:
    grid = _grid(stored, models, tmp_path)
    stop = threading.Event()
    stop.set()
    assert rescore_campaign(stored, grid, stop_event=stop) == []
    assert children_of(stored, "parent") == children_of(stored, "scratch") == []


class SetOnTheSecondLook(threading.Event):
    """A stop asked between the campaign's look and the re-score's (the Stop key pressed as a
    cell's re-score starts)."""

    def __init__(self) -> None:
        super().__init__()
        self.looks = 0

    def is_set(self) -> bool:
        self.looks += 1
        return self.looks > 1


def test_a_stop_asked_as_a_cells_rescore_starts_reports_no_cell_done(
    stored: Store, models: tuple[Path, Path], tmp_path: Path
) -> None:
    """The re-score makes no run: no cell is said re-scored (as a run without an id)."""
    grid = _grid(stored, models, tmp_path)
    said: list[str] = []
    hooks = RescoreHooks(done=lambda cell, entry, summary: said.append(summary.run_id))
    assert rescore_campaign(stored, grid, hooks=hooks, stop_event=SetOnTheSecondLook()) == []
    assert said == [] and children_of(stored, "parent") == children_of(stored, "scratch") == []


def test_a_metric_the_cells_run_never_defines_has_no_rows(
    stored: Store, models: tuple[Path, Path], tmp_path: Path
) -> None:
    grid = _grid(stored, models, tmp_path)
    stored.update_run("scratch", status="stopped")
    rescore_campaign(stored, grid)
    assert "SoS" in {row["metric"] for row in _sensitivity(stored)}
    with stored.transaction() as con:  # (the parent's SoS undefined on every instance)
        con.execute("DELETE FROM instance_metrics WHERE run_id = 'parent' AND metric = 'sos'")
    metrics = {row["metric"] for row in _sensitivity(stored)}
    assert metrics and "SoS" not in metrics


def test_every_g_of_a_grid_is_checked_before_its_first_cell(
    models: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bad further g (a missing folder, a bi-encoder named a cross-encoder, a g that scores
    NaN) is one line naming the grid's entry, before any cell runs: the campaign makes no run
    (the cells would be the embedded model's)."""
    from haf_tui.cli import main
    from haf_tui.store import open_store
    from tests.support.tiny_similarity import nan_bi_encoder

    first, second = (str(m) for m in models)
    database = tmp_path / "c.duckdb"
    nan = nan_bi_encoder(tmp_path)
    capsys.readouterr()
    for entry, extra, says in (  # (extra: more of the grid)
        (f'{{ model = "{tmp_path / "gone"}", label = "gone" }}', "", "similarity 'gone': "),
        (f'{{ model = "{second}", kind = "cross-encoder", label = "bi" }}', "",
         "is not a cross-encoder"),
        (f'"{nan}"', "", "scored the pair"),
    ):  # fmt: skip
        grid_file = tmp_path / "grid.toml"
        grid_file.write_text(
            'models = ["embedded"]\ndatasets = ["sample"]\nsuites = ["haf"]\nlimit = 1\n'
            f'similarity = ["{first}", {entry}]\n{extra}'
        )
        assert main(["campaign", "run", str(grid_file), "--db", str(database)]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("error:") and says in err, err
        assert len(err.splitlines()) == 1 and str(grid_file.resolve()) in err
    with open_store(database) as store:
        assert store.query("SELECT count(*) FROM runs")[1] == [(0,)]
