"""Every path that loads a model closes it when what follows the load fails: the model is
freed then, not when garbage-collected (a llama.cpp model left to the interpreter's exit is
freed after llama-cpp-python's bindings: "Exception ignored in: Llama.__del__ ...
TypeError"), and a long-lived workbench does not hold two models at once."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from haf_tui.config import RunConfig
from haf_tui.pipeline import models as models_module
from haf_tui.pipeline import runs
from haf_tui.pipeline.models import LoadedModels
from haf_tui.pipeline.runs import RunRequest, start_or_resume
from haf_tui.store import StoreError
from haf_tui.store.errors import StoppedWaitingError
from haf_tui.vocabulary import HafError


class Counted:
    """A backend that counts its closes."""

    def __init__(self) -> None:
        self.closes = 0

    def close(self) -> None:
        self.closes += 1


def _loaded(backend: Counted) -> LoadedModels:
    return LoadedModels(backend, similarity=None)  # type: ignore[arg-type]


def test_a_similarity_model_that_fails_to_load_closes_the_gguf_loaded_before_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    backend = Counted()

    def refused(config: RunConfig) -> Any:
        raise OSError("no similarity model here")

    monkeypatch.setattr(models_module, "backend_named", lambda name: lambda settings: backend)
    monkeypatch.setattr(models_module, "_similarity", refused)
    with pytest.raises(OSError, match="no similarity model here"):
        models_module.load_models(RunConfig())
    assert backend.closes == 1


def test_a_new_run_refused_after_the_load_closes_the_model_it_loaded_not_a_preloaded_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loaded = Counted()

    def refused(*_: Any, **__: Any) -> Any:
        raise StoreError("the prompt does not fit")

    monkeypatch.setattr(runs, "load_models", lambda config: _loaded(loaded))
    monkeypatch.setattr(runs, "create_run", refused)
    request = RunRequest(config=RunConfig(), dataset=object())  # type: ignore[arg-type]
    with pytest.raises(StoreError, match="does not fit"):
        start_or_resume(object(), request)  # type: ignore[arg-type]
    assert loaded.closes == 1
    preloaded = Counted()  # (the caller's: it decides)
    request.preloaded = _loaded(preloaded)
    with pytest.raises(StoreError, match="does not fit"):
        start_or_resume(object(), request)  # type: ignore[arg-type]
    assert preloaded.closes == 0 and loaded.closes == 1


class _GoneStore:
    def get_run(self, run_id: str) -> Any:
        raise StoreError(f"run {run_id} is gone")


def test_a_resume_refused_after_the_load_closes_the_model_it_loaded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loaded = Counted()
    monkeypatch.setattr(runs, "run_config_of", lambda store, run_id, **_: (run_id, RunConfig()))
    monkeypatch.setattr(runs, "load_models", lambda config: _loaded(loaded))
    with pytest.raises(StoreError, match="run r1 is gone"):
        start_or_resume(_GoneStore(), RunRequest(resume_run_id="r1"))  # type: ignore[arg-type]
    assert loaded.closes == 1


def test_a_server_that_does_not_answer_closes_the_vocabulary_opened_for_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The GGUF's tokenizer is opened (llama.cpp, vocabulary only) before the servers are
    asked who they are: nothing listening on the port frees it then."""
    from haf_tui.defaults import embedded_model_path
    from haf_tui.inference import server_backend
    from haf_tui.inference.llama import LlamaCppBackend
    from haf_tui.inference.server import Endpoint, ServerError

    opened: list[LlamaCppBackend] = []

    class Recorded(LlamaCppBackend):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            opened.append(self)

    monkeypatch.setattr(server_backend, "LlamaCppBackend", Recorded)
    with pytest.raises(ServerError):
        server_backend.ServerBackend(
            embedded_model_path(), [Endpoint("http://127.0.0.1:1", 1)], n_ctx=512
        )
    (vocabulary,) = opened
    assert vocabulary.llm._model.model is None  # (llama.cpp's model freed)


