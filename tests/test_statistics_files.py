"""The comparison's statistics kept on disk (:mod:`haf_tui.reports.statistics_files`): what is
read back equals what was computed fresh (and what ``haf report --report compare-ci`` prints);
a file is used only for its own key (database, runs at their versions, seed, resamples), so a
run that gains rows is computed anew; a file that is not what was written (garbage, truncated,
wrong types, too big, not a regular file) is ignored and written over; a folder that cannot be
written loses nothing but the keeping."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from benchmarks.benchdata import build_bench_db
from haf_tui.reports import bootstrap, statistics_files
from haf_tui.reports.comparison import (
    CONFIDENCE,
    N_RESAMPLES,
    SEED,
    MeanInterval,
    Overlap,
    PairedDifference,
    paired_difference,
)
from haf_tui.reports.registry import run_report
from haf_tui.reports.statistics_files import PairStatistics, StatisticsFiles, StatisticsKey
from haf_tui.store import open_store
from haf_tui.store.comparison_readers import compared_runs, run_versions
from haf_tui.tui.compare_data import (
    RunStatistics,
    kept_statistics,
    load_compare_data,
    run_statistics,
)
from haf_tui.tui.run_cache import RUN_CACHE


@pytest.fixture(scope="module")
def template_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """Three runs of one synthetic dataset (different numbers finished)."""
    path = tmp_path_factory.mktemp("statistics-files") / "template.duckdb"
    return path, build_bench_db(path, n_instances=30, n_runs=3, seed=11)


@pytest.fixture
def db(template_db: tuple[Path, list[str]], tmp_path: Path) -> Path:
    path = tmp_path / "haf.duckdb"
    shutil.copyfile(template_db[0], path)
    return path


def _fresh(db: Path) -> list[RunStatistics]:
    """The statistics computed from the stored values, nothing kept or read from a file."""
    with open_store(db, read_only=True) as store:
        data = load_compare_data(store)
    return run_statistics(data.runs, data.values)


def _kept(db: Path, files: StatisticsFiles) -> list[RunStatistics] | None:
    """What a new process shows from the files alone (nothing in memory, no values read)."""
    RUN_CACHE.clear()
    with open_store(db, read_only=True) as store:
        runs, versions = compared_runs(store), run_versions(store)
    return kept_statistics(runs, versions, str(db), files)


def _computed_and_kept(db: Path, files: StatisticsFiles) -> list[RunStatistics]:
    RUN_CACHE.clear()
    with open_store(db, read_only=True) as store:
        data = load_compare_data(store, str(db))
    return run_statistics(
        data.runs, data.values, versions=data.versions, database=str(db), files=files
    )


def test_what_is_read_back_equals_what_is_computed_fresh_and_what_compare_ci_prints(
    db: Path, tmp_path: Path
) -> None:
    files = StatisticsFiles(tmp_path / "kept")
    assert _kept(db, files) is None  # (nothing kept yet)
    computed = _computed_and_kept(db, files)
    assert len(list(files.folder.glob("means-*.json"))) == 3
    assert len(list(files.folder.glob("paired-*.json"))) == 2
    kept = _kept(db, files)
    assert RUN_CACHE.computed == 0
    fresh = _fresh(db)
    assert kept == computed == fresh
    assert kept is not None and kept[0].metrics  # (metrics compared, not an empty table)
    with open_store(db, read_only=True) as store:
        report = run_report(store, "compare-ci", {"run_ids": [f.run.run_id for f in fresh]})
    rows = {(row[0], row[1]): row for row in report.rows}
    for found in kept:
        for spec in found.metrics:
            row = rows[(spec.label, found.run.run_id)]
            mean = found.means[spec.name]
            assert (row[4], row[5], row[6], row[7]) == (mean.mean, mean.low, mean.high, mean.n)
            if found.paired is not None:
                d = found.paired[spec.name]
                assert (row[8], row[9], row[10], row[11]) == (d.mean, d.low, d.high, d.p_value)


def test_a_run_that_gains_rows_is_computed_anew(db: Path, tmp_path: Path) -> None:
    files = StatisticsFiles(tmp_path / "kept")
    before = _computed_and_kept(db, files)
    grown = min(before, key=lambda found: found.run.n_done).run.run_id
    source = max(before, key=lambda found: found.run.n_done).run.run_id
    with open_store(db) as store:  # (the run with fewest finished finishes one more)
        missing = store.query(
            "SELECT instance_id FROM instance_results WHERE run_id = $source EXCEPT "
            "SELECT instance_id FROM instance_results WHERE run_id = $grown ORDER BY 1 LIMIT 1",
            {"source": source, "grown": grown},
        )[1][0][0]
        for table in ("instance_metrics", "instance_results"):  # (results last: they decide)
            store.connection.execute(
                f"INSERT INTO {table} SELECT * REPLACE ($grown AS run_id) FROM {table} "
                "WHERE run_id = $source AND instance_id = $missing",
                {"grown": grown, "source": source, "missing": missing},
            )
    assert _kept(db, files) is None  # (the grown run's files are of its old version)
    after = _computed_and_kept(db, files)
    assert RUN_CACHE.computed > 0
    assert after == _fresh(db)
    by_run = {found.run.run_id: found for found in before}
    for found in after:
        if found.run.run_id == grown:
            assert found.means != by_run[grown].means
        else:
            assert found.means == by_run[found.run.run_id].means


def _key(**given: Any) -> StatisticsKey:
    fields: dict[str, Any] = {
        "kind": "means",
        "database": "/data/haf.duckdb",
        "runs": (("run-a", ("finished", "2026-01-01 00:00:00", 30, 180)),),
        "seed": SEED,
        "n_resamples": N_RESAMPLES,
        "confidence": CONFIDENCE,
        "method": bootstrap.method_versions(),
    }
    return StatisticsKey(**{**fields, **given})


def test_a_file_is_read_only_for_its_own_key(tmp_path: Path) -> None:
    files = StatisticsFiles(tmp_path)
    means = {"sos": MeanInterval(3, 0.5, 0.25, 0.75)}
    files.write_means(_key(), means)
    assert files.read_means(_key()) == means
    for other in (
        _key(seed=SEED + 1),
        _key(n_resamples=N_RESAMPLES + 1),
        _key(database="/data/other.duckdb"),
        _key(runs=(("run-a", ("finished", "2026-01-01 00:00:00", 31, 186)),)),
        _key(runs=(("run-a", ("running", "2026-01-01 00:00:00", 30, 180)),)),
        _key(method=("batch 100", "numpy 2.4.6", "scipy 0.0")),
    ):
        assert files.read_means(other) is None
        # (a file holding another key, put under this one's name, is not believed)
        shutil.copyfile(tmp_path / _key().file_name(), tmp_path / other.file_name())
        assert files.read_means(other) is None


@pytest.mark.parametrize(
    "content",
    [
        b"\xff\xfe not utf-8",
        b'{"format": 1, "key": ',  # (truncated)
        b"[1, 2, 3]",
        b'{"format": 2}',
        b"NaN",
        b'{"format": 1, "key": KEY, "means": {"sos": [3, Infinity, -Infinity, Infinity]}}',
    ],
)
def test_a_corrupt_file_is_ignored_and_written_over(tmp_path: Path, content: bytes) -> None:
    files = StatisticsFiles(tmp_path)
    key = json.dumps(_key().as_json()).encode()
    (tmp_path / _key().file_name()).write_bytes(content.replace(b"KEY", key))
    assert files.read_means(_key()) is None
    means = {"sos": MeanInterval(2, 0.5, 0.0, 1.0)}
    files.write_means(_key(), means)
    assert files.read_means(_key()) == means


def _written_with(tmp_path: Path, change: Any) -> StatisticsFiles:
    """A pair's file written, then its JSON changed by ``change``."""
    files = StatisticsFiles(tmp_path)
    key = _key(kind="paired")
    difference = PairedDifference(3, 0.1, -0.2, 0.4, 1.0, 0.5, ("i9",), ())
    split = Overlap(("i1", "i2", "i3"), ("i9",), ())
    files.write_pair(key, PairStatistics({"sos": difference}, split))
    assert files.read_pair(key) == PairStatistics({"sos": difference}, split)
    path = tmp_path / key.file_name()
    found = json.loads(path.read_text())
    change(found)
    path.write_text(json.dumps(found))
    return files


