"""A campaign's cells side by side (``haf campaign run --cells-at-once N``, issue 37 §2), without
a model: the scheduling rule (the default N, models in this process never at once, models
sharing a server never at once, a lane that may not start waits), the runner's lanes in
threads on a real DuckDB file with scripted backends that record when they work, stopped
and interrupted, the status's time left, and the option's one-line errors (what the lanes
share between their threads: tests/test_campaign_shared.py)."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from haf_tui.campaign import GridError, campaign_status, load_grid
from haf_tui.campaign.cells import CampaignPlan, plan_campaign
from haf_tui.campaign.lanes import (
    Lane,
    default_cells_at_once,
    lanes_of,
    server_identity,
    side_by_side,
    startable,
    time_left,
)
from haf_tui.campaign.runner import run_campaign
from haf_tui.cli import main
from haf_tui.cli.campaign_command import grid_run_config
from haf_tui.config import DecodingSettings, RunConfig
from haf_tui.inference.base import Generation, TokenCallback
from haf_tui.inference.server import ServerError
from haf_tui.messages import ChatMessage
from haf_tui.pipeline.models import LoadedModels
from haf_tui.store import RunRecord, open_store
from haf_tui.store.campaigns import ClaimedCell, claim_cell
from haf_tui.store.records import InstanceResult
from haf_tui.vocabulary import HafError
from tests.test_campaign_hostile import _ScriptedFile
from tests.test_scheduler import FlatSimilarity


def _lane(model: str, *servers: str) -> Lane:
    return Lane(model, frozenset(servers), ())


# --- the rule ------------------------------------------------------------------------------


def test_the_default_is_one_per_model_with_servers_and_one_for_those_in_process() -> None:
    served = [_lane("a", "http://a:1"), _lane("b", "http://b:1"), _lane("c", "http://c:1")]
    here = [_lane("x"), _lane("y")]
    assert default_cells_at_once(served) == 3
    assert default_cells_at_once(served + here) == 4
    assert default_cells_at_once(here) == 1
    assert default_cells_at_once([]) == 1


def test_models_in_this_process_never_run_at_once() -> None:
    x, y, a = _lane("x"), _lane("y"), _lane("a", "http://a:1")
    assert startable([x, y, a], [], 5) == [x, a]  # (y waits for x; a runs beside it)
    assert startable([y], [x, a], 5) == []
    assert startable([y], [a], 5) == [y]  # (x ended: y's turn)
    assert not side_by_side([x, y], 5)


def test_a_lane_waits_for_a_free_place_in_the_grids_order() -> None:
    a, b, c = (_lane(m, f"http://{m}:1") for m in "abc")
    assert startable([a, b, c], [], 2) == [a, b]
    assert startable([c], [a, b], 2) == []
    assert startable([c], [b], 2) == [c]
    assert startable([a, b, c], [], 1) == [a]
    assert not side_by_side([a, b, c], 1) and side_by_side([a, b, c], 2)


def test_models_that_share_a_server_never_run_at_once() -> None:
    """The same server however it is written (``#N``, ``/v1``, a trailing slash)."""
    assert server_identity("http://g:8080#4") == server_identity("http://g:8080/v1/")
    a = _lane("a", server_identity("http://g:8080#4"), server_identity("http://h:1"))
    b = _lane("b", server_identity("http://g:8080/v1"))
    c = _lane("c", server_identity("http://k:1"))
    assert startable([a, b, c], [], 3) == [a, c]
    assert startable([b], [c], 3) == [b]


GRID = """
models = [
  {label = "a", path = "embedded", servers = ["http://a:1#2"]},
  {label = "b", path = "embedded", servers = ["http://b:1"]},
  {label = "x", path = "embedded", chat_format = "chatml"},
  {label = "y", path = "embedded", chat_format = "llama-2"},
]
datasets = ["sample", {label = "again", name = "sample"}]
suites = ["classify"]
limit = 2
seed = 3
"""


def _plan(tmp_path: Path, text: str = GRID, servers: Sequence[str] = ()) -> CampaignPlan:
    path = tmp_path / "grid.toml"
    path.write_text(text, encoding="utf-8")
    grid = load_grid(path)
    with open_store(tmp_path / "plan.duckdb") as store:
        return plan_campaign(store, grid, grid_run_config(grid), servers)


def test_a_grid_is_one_lane_per_model_with_its_servers(tmp_path: Path) -> None:
    lanes = lanes_of(_plan(tmp_path))
    assert [(lane.model, sorted(lane.servers), len(lane.cells)) for lane in lanes] == [
        ("a", ["http://a:1"], 2),
        ("b", ["http://b:1"], 2),
        ("x", [], 2),
        ("y", [], 2),
    ]
    assert default_cells_at_once(lanes) == 3
    # a server given on the command line serves every model: nothing side by side
    shared = lanes_of(_plan(tmp_path, servers=["http://s:1"]))
    assert not side_by_side(shared, default_cells_at_once(shared))


def test_time_left_runs_the_lanes_as_the_runner_starts_them() -> None:
    a, b, c = (_lane(m, f"http://{m}:1") for m in "abc")
    x, y = _lane("x"), _lane("y")
    seconds = {a: 60.0, b: 30.0, c: 20.0, x: 10.0, y: 5.0}
    assert time_left([a, b, c], seconds, 3) == 60.0
    assert time_left([a, b, c], seconds, 2) == 60.0  # (c starts when b ends: 30 + 20)
    assert time_left([b, c, a], seconds, 2) == 80.0  # (a waits for c: 20 + 60)
    assert time_left([a, b, c], seconds, 1) == 110.0  # (one after another: the sum)
    assert time_left([x, y, a], seconds, 3) == 60.0  # (y after x, beside a)
    assert time_left([x, y], seconds, 3) == 15.0


def test_status_gives_the_time_left_with_cells_side_by_side(tmp_path: Path) -> None:
    """Two models with servers of their own, a cell each with 30 s to go: 30 s left; the
    grid saying one cell at a time: 60 s."""
    text = GRID.replace("limit = 2", "limit = 2\n{extra}")
    for extra, left in [("", 30.0), ("cells_at_once = 1", 60.0)]:
        path = tmp_path / "grid.toml"
        path.write_text(text.replace("{extra}", extra), encoding="utf-8")
        grid = load_grid(path).model_copy(update={"datasets": load_grid(path).datasets[:1]})
        grid = grid.model_copy(update={"models": grid.models[:2]})
        db = tmp_path / f"s{len(extra)}.duckdb"
        with open_store(db) as store:
            for n, model in enumerate("ab"):
                claim_cell(store, grid.name, ClaimedCell(model, "sample", f"r{n}", "f", {}, n))
                store.create_run(
                    RunRecord(
                        run_id=f"r{n}",
                        status="interrupted",
                        dataset_id="builtin-sample",
                        n_planned=2,
                        config_json="{}",
                        model_file="m.gguf",
                        similarity_model="s",
                        similarity_kind="bi-encoder",
                    )
                )
                store.update_run(f"r{n}", seconds=30.0)
                store.save_instance_result(
                    InstanceResult(f"r{n}", "i0", stance="toxic", n_reasons=0)
                )
            status = campaign_status(store, grid)
        assert [cell.eta_seconds for cell in status.cells] == [30.0, 30.0]
        assert status.eta_seconds == pytest.approx(left) and status.eta_complete


# --- the runner: lanes in threads --------------------------------------------------------


class _Timed(_ScriptedFile):
    """The scripted model, taking a moment over each text it scores and noting when."""

    def __init__(
        self,
        model: str,
        log: list[tuple[str, float, float]],
        in_flight: Callable[[int], None] | None = None,
    ) -> None:
        super().__init__()
        self.model = model
        self.log = log
        self.in_flight = in_flight

    def score(
        self,
        messages: Sequence[ChatMessage],
        forced: str,
        settings: DecodingSettings,
        *,
        on_token: TokenCallback | None = None,
        reply_prefix: str = "",
    ) -> Generation:
        started = time.monotonic()
        if self.in_flight is not None:
            self.in_flight(len(self.log))
        time.sleep(0.03)
        self.log.append((self.model, started, time.monotonic()))
        return super().score(messages, forced, settings, on_token=on_token)


def _models_by_config(
    log: list[tuple[str, float, float]], in_flight: Callable[[int], None] | None = None
) -> Any:
    """``in_flight`` is called inside each generation with the count of those done so far."""
    names: dict[tuple[str, ...], str] = {("http://a:1#2",): "a", ("http://b:1",): "b"}
    formats = {"chatml": "x", "llama-2": "y"}

    def load(config: RunConfig, similarity: object = None) -> LoadedModels:
        servers = tuple(config.model.servers)
        model = names.get(servers) or formats[config.model.chat_format or ""]
        return LoadedModels(_Timed(model, log, in_flight), FlatSimilarity())

    return load


def _spans(log: list[tuple[str, float, float]], model: str) -> tuple[float, float]:
    times = [(start, end) for name, start, end in log if name == model]
    return min(s for s, _ in times), max(e for _, e in times)


def _overlap(one: tuple[float, float], other: tuple[float, float]) -> bool:
    return one[0] < other[1] and other[0] < one[1]


@pytest.mark.parametrize("at_once", [None, 1])
def test_cells_of_models_with_their_own_servers_run_at_once_the_others_in_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, at_once: int | None
) -> None:
    log: list[tuple[str, float, float]] = []
    monkeypatch.setattr("haf_tui.campaign.runner.load_models", _models_by_config(log))
    plan = _plan(tmp_path)
    with open_store(tmp_path / "plan.duckdb") as store:
        summary = run_campaign(store, plan, cells_at_once=at_once)
        _, runs = store.query("SELECT run_id, status, n_planned FROM runs")
        _, claims = store.query("SELECT claimed_run_id FROM campaign_cells")
        _, results = store.query("SELECT run_id, count(*) FROM instance_results GROUP BY run_id")
    assert summary.finished and not summary.stopped
    assert sorted(r for (r,) in claims) == sorted(r for r, _, _ in runs)  # one run per cell
    assert len(runs) == 8 and all(status == "finished" for _, status, _ in runs)
    assert dict(results) == {r: 2 for r, _, _ in runs}
    spans = {model: _spans(log, model) for model in "abxy"}
    assert not _overlap(spans["x"], spans["y"])  # (in this process: never at once)
    if at_once is None:
        assert _overlap(spans["a"], spans["b"])
        assert _overlap(spans["a"], spans["x"])  # (a served model beside one in process)
    else:
        for one, other in [("a", "b"), ("b", "x"), ("a", "x")]:
            assert not _overlap(spans[one], spans[other])