async def test_a_workbench_run_that_fails_closes_its_model_unless_the_caller_keeps_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The monitor's runs: a run that fails after its model loaded frees it (a preloaded
    model too, when the job owns it); a job whose caller keeps the model leaves it open."""
    from benchmarks.benchdata import build_bench_db
    from haf_tui.tui import app_runs, create_app
    from haf_tui.tui.live import RunJob
    from tests.support import until

    db = tmp_path / "haf.duckdb"
    (run_id,) = build_bench_db(db, n_instances=2, n_runs=1, seed=1)
    owned, kept = Counted(), Counted()

    def start(store: Any, request: RunRequest) -> Any:
        assert request.preloaded is not None
        return SimpleNamespace(run_id=run_id, config=None, models=request.preloaded)

    def execute(*_: Any, **__: Any) -> Any:
        raise HafError("the run failed")

    monkeypatch.setattr(app_runs, "start_or_resume", start)
    monkeypatch.setattr(app_runs, "execute_run", execute)
    jobs = [
        RunJob("owned", RunRequest(resume_run_id=run_id, preloaded=_loaded(owned))),
        RunJob("kept", RunRequest(resume_run_id=run_id, preloaded=_loaded(kept)), False),
    ]
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        app.start_runs(jobs)
        await until(pilot, lambda: app.session is not None and not app.session.active)
        assert app.session is not None
        assert [run.status for run in app.session.runs] == ["failed", "failed"]
    assert owned.closes == 1 and kept.closes == 0


@pytest.mark.parametrize(
    ("refusal", "status"),
    [(StoppedWaitingError("stopped waiting: nothing started"), "interrupted"),
     (StoreError("haf.duckdb could not be opened"), "failed")],
    ids=["wait-stopped", "store-refused"],
)  # fmt: skip
async def test_a_workbench_session_that_never_starts_closes_the_wizard_s_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refusal: StoreError, status: str
) -> None:
    """The wizard's model handed to the first job is freed when the jobs never start: the
    wait for the database stopped (C), or the database refused; it was left to the garbage
    collector (the interpreter's exit)."""
    from haf_tui.tui import app_runs, create_app
    from haf_tui.tui.live import RunJob
    from tests.support import until

    owned = Counted()

    def refused(*_: Any, **__: Any) -> Any:
        raise refusal

    monkeypatch.setattr(app_runs, "wait_for_writer", refused)
    request = RunRequest(config=RunConfig(), dataset=object(), preloaded=_loaded(owned))  # type: ignore[arg-type]
    app = create_app(tmp_path / "haf.duckdb")
    async with app.run_test(size=(80, 24)) as pilot:
        app.start_runs([RunJob("wizard's", request), RunJob("second", RunRequest())])
        await until(pilot, lambda: app.session is not None and not app.session.active)
        assert app.session is not None
        assert [run.status for run in app.session.runs] == [status, status]
    assert owned.closes == 1 and request.preloaded is None


async def test_a_wizard_calibration_that_fails_closes_the_model_it_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The review's time estimate loads the model for a short decode: a decode that fails is
    the review's one line, and the model it loaded is freed then (it was kept until the next
    probe replaced it)."""
    from haf_tui.tui import create_app
    from haf_tui.tui.screens import wizard_reading
    from haf_tui.tui.screens.wizard import WizardScreen
    from tests.support import settle, until

    monkeypatch.setenv("HAF_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("HAF_MODELS_PATH", raising=False)
    loaded: list[Counted] = []

    def load(config: RunConfig, similarity: Any = None) -> LoadedModels:
        loaded.append(Counted())
        return _loaded(loaded[-1])

    def refused(*_: Any) -> Any:
        raise HafError("the calibration decode failed")

    monkeypatch.setattr(wizard_reading, "load_models", load)
    monkeypatch.setattr(wizard_reading, "probe_speed", refused)
    app = create_app(tmp_path / "haf.duckdb")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        wizard = app.screen
        assert isinstance(wizard, WizardScreen)
        await pilot.press("ctrl+n", "ctrl+n", "ctrl+n")
        await until(pilot, lambda: bool(wizard.estimate_errors))
        assert list(wizard.estimate_errors.values()) == ["the calibration decode failed"]
        assert wizard.preloaded is None
    assert [model.closes for model in loaded] == [1]


async def test_a_wizard_left_while_its_model_loads_closes_that_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The review's probe loads the first model for the run to reuse; a wizard left while it
    loads cancels the probe, and the model it then holds reaches no screen: freed then."""
    import threading

    from haf_tui.tui import create_app
    from haf_tui.tui.screens import wizard_reading
    from haf_tui.tui.screens.wizard import WizardScreen
    from tests.support import settle, until

    monkeypatch.setenv("HAF_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("HAF_MODELS_PATH", raising=False)
    loading, release = threading.Event(), threading.Event()
    loaded: list[Counted] = []

    def load(config: RunConfig, similarity: Any = None) -> LoadedModels:
        loading.set()
        assert release.wait(120.0)
        loaded.append(Counted())
        return _loaded(loaded[-1])

    monkeypatch.setattr(wizard_reading, "load_models", load)
    monkeypatch.setattr(wizard_reading, "probe_speed", lambda *_: None)
    app = create_app(tmp_path / "haf.duckdb")
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            await pilot.press("n")
            await settle(pilot)
            wizard = app.screen
            assert isinstance(wizard, WizardScreen)
            await pilot.press("ctrl+n", "ctrl+n", "ctrl+n")
            await until(pilot, loading.is_set)
            await pilot.press("escape")
            await until(pilot, lambda: not isinstance(app.screen, WizardScreen))
            release.set()
            await until(pilot, lambda: [model.closes for model in loaded] == [1])
    finally:
        release.set()