@pytest.mark.parametrize(
    "change",
    [
        lambda f: f["paired"]["sos"].__setitem__(0, "3"),  # (a count as text)
        lambda f: f["paired"]["sos"].__setitem__(0, -1),  # (a negative count)
        lambda f: f["paired"]["sos"].__setitem__(0, True),  # (a flag for a count)
        lambda f: f["paired"]["sos"].__setitem__(1, 1),  # (an int where a float was written)
        lambda f: f["paired"]["sos"].__setitem__(2, float("nan")),
        lambda f: f["paired"]["sos"].__setitem__(2, float("-inf")),  # (an endless interval)
        lambda f: f["paired"]["sos"].__setitem__(3, float("inf")),
        lambda f: f["paired"]["sos"].__setitem__(1, float("inf")),  # (an endless mean)
        lambda f: f["paired"]["sos"].__setitem__(4, float("inf")),  # (an endless statistic)
        lambda f: f["paired"]["sos"].__setitem__(6, [1]),  # (an id that is no text)
        lambda f: f["paired"]["sos"].pop(),  # (a field missing)
        lambda f: f["paired"]["sos"].__setitem__(2, 0.9),  # (a low above its high)
        lambda f: f["paired"]["sos"].__setitem__(3, None),  # (an interval half gone)
        lambda f: f["paired"]["sos"].__setitem__(0, 0),  # (a mean over no pair)
        lambda f: f["paired"]["sos"].__setitem__(5, 1.5),  # (a p above 1)
        lambda f: f["paired"]["sos"].__setitem__(4, None),  # (a p without its statistic)
        lambda f: f.__setitem__("overlap", [[], []]),
        lambda f: f.__setitem__("paired", []),
        lambda f: f.pop("paired"),
    ],
)
def test_a_file_of_the_wrong_shape_or_types_is_ignored(tmp_path: Path, change: Any) -> None:
    files = _written_with(tmp_path, change)
    assert files.read_pair(_key(kind="paired")) is None


