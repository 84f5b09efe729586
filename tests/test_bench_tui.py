"""The TUI latency benchmark on a small synthetic store: what the store holds, and that every
screen gets figures. Speed itself is measured by ``make bench``, never asserted here."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pytest

from benchmarks.benchdata import TOP_K, bench_db_path, build_bench_db, cached_bench_db
from benchmarks.tui_latency import SCENARIOS, Scenario, markdown, measure_keypress_latency, summary
from haf_tui.methods.loader import ensure_methods
from haf_tui.store import open_store

N_INSTANCES, N_RUNS = 50, 2
TABLES = {
    "datasets": "created_at",
    "instances": None,
    "runs": "created_at, updated_at",
    "generations": "created_at",
    "tokens": None,
    "reasons": None,
    "parse_diagnostics": None,
    "instance_results": "created_at",
    "reason_metrics": None,
    "instance_metrics": None,
}


VIOLATIONS = {
    "a generation whose tokens are not all there": (
        "SELECT count(*) FROM generations g WHERE output_tokens <> (SELECT count(*) FROM tokens t "
        "WHERE t.run_id = g.run_id AND t.instance_id = g.instance_id AND t.stage = g.stage "
        "AND t.sub_index = g.sub_index)"
    ),
    "a token without its top-k": f"SELECT count(*) FROM tokens WHERE len(top_texts) <> {TOP_K}",
    "a reason whose span is not its text, or relevances not one per token": (
        "SELECT count(*) FROM reasons r JOIN generations g "
        "USING (run_id, instance_id, stage, sub_index) "
        "WHERE substr(g.output_text, r.span_start + 1, r.span_end - r.span_start) <> r.text "
        "OR r.token_count <> len(r.relevance)"
    ),
    "n_reasons is not the JUSTIFY reasons": (
        "SELECT count(*) FROM instance_results r WHERE stopped IS NULL AND n_reasons <> "
        "(SELECT count(*) FROM reasons s WHERE s.run_id = r.run_id "
        "AND s.instance_id = r.instance_id AND s.stage = 'justify')"
    ),
    "a finished instance without SoS": (
        "SELECT count(*) FROM instance_results r WHERE stopped IS NULL AND NOT EXISTS "
        "(SELECT 1 FROM instance_metrics m WHERE m.run_id = r.run_id "
        "AND m.instance_id = r.instance_id AND m.metric = 'sos' AND m.value IS NOT NULL)"
    ),
    "RS for a non-toxic stance or RN for another": (
        "SELECT count(*) FROM instance_metrics m JOIN instance_results r "
        "USING (run_id, instance_id) WHERE (m.metric = 'rs' AND r.stance = 'non-toxic') "
        "OR (m.metric = 'rn' AND r.stance <> 'non-toxic')"
    ),
}


@pytest.fixture(scope="module")
def small_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    path = tmp_path_factory.mktemp("bench") / "haf.duckdb"
    return path, build_bench_db(path, N_INSTANCES, N_RUNS, seed=3)


def one(con: duckdb.DuckDBPyConnection, sql: str, params: Any = None) -> Any:
    row = con.execute(sql, params).fetchone()
    assert row is not None
    return row[0]


def test_the_store_holds_what_a_run_would_write(small_db: tuple[Path, list[str]]) -> None:
    path, run_ids = small_db
    assert run_ids == ["bench-s3-run1", "bench-s3-run2"]
    with duckdb.connect(str(path), read_only=True) as con:
        assert one(con, "SELECT count(*) FROM instances") == N_INSTANCES
        statuses = con.execute("SELECT run_id, status, n_planned FROM runs ORDER BY 1").fetchall()
        assert statuses == [
            ("bench-s3-run1", "finished", N_INSTANCES),
            ("bench-s3-run2", "interrupted", N_INSTANCES),  # the last run stops at 95 %
        ]
        done = dict(
            con.execute("SELECT run_id, count(*) FROM instance_results GROUP BY 1").fetchall()
        )
        assert done == {"bench-s3-run1": N_INSTANCES, "bench-s3-run2": N_INSTANCES - 2}
        # an instance stops after JUSTIFY (one generation), or runs internal, external and one
        # individual prompt per reason
        wrong = one(
            con,
            "SELECT count(*) FROM instance_results r JOIN (SELECT run_id, instance_id, "
            "count(*) AS n FROM generations GROUP BY ALL) g USING (run_id, instance_id) "
            "WHERE g.n <> CASE WHEN r.stopped IS NULL THEN 3 + r.n_reasons ELSE 1 END",
        )
        assert wrong == 0
        stopped = dict(
            con.execute("SELECT stopped, count(*) FROM instance_results GROUP BY 1").fetchall()
        )
        assert stopped.get("unclear stance") and stopped.get(None)
        # every generation's tokens, each with its top-k; reasons point into them
        for what, sql in VIOLATIONS.items():
            assert one(con, sql) == 0, what
        average = one(con, "SELECT avg(output_tokens) FROM generations WHERE stage = 'justify'")
        assert average >= 40
        decisions = {
            r[0] for r in con.execute("SELECT DISTINCT decision FROM generations").fetchall()
        }
        assert {"NO", "YES", "MAYBE", "UNCLEAR", "toxic", "non-toxic", "unclear"} <= decisions


def test_bulk_writing_stores_exactly_what_the_store_api_does(tmp_path: Path) -> None:
    bulk, api = tmp_path / "bulk.duckdb", tmp_path / "api.duckdb"
    build_bench_db(bulk, 12, 2, seed=9, writer="bulk", chunk=5)
    build_bench_db(api, 12, 2, seed=9, writer="api")
    with duckdb.connect(str(bulk), read_only=True) as a, duckdb.connect(str(api)) as b:
        for table, skip in TABLES.items():
            sql = f"SELECT * {f'EXCLUDE ({skip})' if skip else ''} FROM {table} ORDER BY ALL"
            rows = a.execute(sql).fetchall()
            assert rows == b.execute(sql).fetchall(), table
            assert rows or table == "parse_diagnostics", table


def test_the_cached_store_is_built_once(tmp_path: Path) -> None:
    path, run_ids, seconds = cached_bench_db(tmp_path, 6, 1, seed=1)
    assert path == bench_db_path(tmp_path, 6, 1, 1) and path.is_file()
    assert run_ids == ["bench-s1-run1"] and seconds is not None
    again = cached_bench_db(tmp_path, 6, 1, seed=1)
    assert again == (path, run_ids, None)
    assert not list(tmp_path.glob("*.partial*"))


def test_a_store_built_where_no_method_was_loaded_has_their_tables(tmp_path: Path) -> None:
    """A bench store is a store as ``haf run`` leaves it, whoever builds it: built by a
    program that had not loaded the methods, it lacked their migrations, and every opening
    read it through an upgraded copy of the whole file."""
    db = tmp_path / "bench.duckdb"
    build = (
        "import sys; from benchmarks.benchdata import build_bench_db as b; b(sys.argv[1], 4, 1, 1)"
    )
    subprocess.run([sys.executable, "-c", build, str(db)], check=True, cwd=Path.cwd())
    ensure_methods()
    with open_store(db, read_only=True) as store:
        assert not store.copied and not store.needs_migration()


def test_every_screen_gets_figures(small_db: tuple[Path, list[str]]) -> None:
    path, _ = small_db
    missing = Scenario("later", ("z",), (("keys", ("z",)),), module="haf_tui.tui.screens.nope")
    result = measure_keypress_latency(path, [*SCENARIOS, missing], size=(160, 48))
    names = [s.screen for s in SCENARIOS]
    assert set(result["screens"]) | set(result["skipped"]) == {*names, "later"}
    assert "not found" in result["skipped"]["later"]
    for name in ("home", "explorer", "sql"):  # the screens of this checkout
        assert name in result["screens"], result["skipped"].get(name)
    for scenario in SCENARIOS:
        if scenario.screen not in result["screens"]:
            continue
        figures = result["screens"][scenario.screen]
        presses = len(scenario.open_keys) + sum(len(keys) for _, keys in scenario.actions)
        assert figures["n"] == presses
        assert 0 < figures["median_ms"] <= figures["p95_ms"] <= figures["max_ms"]
        for action, keys in scenario.actions:
            assert result["actions"][f"{scenario.screen}: {action}"]["n"] == len(keys)
        if scenario.open_keys:
            shown = result["actions"][f"{scenario.screen}: open: screen shown"]
            loaded = result["actions"][f"{scenario.screen}: open: data loaded"]
            assert shown["n"] == loaded["n"] == len(scenario.open_keys)
            assert shown["max_ms"] <= loaded["max_ms"]
    table = markdown(result)
    assert "| **explorer** |" in table and "| explorer: step ] / [ |" in table
    assert "later: skipped" in table


def test_summary_of_timings() -> None:
    assert summary([]) == {"n": 0}
    figures = summary([float(v) for v in range(1, 101)])
    assert figures == {"n": 100, "median_ms": 50.5, "p95_ms": 95.0, "max_ms": 100.0}


@pytest.mark.parametrize("at_once", [False, True])
def test_screen_open_gets_figures_with_the_key_after_the_warm_up_or_at_once(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    at_once: bool,
) -> None:
    """``--at-once`` posts the key as soon as the runs list shows its runs (the app still
    warming up, the screens built ahead not built): the screen still shows its data."""
    from benchmarks import screen_open

    db = tmp_path / "bench.duckdb"
    build_bench_db(db, n_instances=4, n_runs=2, seed=3)
    monkeypatch.setenv("HAF_HOME", str(tmp_path / "home"))
    order: list[str] = []
    for name in ("settle", "_key_event"):
        real = getattr(screen_open, name)

        def logged(*args: Any, real: Any = real, name: str = name) -> Any:
            order.append(name)
            return real(*args)

        monkeypatch.setattr(screen_open, name, logged)
    screen_open.main(
        ["--db", str(db), "explorer", "metrics", "--rounds", "1"] + ["--at-once"] * at_once
    )
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == ["explorer round 1", "metrics round 1"]
    assert all("data shown" in line and "everything done" in line for line in lines)
    for line in lines:  # (the first frame is drawn no later than the data is shown)
        frame, data = (float(m) for m in re.findall(r"(?:first frame|data shown) (\d+) ms", line))
        assert frame <= data
    assert order[0] == ("_key_event" if at_once else "settle")  # (the first opening's)


def test_screen_open_stops_at_a_screen_that_says_its_read_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A screen whose first read fails never shows its data: the timing says why at once
    rather than waiting out its deadline."""
    from benchmarks import screen_open
    from haf_tui.tui import instance_reader

    db = tmp_path / "bench.duckdb"
    build_bench_db(db, n_instances=4, n_runs=2, seed=3)
    monkeypatch.setenv("HAF_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(screen_open, "DEADLINE_SECONDS", 20.0)

    def failing(*args: Any) -> Any:
        raise RuntimeError("a planted failure")

    monkeypatch.setattr(instance_reader, "instance_notes", failing)  # (the explorer's first read)
    with pytest.raises(RuntimeError, match=r"explorer: .*a planted failure"):
        screen_open.main(["--db", str(db), "explorer", "--rounds", "1", "--at-once"])


def test_screen_open_first_frame_is_taken_once_before_the_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first frame is the first poll that finds the screen drawn (never looked at again),
    and it comes back before the data's time (the data found only after it)."""
    import asyncio
    import time

    from benchmarks import screen_open

    db = tmp_path / "bench.duckdb"
    build_bench_db(db, n_instances=4, n_runs=2, seed=3)
    monkeypatch.setenv("HAF_HOME", str(tmp_path / "home"))
    drawn: list[bool] = []  # (each look: whether the frame was drawn)
    real_drawn = screen_open.frame_drawn

    def frame_drawn(screen: Any) -> bool:
        drawn.append(real_drawn(screen))
        return drawn[-1]

    key, class_name, filled = screen_open.SCREENS["explorer"]

    def filled_later(screen: Any) -> bool:
        if not drawn or not drawn[-1]:
            return False  # (the data is looked for once the frame is drawn)
        time.sleep(0.005)  # (so the data is found strictly after the frame)
        return filled(screen)

    monkeypatch.setattr(screen_open, "frame_drawn", frame_drawn)
    monkeypatch.setitem(screen_open.SCREENS, "explorer", (key, class_name, filled_later))
    frame_ms, data_ms, complete_ms, settled_ms = asyncio.run(
        screen_open.time_open(str(db), "explorer")
    )
    assert drawn.count(True) == 1 and drawn[-1]  # (not looked at again once drawn)
    assert frame_ms < data_ms <= complete_ms <= settled_ms


def test_screen_open_data_in_the_first_frame_gives_the_frame_the_datas_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A screen whose data is found before its frame is seen drawn: its first frame is the
    data's (not missing)."""
    import asyncio

    from benchmarks import screen_open

    db = tmp_path / "bench.duckdb"
    build_bench_db(db, n_instances=4, n_runs=2, seed=3)
    monkeypatch.setenv("HAF_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(screen_open, "frame_drawn", lambda screen: False)
    frame_ms, data_ms, _, _ = asyncio.run(screen_open.time_open(str(db), "explorer"))
    assert frame_ms == data_ms


class _Node:
    def __init__(self, queued: int = 0) -> None:
        self.message_queue_size = queued


class _Screen(_Node):
    def __init__(self, mounted: bool, queued: list[int]) -> None:
        super().__init__(queued[0])
        self.is_mounted = mounted
        self.children = [_Node(n) for n in queued[1:]]
        self.updates = 0

    def walk_children(self, with_self: bool = False) -> list[_Node]:
        return ([self] if with_self else []) + self.children

    def _on_timer_update(self) -> None:
        self.updates += 1


@pytest.mark.parametrize(
    ("mounted", "queued", "drawn"),
    [
        (False, [0, 0], False),  # (not mounted yet)
        (True, [1, 0], False),  # (the screen has a message to handle)
        (True, [0, 0, 2], False),  # (one of its widgets has)
        (True, [0, 0, 0], True),
    ],
)
def test_screen_open_a_frame_is_drawn_once_mounted_and_every_message_handled(
    mounted: bool, queued: list[int], drawn: bool
) -> None:
    from benchmarks import screen_open

    screen = _Screen(mounted, queued)
    assert screen_open.frame_drawn(screen) is drawn
    assert screen.updates == int(drawn)  # (drawn at once, as tui_latency takes it)
