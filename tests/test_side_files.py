"""Side files under the HAF home (issue 33 §3): one that cannot be read (truncated JSON, bad
bytes, a folder, a FIFO, a huge file) is set aside as ``<name>.unreadable-<time>`` with one
line, never written over unread; the SQL screen's buffers and history, the pending
annotations and the wizard's answers each keep the user's other entries and never hang or
crash. Real files, real FIFOs."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from haf_tui.store import pending_annotations, side_files
from haf_tui.store.pending_annotations import annotation, pending, pending_path, queue
from haf_tui.store.side_files import read_side_file, read_tail
from haf_tui.tui import sql_history, wizard_answers


@pytest.fixture(autouse=True)
def _fresh_notices(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with no notice waiting and no file blocked."""
    monkeypatch.setattr(sql_history, "_notices", [])
    monkeypatch.setattr(sql_history, "_blocked", set())


def _aside(folder: Path, name: str) -> list[Path]:
    return sorted(folder.glob(f"{name}.unreadable-*"))


def _read_json(path: Path) -> side_files.SideRead[object]:
    return read_side_file(path, json.loads, what="the test file")


def test_a_good_file_is_read_with_its_stamp(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    path.write_text('{"a": 1}')
    read = _read_json(path)
    assert read.value == {"a": 1} and read.notice is None and not read.blocked
    assert read.stamp == side_files.stamp_of(path)
    assert _read_json(tmp_path / "none.json").value is None  # no file: nothing to say


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b'{"buffers": [{"text": "se', "Unterminated string"),
        (b'{"a": "\xff\xfe"}', "not UTF-8 text (invalid start byte at byte 7)"),
    ],
)
def test_a_file_that_cannot_be_read_is_set_aside_whole(
    tmp_path: Path, content: bytes, reason: str
) -> None:
    path = tmp_path / "f.json"
    path.write_bytes(content)
    read = _read_json(path)
    (aside,) = _aside(tmp_path, "f.json")
    assert read.value is None and not path.exists() and aside.read_bytes() == content
    assert read.notice is not None and "\n" not in read.notice
    assert read.notice.startswith(f"the test file ({path}) could not be read ({reason}")
    assert read.notice.endswith(f"set aside as {aside.name}")
    assert _read_json(path).notice is None  # said once: the next read finds no file


