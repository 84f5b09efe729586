"""Bad files (issue 24 §4): one line, and no good row lost. A database the tool wrote, cut to
half its size, is one line in every read command (``--snapshot`` too, naming the user's file);
a CSV with NUL bytes in two rows and a JSON Lines file with a line that is JSON but not an
object import their good rows and skip the others with the reason; a context too large for
memory, values that are not finite numbers, a statement the SQL console refuses and a foreign
file behind ``--snapshot`` are one line saying what is wrong with what the user gave."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from haf_tui.cli import main
from haf_tui.datasets.streams import read_table
from haf_tui.defaults import embedded_model_path
from haf_tui.inference.gguf import read_gguf_info
from haf_tui.inference.llama_load import load_error
from haf_tui.store import open_store
from haf_tui.store.dataset_catalog import skipped_rows
from haf_tui.store.snapshots import SNAPSHOT_PREFIX
from tests.support import one_line_error
from tests.support.snapshot_store import snapshot_store

TEXTS = [
    f"Row {n} holds a sentence that is long enough to be evaluated as a text." for n in range(8)
]


@pytest.fixture(scope="module")
def half_a_database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store the tool wrote (two runs), cut to half its size."""
    db = tmp_path_factory.mktemp("truncated") / "haf.duckdb"
    snapshot_store(db)
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 2])
    return db


READ_COMMANDS = [
    ["runs"],
    ["report"],
    ["query", "SELECT * FROM runs"],
    ["export", "bench-s7-run1", "--out", "{tmp}/exports"],
    ["judge", "meta", "--run", "bench-s7-run1"],
]


@pytest.mark.parametrize("snapshot", [False, True], ids=["direct", "snapshot"])
@pytest.mark.parametrize("command", READ_COMMANDS, ids=[c[0] for c in READ_COMMANDS])
def test_a_database_cut_to_half_is_one_line_in_every_read_command(
    half_a_database: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    command: list[str],
    snapshot: bool,
) -> None:
    argv = ["--db", str(half_a_database), *(["--snapshot"] if snapshot else [])]
    assert main([*argv, *(part.format(tmp=tmp_path) for part in command)]) == 2
    error = one_line_error(capsys)
    assert "is damaged (truncated or corrupt) and cannot be read" in error, error
    assert str(half_a_database) in error and SNAPSHOT_PREFIX not in error, error


def test_snapshot_errors_name_the_users_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import duckdb

    foreign = tmp_path / "other.duckdb"
    with duckdb.connect(str(foreign)) as con:
        con.execute("CREATE TABLE people (name VARCHAR)")
    assert main(["--db", str(foreign), "--snapshot", "runs"]) == 2
    error = one_line_error(capsys)
    assert f"{foreign} is not a haf-tui database" in error and SNAPSHOT_PREFIX not in error
    ours = tmp_path / "haf.duckdb"
    open_store(ours).close()
    assert main(["--db", str(ours), "--snapshot", "export", "nope"]) == 2
    assert one_line_error(capsys) == f"error: no run 'nope' in {ours}"


def _imported(db: Path) -> tuple[list[str], list[tuple[int, str]]]:
    """The texts and the skipped rows (row, reason) of the one dataset stored in ``db``."""
    with open_store(db, read_only=True) as store:
        (dataset_id,) = [r[0] for r in store.connection.execute("FROM datasets").fetchall()]
        texts = [i.text for i in store.instances(dataset_id)]
        skipped = [(row, reason) for row, reason, _ in skipped_rows(store, dataset_id)]
    return texts, skipped


