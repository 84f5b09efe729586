"""Guards for the store (issue 33 §2): a text file the tool writes (the SQL editor's buffers
and ``.sql`` files, a report's files) is flushed to disk before it is renamed into place and
leaves no temporary file when the write fails; DuckDB's memory limit defaults to a quarter of
the machine's memory, at least 512 MiB; flushing one database's pending annotations never
takes another database's (nor drops them as "no run")."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from benchmarks.benchdata import build_bench_db
from haf_tui.store import Store, open_store, write_text_atomically
from haf_tui.store import connection as store_connection
from haf_tui.store.connection import MEMORY_LIMIT_ENV, memory_limit
from haf_tui.store.pending_annotations import annotation, pending, queue, store_pending
from haf_tui.store.safe_files import atomic_target

# ------------------------------------------------------------------ files written whole


def _what_a_descriptor_is(fd: int) -> str:
    return os.readlink(f"/proc/self/fd/{fd}")


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Every ``os.fsync`` (the file it flushed) and ``os.replace`` (from, to), in order."""
    seen: list[tuple[str, str]] = []
    fsync, replace = os.fsync, os.replace

    def recorded_fsync(fd: Any) -> None:
        seen.append(("fsync", _what_a_descriptor_is(fd if isinstance(fd, int) else fd.fileno())))
        fsync(fd)

    def recorded_replace(source: Any, target: Any, **kw: Any) -> None:
        seen.append(("replace", f"{os.fspath(source)} -> {os.fspath(target)}"))
        replace(source, target, **kw)

    monkeypatch.setattr(os, "fsync", recorded_fsync)
    monkeypatch.setattr(os, "replace", recorded_replace)
    return seen


def test_a_text_file_is_flushed_to_disk_before_it_is_renamed_into_place(
    tmp_path: Path, calls: list[tuple[str, str]]
) -> None:
    target = tmp_path / "query.sql"
    target.write_text("old\n")
    write_text_atomically(target, "SELECT 1;\n")
    assert target.read_text() == "SELECT 1;\n"
    kinds = [kind for kind, _ in calls]
    assert "fsync" in kinds and "replace" in kinds, calls
    renamed = kinds.index("replace")
    temporary = calls[renamed][1].split(" -> ")[0]
    assert calls[renamed][1].endswith(f" -> {target}")
    assert ("fsync", temporary) in calls[:renamed], calls  # (the data first, then the name)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["query.sql"]


def test_a_report_file_is_flushed_before_its_rename_too(
    tmp_path: Path, calls: list[tuple[str, str]]
) -> None:
    target = tmp_path / "report.md"
    with atomic_target(target) as temporary:
        temporary.write_bytes(b"# report\n")
    renamed = [kind for kind, _ in calls].index("replace")
    assert ("fsync", calls[renamed][1].split(" -> ")[0]) in calls[:renamed], calls


@pytest.mark.parametrize("failure", ["the text cannot be encoded", "the rename fails"])
def test_a_failed_text_write_leaves_the_old_file_and_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: str
) -> None:
    target = tmp_path / "buffers.json"
    target.write_text("kept\n")
    text = "SELECT 1;\n"
    if failure == "the text cannot be encoded":
        text = "SELECT '\udc80';\n"  # (a lone surrogate: UTF-8 refuses it mid-write)
        error: type[Exception] = UnicodeEncodeError
    else:

        def refuse(*_: Any, **__: Any) -> None:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(os, "replace", refuse)
        error = OSError
    with pytest.raises(error):
        write_text_atomically(target, text)
    assert target.read_text() == "kept\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["buffers.json"]


# ------------------------------------------------------------------ DuckDB's memory