def test_what_is_no_regular_file_or_too_big_is_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = StatisticsFiles(tmp_path)
    path = tmp_path / _key().file_name()
    os.mkfifo(path)  # (a FIFO: never blocks the reader)
    assert files.read_means(_key()) is None
    path.unlink()
    path.mkdir()
    assert files.read_means(_key()) is None
    path.rmdir()
    target = tmp_path / "elsewhere.json"
    files.write_means(_key(), {"sos": MeanInterval(1, 0.5, None, None)})
    (tmp_path / _key().file_name()).rename(target)
    path.symlink_to(target)  # (a symlink is not followed)
    assert files.read_means(_key()) is None
    path.unlink()
    target.rename(path)
    assert files.read_means(_key()) is not None
    monkeypatch.setattr(statistics_files, "FILE_LIMIT", path.stat().st_size - 1)
    assert files.read_means(_key()) is None


def test_a_folder_that_cannot_be_written_loses_only_the_keeping(tmp_path: Path) -> None:
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("")
    files = StatisticsFiles(blocked / "compare")
    files.write_means(_key(), {"sos": MeanInterval(1, 0.5, None, None)})
    assert files.read_means(_key()) is None


def test_the_folder_keeps_the_newest_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(statistics_files, "MAX_FILES", 3)
    files = StatisticsFiles(tmp_path)
    keys = [_key(seed=seed) for seed in range(5)]
    for at, key in enumerate(keys):
        files.write_means(key, {"sos": MeanInterval(1, 0.5, None, None)})
        os.utime(tmp_path / key.file_name(), ns=(at * 10**9, at * 10**9))
    assert sorted(p.name for p in tmp_path.glob("*.json")) == sorted(
        k.file_name() for k in keys[-3:]
    )