def test_a_lane_that_fails_to_load_stops_the_others_and_is_one_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server that does not answer: its lane raises; the other lane stops after its
    generations in flight (resumable), and the campaign raises the one-line error."""
    log: list[tuple[str, float, float]] = []
    load = _models_by_config(log)

    def failing(config: RunConfig, similarity: object = None) -> LoadedModels:
        if tuple(config.model.servers) == ("http://b:1",):
            time.sleep(0.2)
            raise ServerError("http://b:1: no OpenAI-compatible /v1/models answer")
        return load(config, similarity)  # type: ignore[no-any-return]

    monkeypatch.setattr("haf_tui.campaign.runner.load_models", failing)
    plan = _plan(tmp_path, GRID.replace("limit = 2", "limit = 20"))
    with open_store(tmp_path / "plan.duckdb") as store:
        with pytest.raises(HafError, match="no OpenAI-compatible"):
            run_campaign(store, plan)
        _, runs = store.query("SELECT status FROM runs")
    assert runs and all(status != "created" for (status,) in runs)
    assert ("interrupted",) in runs  # (the other lanes stopped, not run to their end)


_IN_FLIGHT_AT = 4
"""The stop comes inside a generation, once this many are done: while cells are in flight,
however fast the machine (a timer of one second once fell between two cells on a fast CPU)."""


def _once_at(count: int, action: Callable[[], None]) -> Callable[[int], None]:
    fired = threading.Event()
    lock = threading.Lock()

    def maybe(done: int) -> None:
        with lock:
            if done < count or fired.is_set():
                return
            fired.set()
        action()

    return maybe


def _statuses(path: Path) -> list[str]:
    with open_store(path, read_only=True) as store:
        _, rows = store.query("SELECT status FROM runs ORDER BY run_id")
    return [status for (status,) in rows]


def _finish_again(tmp_path: Path) -> None:
    """Run the campaign again: every cell finished, one run per cell, each instance once."""
    plan = _plan(tmp_path, GRID.replace("limit = 2", "limit = 6"))
    with open_store(tmp_path / "plan.duckdb") as store:
        assert run_campaign(store, plan).finished
        _, claims = store.query("SELECT claimed_run_id FROM campaign_cells ORDER BY 1")
        _, runs = store.query("SELECT run_id FROM runs ORDER BY 1")
        _, results = store.query(
            "SELECT count(*), count(DISTINCT (run_id, instance_id)) FROM instance_results"
        )
    assert claims == runs and len(runs) == 8 and results == [(48, 48)]


def test_a_stop_while_cells_run_side_by_side_stops_them_all_and_they_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C once (the stop event): every running cell stops after its generations in
    flight, no other cell starts; run again, every cell finishes."""
    log: list[tuple[str, float, float]] = []
    stop = threading.Event()
    monkeypatch.setattr(
        "haf_tui.campaign.runner.load_models",
        _models_by_config(log, _once_at(_IN_FLIGHT_AT, stop.set)),
    )
    plan = _plan(tmp_path, GRID.replace("limit = 2", "limit = 6"))
    with open_store(tmp_path / "plan.duckdb") as store:
        summary = run_campaign(store, plan, stop_event=stop)
    assert summary.stopped and not summary.finished
    statuses = _statuses(tmp_path / "plan.duckdb")
    assert "interrupted" in statuses and not {"running", "created"} & set(statuses)
    _finish_again(tmp_path)


