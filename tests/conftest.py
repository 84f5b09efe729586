"""Shared pytest fixtures: where ``../shared`` lives and how its reference fixtures load."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


def _one_share_of_the_cpus_per_worker() -> None:
    """Under ``pytest -n N`` each worker (and what it starts) runs on its own share of the
    CPUs, so N workers' llama.cpp and torch threads (as many as the CPUs a process may run
    on) never outnumber the CPUs: llama.cpp's threads spin-wait for each other, and more
    of them than CPUs made decodes many times slower."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if not worker.startswith("gw") or workers < 2 or not hasattr(os, "sched_setaffinity"):
        return
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) >= workers:
        os.sched_setaffinity(0, cpus[int(worker[2:]) % workers :: workers])


_one_share_of_the_cpus_per_worker()


def shared_dir() -> Path:
    """The ``shared/`` folder beside the checkout (``HAF_SHARED_DIR`` overrides)."""
    override = os.environ.get("HAF_SHARED_DIR")
    return Path(override) if override else REPO_ROOT.parent / "shared"


def reference_fixture_paths() -> list[Path]:
    """Every ``MODEL__DATASET.json`` of the authors' reference outputs, sorted."""
    folder = shared_dir() / "fixtures" / "haf-reference"
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


@pytest.fixture(scope="session")
def reference_fixtures() -> list[dict[str, Any]]:
    """All reference fixtures loaded; skips the test when ``../shared`` is absent."""
    paths = reference_fixture_paths()
    if not paths:
        pytest.skip(f"reference fixtures not found under {shared_dir()}/fixtures/haf-reference")
    return [json.loads(p.read_text(encoding="utf-8")) for p in paths]


_SESSION_METHODS: list[Any] = []


def pytest_sessionstart(session: pytest.Session) -> None:
    """The methods, loaded once for the session, as a program loads them where it starts
    (before the tests are collected: a test module may read a suite as it is imported)."""
    from haf_tui.methods.loader import load_methods

    _SESSION_METHODS[:] = [load_methods()]


@pytest.fixture(scope="session")
def method_registry() -> Any:
    """The session's method registry (:func:`pytest_sessionstart`)."""
    return _SESSION_METHODS[0]


@pytest.fixture(autouse=True)
def _session_methods(method_registry: Any) -> Iterator[None]:
    """Every test starts and ends with the session's registry installed: a test that adds a
    method, or loads the methods again with a plug-in installed, leaves nothing behind."""
    from haf_tui.methods.registry import installed

    if installed() is not method_registry:
        method_registry.install()
    yield
    if installed() is not method_registry:
        method_registry.install()


@pytest.fixture(autouse=True)
def _ctrl_c_raises() -> Iterator[None]:
    """Every test starts with Ctrl-C raising KeyboardInterrupt, as in a fresh ``haf`` process,
    and a handler a test leaves behind is put back. A full run once found SIGINT ignored in
    one test process (a handler left by an earlier test, or a blocked mask): a campaign test's
    Ctrl-C raised nothing, and a ``haf rescore --wait`` started after it never stopped on its
    Ctrl-C (as a process that inherited an ignored or blocked SIGINT)."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _ctrl_c_delivered()
    yield
    _ctrl_c_delivered()


def _ctrl_c_delivered() -> None:
    """SIGINT raises KeyboardInterrupt in this process and is not blocked in its main thread
    (a blocked SIGINT is inherited by the threads it starts and, through exec, by every process
    it starts: none of them would hear a Ctrl-C); one left pending is dropped, not delivered
    to the next test."""
    import signal

    signal.signal(signal.SIGINT, signal.default_int_handler)
    if signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, []):
        if signal.SIGINT in signal.sigpending():
            signal.sigtimedwait([signal.SIGINT], 0)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])


@pytest.fixture(autouse=True)
def _sql_state_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The SQL screen keeps its buffer and history under the HAF home: each test gets its own
    folder, so no test sees another's (or the user's) buffer in the editor."""
    from haf_tui.tui import sql_history

    monkeypatch.setattr(sql_history, "state_dir", lambda: tmp_path / "sql-state")