def test_a_write_removes_temporaries_left_by_a_process_killed_mid_write(tmp_path: Path) -> None:
    """A temporary older than an hour was a dead writer's: the next write removes it; a young
    one (another process's write under way) and other files stay."""
    files = StatisticsFiles(tmp_path)
    old, young, other = tmp_path / ".a.json.x1.tmp", tmp_path / ".b.json.x2.tmp", tmp_path / "n.txt"
    for path in (old, young, other):
        path.write_text("{", encoding="utf-8")
    hours_ago = time.time() - statistics_files.STALE_TEMPORARY_SECONDS - 60
    os.utime(old, (hours_ago, hours_ago))
    os.utime(other, (hours_ago, hours_ago))
    files.write_means(_key(), {"sos": MeanInterval(1, 0.5, None, None)})
    assert not old.exists() and young.exists() and other.exists()
    assert files.read_means(_key()) is not None


def test_a_pair_compared_the_other_way_round_shows_its_own_differences(
    db: Path, tmp_path: Path
) -> None:
    """(A, B) then (B, A): the second's differences are ``A - B``, a fresh
    :func:`paired_difference` of the reference B with A, in this process and in a new one (not
    (A, B)'s kept ones with their sign the wrong way)."""
    files = StatisticsFiles(tmp_path / "kept")
    RUN_CACHE.clear()
    with open_store(db, read_only=True) as store:
        data = load_compare_data(store, str(db))
    first, second = data.runs[:2]

    def compared(runs: list[Any]) -> list[RunStatistics]:
        return run_statistics(
            runs, data.values, versions=data.versions, database=str(db), files=files
        )

    def of(run_id: str, metric: str) -> dict[str, float | None]:
        return {i: found.get(metric) for i, found in data.values[run_id].items()}

    forward = compared([first, second])[1].paired
    assert forward is not None
    expected = {
        m: paired_difference(of(second.run_id, m), of(first.run_id, m), seed=SEED) for m in forward
    }
    assert any(d.mean for d in expected.values())  # (a sign to get wrong)
    assert expected != forward
    assert compared([second, first])[1].paired == expected  # (in memory)
    RUN_CACHE.clear()  # (a new process: (A, B) only in the files)
    compared([first, second])
    RUN_CACHE.clear()
    assert compared([second, first])[1].paired == expected  # (across processes)
    RUN_CACHE.clear()
    kept = kept_statistics([second, first], data.versions, str(db), files)
    assert kept is not None and kept[1].paired == expected and RUN_CACHE.computed == 0


@pytest.mark.parametrize("changed", ["numpy", "scipy"])
def test_a_file_kept_under_another_library_version_is_not_read(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, changed: str
) -> None:
    """After numpy or scipy is upgraded (the generator, the quantiles, Wilcoxon's test), the
    kept intervals are computed anew: they might no longer be what ``compare-ci`` prints."""
    files = StatisticsFiles(tmp_path / "kept")
    computed = _computed_and_kept(db, files)
    assert _kept(db, files) == computed  # (kept under this version)
    installed = bootstrap.library_version

    def upgraded(name: str) -> str:
        return f"{installed(name)}.post1" if name == changed else installed(name)

    monkeypatch.setattr(bootstrap, "library_version", upgraded)
    assert _kept(db, files) is None
    assert _computed_and_kept(db, files) == computed and RUN_CACHE.computed > 0
    assert _kept(db, files) == computed  # (kept anew under the new version)


def test_a_file_kept_with_other_batches_is_not_read(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = StatisticsFiles(tmp_path / "kept")
    _computed_and_kept(db, files)
    monkeypatch.setattr(bootstrap, "BATCH", bootstrap.BATCH * 2)
    assert _kept(db, files) is None
