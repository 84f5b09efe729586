"""What each lane of a campaign run does around its cells (``campaign/runner.py``), with the
scripted models of tests/test_campaign_side_by_side.py on a real DuckDB file: the similarity
model is loaded once however many lanes start together, every lane's model is closed, and a
cell whose run fails (or is interrupted) before its runner began is never left ``created``."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from haf_tui.campaign.runner import run_campaign
from haf_tui.config import RunConfig
from haf_tui.pipeline.models import LoadedModels
from haf_tui.store import open_store
from haf_tui.vocabulary import HafError
from tests.test_campaign_side_by_side import _models_by_config, _plan


def test_the_similarity_model_is_loaded_once_for_lanes_starting_together(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    load = _models_by_config([])
    asked: list[object] = []
    lock = threading.Lock()

    def slow_first(config: RunConfig, similarity: object = None) -> LoadedModels:
        with lock:
            asked.append(similarity)
        if similarity is None:
            time.sleep(0.3)  # (the lanes started beside it wait for it meanwhile)
        return load(config, similarity)  # type: ignore[no-any-return]

    monkeypatch.setattr("haf_tui.campaign.runner.load_models", slow_first)
    with open_store(tmp_path / "plan.duckdb") as store:
        assert run_campaign(store, _plan(tmp_path)).finished
    assert len(asked) == 4 and asked.count(None) == 1  # (4 models; g loaded by the first)
    assert len({id(s) for s in asked if s is not None}) == 1  # (the others share it)


def test_every_lane_closes_its_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    load = _models_by_config([])
    closed: list[str] = []

    def recorded(config: RunConfig, similarity: object = None) -> LoadedModels:
        models: LoadedModels = load(config, similarity)
        backend: Any = models.backend
        backend.close = lambda: closed.append(backend.model)
        return models

    monkeypatch.setattr("haf_tui.campaign.runner.load_models", recorded)
    with open_store(tmp_path / "plan.duckdb") as store:
        assert run_campaign(store, _plan(tmp_path)).finished
    assert sorted(closed) == ["a", "b", "x", "y"]


@pytest.mark.parametrize(
    ("raised", "status"),
    [(HafError("the runner refused it"), "failed"), (KeyboardInterrupt(), "interrupted")],
)
def test_a_run_that_ends_before_its_runner_began_is_never_left_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, raised: BaseException, status: str
) -> None:
    monkeypatch.setattr("haf_tui.campaign.runner.load_models", _models_by_config([]))

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise raised

    monkeypatch.setattr("haf_tui.campaign.runner.execute_run", refused)
    with open_store(tmp_path / "plan.duckdb") as store:
        if isinstance(raised, HafError):
            summary = run_campaign(store, _plan(tmp_path), cells_at_once=1)
            assert {state for _, state in summary.cells.values()} == {"failed"}
        else:
            with pytest.raises(KeyboardInterrupt):
                run_campaign(store, _plan(tmp_path), cells_at_once=1)
        _, runs = store.query("SELECT DISTINCT status FROM runs")
    assert runs == [(status,)]