@pytest.fixture(autouse=True)
def _no_torch_attributions_with_scripted_models(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new rationales run computes attention, saliency and input_x_gradient in torch from
    the run's GGUF (the embedded one when a test names none): with a scripted model that would
    load SmolLM2 into torch for nothing, so outside real_model tests the stage is skipped as
    for a model torch cannot open (tests of the stage hand the plan its attribution)."""
    if request.node.get_closest_marker("real_model"):
        return
    from haf_tui.methods.rationales.suite import gradient_stage
    from haf_tui.vocabulary import HafError

    refused = HafError("attributions skipped: a scripted model")
    monkeypatch.setattr(gradient_stage, "_attributor", lambda key: refused)


@pytest.fixture(scope="session")
def embedded_backend() -> Iterator[Any]:
    """The embedded SmolLM2 135M Instruct GGUF, loaded once by llama.cpp (CPU, small n_ctx),
    closed when the session ends (a Llama left to the interpreter's exit is freed after
    llama-cpp-python's bindings: "Exception ignored in: Llama.__del__ ... TypeError")."""
    from haf_tui.defaults import embedded_model_path
    from haf_tui.inference.llama import LlamaCppBackend

    backend = LlamaCppBackend(embedded_model_path(), n_ctx=1024, n_gpu_layers=0)
    yield backend
    backend.close()


@pytest.fixture
def opened() -> Iterator[list[Any]]:
    """What a test loads (an attributor, a Llama, a backend), closed when it ends, passed or
    failed (an exception's frames would keep it open until the interpreter's exit)."""
    models: list[Any] = []
    yield models
    for model in models:
        model.close()


@pytest.fixture(scope="session")
def minilm() -> Any:
    """The bundled all-MiniLM-L6-v2 bi-encoder, loaded offline, cached by pair."""
    from haf_tui.similarity import load_similarity

    return load_similarity()


LISTY_TEXT = (
    "Decision: toxic.\n1. It insults the reader by calling them a worthless idiot.\n"
    "2. It tells the reader that their opinions are garbage."
)
PLAIN_TEXT = "Thanks for the detailed write-up on the bus schedule changes."
LISTY_MAX_NEW = 80


def write_listy_dataset(folder: Path) -> Path:
    """A JSONL dataset: a text written as a numbered list (the embedded base model tends to
    continue it, so every stage runs) and a plain one."""
    path = folder / "listy.jsonl"
    rows = [
        {"id": "listy", "text": LISTY_TEXT, "label": "toxic"},
        {"id": "plain", "text": PLAIN_TEXT, "label": "non-toxic"},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


@pytest.fixture(scope="session")
def usable_seed(embedded_backend: Any) -> int:
    """A run seed whose JUSTIFY answer on LISTY_TEXT has a stance and at least one reason."""
    from haf_tui.config import DecodingSettings
    from haf_tui.methods.haf.core.parsing import parse_justify
    from haf_tui.methods.haf.core.prompts import justify_messages
    from haf_tui.pipeline.runner import generation_seed

    for run_seed in range(1, 9):
        seed = generation_seed(run_seed, "listy", "justify", "-1")
        generation = embedded_backend.generate(
            justify_messages(LISTY_TEXT), DecodingSettings(max_new_tokens=LISTY_MAX_NEW, seed=seed)
        )
        parsed = parse_justify(generation.text)
        if parsed.stance != "unclear" and parsed.reasons:
            return run_seed
    pytest.fail("no run seed in 1..8 gave a JUSTIFY answer with reasons on the listy text")


@pytest.fixture(scope="session")
def full_run_db(
    tmp_path_factory: pytest.TempPathFactory, embedded_backend: Any, minilm: Any, usable_seed: int
) -> tuple[Path, str, list[str]]:
    """A real run of every stage of both suites on the listy dataset: (database file, run id,
    the kinds of the progress events it published). Tests only read it."""
    from haf_tui.config import DecodingSettings, RunConfig
    from haf_tui.datasets import load_file
    from haf_tui.pipeline.models import LoadedModels
    from haf_tui.pipeline.runs import create_run, execute_run
    from haf_tui.store import open_store

    folder = tmp_path_factory.mktemp("full-run")
    models = LoadedModels(embedded_backend, minilm)
    config = RunConfig(
        decoding=DecodingSettings(max_new_tokens=LISTY_MAX_NEW, seed=usable_seed),
        suites=("haf", "classify"),
    )
    with open_store(folder / "haf.duckdb") as store:
        run_id, config = create_run(store, config, load_file(write_listy_dataset(folder)), models)
        events: list[str] = []
        summary = execute_run(
            store, run_id, config, models, listener=lambda event: events.append(event.kind)
        )
        assert summary.status == "finished"
    return folder / "haf.duckdb", run_id, events
