"""``haf run`` closes the model it loaded (llama.cpp's model and contexts freed at once) when
the run finishes, fails or is stopped with Ctrl-C, as the workbench and campaigns do; before,
it was left to be freed when its frames went (after the report's hints, or at the
interpreter's exit, after llama-cpp-python's bindings)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import haf_tui.pipeline.runs as runs
from haf_tui.cli import main
from haf_tui.pipeline.models import LoadedModels
from haf_tui.store import StoreWriteError, open_store
from tests.test_demo_scripted import ScriptedDemoModel
from tests.test_scheduler import FlatSimilarity


class ClosedDemoModel(ScriptedDemoModel):
    """The scripted demo model, counting its closings (and whether it ran after one)."""

    def __init__(self) -> None:
        super().__init__()
        self.closed = 0

    def close(self) -> None:
        self.closed += 1


@pytest.fixture
def loaded(monkeypatch: pytest.MonkeyPatch) -> list[ClosedDemoModel]:
    """The models ``haf run`` loads (scripted), in the order it loaded them."""
    found: list[ClosedDemoModel] = []

    def scripted_models(config: Any, similarity: Any = None) -> LoadedModels:
        found.append(ClosedDemoModel())
        return LoadedModels(found[-1], FlatSimilarity())

    monkeypatch.setattr(runs, "load_models", scripted_models)
    return found


def _failing_run(error: BaseException, seen: list[int]) -> Any:
    """An ``execute_run`` that raises ``error`` (noting how often its model was closed)."""

    def execute_run(store: Any, run_id: str, config: Any, models: Any, **_: Any) -> Any:
        seen.append(models.backend.closed)
        raise error

    return execute_run


def test_a_finished_run_closes_its_model(tmp_path: Path, loaded: list[ClosedDemoModel]) -> None:
    db = tmp_path / "haf.duckdb"
    assert main(["--db", str(db), "run", "--demo", "--limit", "2"]) == 0
    (model,) = loaded
    assert model.closed == 1


@pytest.mark.parametrize(
    ("error", "status"),
    [(KeyboardInterrupt(), 130), (StoreWriteError("the disk is full"), 2)],
    ids=["ctrl-c", "failed"],
)
def test_a_stopped_or_failed_run_closes_its_model(
    tmp_path: Path,
    loaded: list[ClosedDemoModel],
    monkeypatch: pytest.MonkeyPatch,
    error: BaseException,
    status: int,
) -> None:
    seen: list[int] = []
    execute_run = runs.execute_run
    monkeypatch.setattr(runs, "execute_run", _failing_run(error, seen))
    db = tmp_path / "haf.duckdb"
    assert main(["--db", str(db), "run", "--demo", "--limit", "2"]) == status
    (model,) = loaded
    assert seen == [0]  # (open while it ran)
    assert model.closed == 1
    monkeypatch.setattr(runs, "execute_run", execute_run)
    assert main(["--db", str(db), "run", "--resume", _only_run(db)]) == 0  # (resumed: closed)
    assert [m.closed for m in loaded] == [1, 1]


def _only_run(db: Path) -> str:
    with open_store(db, read_only=True) as store:
        (run,) = store.list_runs()
        return str(run["run_id"])


@pytest.mark.real_model
def test_ctrl_c_in_a_real_run_frees_the_gguf(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The embedded GGUF through llama.cpp, and the bundled similarity model: llama.cpp's
    model is freed (its handle None) by the time ``haf run`` has returned from a Ctrl-C."""
    held: list[Any] = []

    def interrupted(store: Any, run_id: str, config: Any, models: Any, **_: Any) -> Any:
        held.append(models.backend)
        assert models.backend.llm._model.model is not None  # (loaded, open)
        raise KeyboardInterrupt

    monkeypatch.setattr(runs, "execute_run", interrupted)
    db = tmp_path / "haf.duckdb"
    assert main(["--db", str(db), "run", "--demo", "--n-ctx", "1024", "--limit", "1"]) == 130
    (backend,) = held
    assert backend.llm._model.model is None