def test_a_second_ctrl_c_abandons_every_cell_in_flight_and_they_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A KeyboardInterrupt in the campaign's thread while lanes run: each lane abandons its
    generations in flight, its run is left interrupted (never running or created), and the
    interrupt goes on up."""
    log: list[tuple[str, float, float]] = []

    def interrupt() -> None:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.5)  # (this generation is still in flight when the campaign hears it)

    monkeypatch.setattr(
        "haf_tui.campaign.runner.load_models",
        _models_by_config(log, _once_at(_IN_FLIGHT_AT, interrupt)),
    )
    plan = _plan(tmp_path, GRID.replace("limit = 2", "limit = 6"))
    with open_store(tmp_path / "plan.duckdb") as store, pytest.raises(KeyboardInterrupt):
        run_campaign(store, plan)
    statuses = _statuses(tmp_path / "plan.duckdb")
    assert "interrupted" in statuses and not {"running", "created"} & set(statuses)
    _finish_again(tmp_path)


# --- the option ----------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["0", "-1", "two"])
def test_a_bad_cells_at_once_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    grid = tmp_path / "grid.toml"
    grid.write_text(GRID, encoding="utf-8")
    with pytest.raises(SystemExit) as exited:
        main(["campaign", "run", str(grid), "--cells-at-once", value])
    assert exited.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "--cells-at-once" in err[-1] and "Traceback" not in "".join(err)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("cells_at_once = 0\n", "cells_at_once"),
        ("cells_at_once = true\n", "cells_at_once"),
        ("[settings]\ncells-at-once = 2\n", "give cells_at_once at the top of the file"),
    ],
)
def test_cells_at_once_in_the_grid_is_checked(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "grid.toml"
    path.write_text(GRID.replace("seed = 3\n", "seed = 3\n" + text), encoding="utf-8")
    with pytest.raises(GridError, match=says):
        grid_run_config(load_grid(path))
    path.write_text(GRID.replace("seed = 3\n", "seed = 3\ncells_at_once = 2\n"), encoding="utf-8")
    assert load_grid(path).cells_at_once == 2