def test_the_memory_limit_defaults_to_a_quarter_of_the_machine_at_least_512_mib(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The variable unset (the other tests set it): 16 GiB of memory gives 4096 MiB, 1 GiB
    gives the floor of 512 MiB; the variable, when set, wins."""
    monkeypatch.delenv(MEMORY_LIMIT_ENV, raising=False)
    pages = {"SC_PAGE_SIZE": 4096}

    def sysconf(name: str) -> int:
        return pages[name]

    monkeypatch.setattr(store_connection.os, "sysconf", sysconf)
    pages["SC_PHYS_PAGES"] = 16 * 2**30 // 4096
    assert memory_limit() == "4096MiB"
    pages["SC_PHYS_PAGES"] = 2**30 // 4096
    assert memory_limit() == "512MiB"
    monkeypatch.setenv(MEMORY_LIMIT_ENV, "2GB")
    assert memory_limit() == "2GB"


def test_a_store_opened_without_the_variable_gets_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(MEMORY_LIMIT_ENV, raising=False)
    expected_mib = int(memory_limit().removesuffix("MiB"))
    assert expected_mib >= 512
    with open_store(tmp_path / "m.duckdb") as store:
        _, rows = store.query("SELECT current_setting('memory_limit')")
    shown = str(rows[0][0])  # (DuckDB's own spelling: "3.8 GiB", "512.0 MiB")
    number, unit = shown.split()
    mib = float(number) * {"KiB": 1 / 1024, "MiB": 1, "GiB": 1024, "TiB": 1024**2}[unit]
    assert mib == pytest.approx(expected_mib, rel=0.05), shown  # (shown to 0.1 GiB)


def test_duckdb_draws_no_progress_bar_over_the_terminal(tmp_path: Path) -> None:
    """A statement over 2 s drew DuckDB's progress bar into ``haf datasets import``'s output
    (and would into the workbench's screen): every store connection turns it off. In a fresh
    interpreter, since DuckDB's default differs under pytest."""
    script = (
        "import sys\n"
        "from haf_tui.store import open_store\n"
        "with open_store(sys.argv[1]) as store:\n"
        "    raw = store.connection.execute(\"SELECT current_setting('enable_progress_bar')\")\n"
        "    print(raw.fetchone()[0])\n"
    )
    shown = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "p.duckdb")],
        capture_output=True, text=True, check=True, timeout=300,
    )  # fmt: skip
    assert shown.stdout.strip() == "False", shown.stderr


# ------------------------------------------------------------------ pending annotations


def _writer(db: Path) -> Callable[[Callable[[Store], None]], None]:
    def write(change: Callable[[Store], None]) -> None:
        with open_store(db) as store:
            change(store)

    return write


def test_flushing_one_databases_annotations_leaves_anothers_queued(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two databases with annotations waiting: storing the first's stores only its own; the
    second's stay queued (not dropped as "no run" in the first) and are stored in theirs."""
    monkeypatch.setenv("HAF_HOME", str(tmp_path / "home"))
    first, second = tmp_path / "a.duckdb", tmp_path / "b.duckdb"
    run_a = build_bench_db(first, n_instances=2, n_runs=1, seed=1)[0]
    run_b = build_bench_db(second, n_instances=2, n_runs=1, seed=2)[0]
    queue(annotation(first, "label", run_a, text="from a"))
    queue(annotation(second, "label", run_b, text="from b"))
    queue(annotation(second, "tags", run_b, text="kept"))
    assert [p.text for p in pending(second)] == ["from b", "kept"]

    stored, dropped = store_pending(first, _writer(first))
    assert [p.text for p in stored] == ["from a"] and dropped == []
    assert pending(first) == []
    assert [p.text for p in pending(second)] == ["from b", "kept"]  # nothing of b lost

    stored, dropped = store_pending(second, _writer(second))
    assert [p.text for p in stored] == ["from b", "kept"] and dropped == []
    assert pending(second) == []
    with open_store(second, read_only=True) as store:
        _, rows = store.query("SELECT label FROM runs WHERE run_id = ?", [run_b])
    assert rows == [("from b",)]