def test_a_csv_with_nul_bytes_in_two_rows_imports_the_other_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [f"{n},{text}" for n, text in enumerate(TEXTS)]
    rows[2] = rows[2].replace("holds", "hol\x00ds")
    rows[5] = rows[5] + "\x00\x00"
    csv = tmp_path / "nul.csv"
    csv.write_bytes(("id,text\n" + "\n".join(rows) + "\n").encode("ascii"))
    assert read_table(csv).encoding == "utf-8"  # (not UTF-16 because of the NUL bytes)
    db = tmp_path / "haf.duckdb"
    assert main(["--db", str(db), "datasets", "import", str(csv)]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and "6 instances, 2 rows skipped" in captured.out
    texts, skipped = _imported(db)
    assert texts == [t for n, t in enumerate(TEXTS) if n not in (2, 5)]
    assert skipped == [(3, "contains NUL bytes"), (6, "contains NUL bytes")]


def test_a_binary_file_and_a_utf16_file_are_still_told_apart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    utf16 = tmp_path / "u.csv"
    utf16.write_bytes(("text\n" + "\n".join(TEXTS) + "\n").encode("utf-16-le"))
    assert read_table(utf16).encoding == "utf-16-le"
    binary = tmp_path / "b.csv"
    binary.write_bytes(bytes(range(256)) * 64)
    assert main(["--db", str(tmp_path / "haf.duckdb"), "datasets", "import", str(binary)]) == 2
    assert one_line_error(capsys) == f"error: {binary} is a binary file, not text"


def test_a_jsonl_line_that_is_not_an_object_is_a_skipped_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [f'{{"id": {n}, "text": "{text}"}}' for n, text in enumerate(TEXTS[:4])]
    lines.insert(1, "[1, 2, 3]")
    lines.insert(3, '"just a string"')
    lines.append("{broken")
    jsonl = tmp_path / "rows.jsonl"
    jsonl.write_text("\n".join(lines) + "\n")
    db = tmp_path / "haf.duckdb"
    assert main(["--db", str(db), "datasets", "import", str(jsonl)]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and "4 instances, 3 rows skipped" in captured.out
    texts, skipped = _imported(db)
    assert texts == TEXTS[:4]
    assert skipped == [(2, "not a JSON object"), (4, "not a JSON object"), (7, "not valid JSON")]


@pytest.mark.parametrize(
    "option", [["--temperature", "nan"], ["--temperature", "inf"], ["--top-p", "nan"]]
)
def test_a_value_that_is_not_a_finite_number_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: list[str]
) -> None:
    db = tmp_path / "haf.duckdb"
    assert main(["--db", str(db), "run", "--dataset", "sample", *option]) == 2
    assert one_line_error(capsys) == f"error: {option[0]}: Input should be a finite number"


@pytest.mark.parametrize("option", ["--limit", "--until-complete"])
def test_a_count_below_one_is_one_line_naming_its_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str
) -> None:
    """0 is refused, never read as "not given" (--until-complete 0 once ran every text)."""
    db = tmp_path / "haf.duckdb"
    assert main(["--db", str(db), "run", "--limit", "1", option, "0"]) == 2
    assert one_line_error(capsys) == f"error: {option}: Input should be greater than or equal to 1"


@pytest.mark.parametrize(
    ("sql", "named"),
    [("INSTALL httpfs", "INSTALL"), ("force install httpfs", "FORCE INSTALL"), ("LOAD x", "LOAD")],
)
def test_a_refused_statement_is_named_as_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], sql: str, named: str
) -> None:
    db = tmp_path / "haf.duckdb"
    open_store(db).close()
    assert main(["--db", str(db), "query", sql]) == 2
    assert one_line_error(capsys).startswith(
        f"error: refused: {named} statements are not allowed here"
    )


def test_a_context_llama_cpp_cannot_make_says_what_to_lower() -> None:
    """llama-cpp-python's "Failed to create llama_context" (its log's last line is about an
    output buffer) becomes what to lower; other failures keep llama.cpp's last line."""
    info = read_gguf_info(embedded_model_path())
    log = ["llama_context:        CPU  output buffer size =     0.19 MiB"]
    made = load_error(ValueError("Failed to create llama_context"), info, 10_000_000, log)
    assert str(made) == (
        "the context of 10000000 tokens does not fit in memory: lower --n-ctx "
        f"(the model was trained with {info.context_length})"
    )
    other = load_error(ValueError("Failed to load model from file"), info, 4096, ["bad tensor"])
    assert str(other) == f"llama.cpp could not load {info.path}: bad tensor"


LIMITED_HAF = (
    "import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (4 * 2**30, 4 * 2**30)); "
    "from haf_tui.cli import entry; sys.argv[0] = 'haf'; entry()"
)
"""``haf`` in a process that may map 4 GiB of memory at most."""


@pytest.mark.real_model
def test_a_context_too_large_for_memory_is_one_line(tmp_path: Path) -> None:
    db = tmp_path / "haf.duckdb"
    args = ["--db", str(db), "run", "--dataset", "sample", "--limit", "1", "--n-ctx", "10000000"]
    result = subprocess.run(
        [sys.executable, "-c", LIMITED_HAF, *args],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "COLUMNS": "250"},
    )
    trained = read_gguf_info(embedded_model_path()).context_length
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == (  # refused before llama.cpp allocates (issue 33 §3)
        f"error: --n-ctx 10,000,000 is too large: {embedded_model_path().name} was trained "
        f"with {trained:,} tokens; give at most {trained:,}"
    )
    with open_store(db, read_only=True) as store:
        assert store.list_runs() == []