def test_a_folder_in_its_place_is_set_aside(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    path.mkdir()
    (path / "inside").write_text("kept")
    read = _read_json(path)
    (aside,) = _aside(tmp_path, "f.json")
    assert read.notice is not None and "not a regular file" in read.notice
    assert (aside / "inside").read_text() == "kept"


def test_a_fifo_in_its_place_never_blocks(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    os.mkfifo(path)
    done: list[side_files.SideRead[object]] = []
    reader = threading.Thread(target=lambda: done.append(_read_json(path)), daemon=True)
    reader.start()
    reader.join(5)
    assert done, "reading a FIFO blocked"
    assert done[0].notice is not None and "not a regular file" in done[0].notice
    assert len(_aside(tmp_path, "f.json")) == 1


def test_a_file_over_the_cap_is_set_aside_unread(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    with path.open("wb") as handle:
        handle.truncate(300 << 20)  # (300 MB, sparse: nothing read)
    read = read_side_file(path, json.loads, what="the test file", limit=1 << 20)
    assert read.notice is not None and "314,572,800 bytes, more than 1,048,576" in read.notice
    assert _aside(tmp_path, "f.json")[0].stat().st_size == 300 << 20


def test_one_that_cannot_be_set_aside_is_blocked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "f.json"
    path.write_bytes(b"{")

    def refuse(source: object, target: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(side_files.os, "rename", refuse)
    read = _read_json(path)
    assert read.blocked and path.read_bytes() == b"{"
    assert read.notice is not None and read.notice.endswith("left as it is, not written over")


def test_the_tail_starts_at_a_whole_line(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    path.write_bytes(b"first line\nsecond\nthird\n")
    assert read_tail(path, 10) == b"third\n"
    assert read_tail(path, 100) == b"first line\nsecond\nthird\n"


# -- the SQL screen's buffers and history ------------------------------------------------------


def test_truncated_buffers_are_set_aside_not_overwritten_when_the_screen_closes() -> None:
    folder = sql_history.state_dir()
    folder.mkdir(parents=True)
    whole = sql_history.SqlBuffers(
        buffers=[sql_history.SqlBuffer(text=f"SELECT {n}") for n in range(5)]
    ).model_dump_json()
    (folder / sql_history.BUFFERS_FILE).write_text(whole[: len(whole) // 2])
    (folder / sql_history.BUFFER_FILE).write_text("SELECT current")
    kept = sql_history.load_buffers()
    assert [b.text for b in kept.buffers] == ["SELECT current"]
    (notice,) = sql_history.take_notices()
    assert notice.startswith("the SQL screen's buffers (") and "set aside as buffers.json" in notice
    sql_history.save_buffers(kept)  # (the screen closing)
    (aside,) = _aside(folder, sql_history.BUFFERS_FILE)
    assert aside.read_text() == whole[: len(whole) // 2]  # every other buffer still there
    assert sql_history.take_notices() == []


def test_a_bad_byte_in_the_history_costs_its_line_only() -> None:
    sql_history.append_history("SELECT 1", "db")
    path = sql_history.state_dir() / sql_history.HISTORY_FILE
    with path.open("ab") as handle:
        handle.write(b'{"at": "2026-01-01T00:00:00Z", "db": "db", "sql": "\xff"}\n')
    sql_history.append_history("SELECT 2", "db")  # (raised UnicodeDecodeError: no query ran)
    assert [e.sql for e in sql_history.load_history()] == ["SELECT 2", "SELECT 1"]
    assert b"\xff" in path.read_bytes() and sql_history.take_notices() == []


def test_a_history_that_is_a_folder_is_set_aside_and_queries_still_run() -> None:
    path = sql_history.state_dir() / sql_history.HISTORY_FILE
    path.mkdir(parents=True)
    assert sql_history.append_history("SELECT 3", "db").sql == "SELECT 3"
    (notice,) = sql_history.take_notices()
    assert "the query history" in notice and "set aside" in notice
    assert [e.sql for e in sql_history.load_history()] == ["SELECT 3"]


# -- the pending annotations ---------------------------------------------------------------------


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HAF_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(pending_annotations, "_read_cache", {})
    monkeypatch.setattr(pending_annotations, "_notices", [])
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


@pytest.mark.parametrize("damage", ["bad bytes", "folder", "fifo", "huge"])
def test_a_damaged_pending_queue_is_set_aside_once_and_the_queue_goes_on(
    home: Path, tmp_path: Path, damage: str
) -> None:
    path = pending_path()
    if damage == "bad bytes":
        path.write_bytes(b'{"db": "\xff"}\n')
    elif damage == "folder":
        path.mkdir()
    elif damage == "fifo":
        os.mkfifo(path)
    else:
        with path.open("wb") as handle:
            handle.truncate(300 << 20)
    db = tmp_path / "haf.duckdb"
    assert pending(db) == []
    (notice,) = pending_annotations.take_notices()
    assert notice.startswith("the pending annotations (") and "set aside as" in notice
    assert len(_aside(home, pending_annotations.PENDING_FILE)) == 1
    queue(annotation(db, "label", "r1", text="kept"))
    assert [item.text for item in pending(db)] == ["kept"]
    assert pending_annotations.take_notices() == []


def test_an_unchanged_queue_is_not_read_again(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "haf.duckdb"
    queue(annotation(db, "label", "r1", text="one"))
    reads: list[Path] = []
    real = pending_annotations.read_side_file

    def counted(path: Path, *args: object, **kwargs: object) -> object:
        reads.append(path)
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pending_annotations, "read_side_file", counted)
    for _ in range(5):
        assert len(pending(db)) == 1
    assert len(reads) <= 1
    queue(annotation(db, "label", "r2", text="two"))
    assert [item.text for item in pending(db)] == ["one", "two"]


# -- the wizard's answers ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "settings",
    [{"bad key!": "x"}, {"set-suites": {"nested": 1}}, {"": "x"}],
)
def test_wizard_answers_with_a_bad_key_are_set_aside(
    home: Path, settings: dict[str, object]
) -> None:
    path = wizard_answers.answers_path()
    path.write_text(json.dumps({"models": [], "dataset": {}, "settings": settings}))
    answers, notice = wizard_answers.load_answers()
    assert answers is None and notice is not None
    assert notice.startswith("the wizard's last answers (") and "set aside as" in notice
    assert len(_aside(home, wizard_answers.ANSWERS_FILE)) == 1


def test_wizard_answers_as_saved_are_read_back(home: Path) -> None:
    answers = wizard_answers.WizardAnswers(
        models=["m.gguf"],
        dataset=wizard_answers.DatasetAnswers(source="file", columns={"text": "body"}),
        settings={"set-suites": ["haf"], "set-toy_word": "x", "set-greedy": True},
    )
    assert wizard_answers.save_answers(answers) is None
    assert wizard_answers.load_answers() == (answers, None)
