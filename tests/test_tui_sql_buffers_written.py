"""The SQL editor's buffers are written off the UI thread (issue 44 §2: each write flushes two
files to disk, tens of milliseconds of a key such as opening a library query), newest last (a
write that comes after a newer one leaves the newer on disk), and what is not written yet when
the editor closes is written then."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from haf_tui.tui import create_app, sql_history
from haf_tui.tui.widgets.sql_editor import SqlEditor
from tests import test_tui_sql_workbench
from tests.support import settle
from tests.test_tui_sql_keeps_text import MINE, kept_buffers
from tests.test_tui_sql_workbench import editor_of, open_sql

bench_db = test_tui_sql_workbench.bench_db
"""The workbench tests' small synthetic store (the same fixture)."""


def kept_texts() -> list[str]:
    return [str(buffer["text"]) for buffer in kept_buffers()["buffers"]]


async def test_a_library_query_is_kept_by_a_worker_and_an_older_write_never_wins(
    bench_db: tuple[Path, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    db, _ = bench_db
    on_main: list[bool] = []
    real_save = sql_history.save_buffers

    def recorded(kept: sql_history.SqlBuffers) -> None:
        on_main.append(threading.current_thread() is threading.main_thread())
        real_save(kept)

    monkeypatch.setattr(sql_history, "save_buffers", recorded)
    async with create_app(db).run_test(size=(120, 40)) as pilot:
        screen = await open_sql(pilot)
        editor = editor_of(screen)
        editor.load_text(MINE)
        await settle(pilot)
        on_main.clear()
        await screen.pick_query("datasets")  # (a new buffer: the hand-written text kept)
        await settle(pilot)
        datasets = screen.library["datasets"].sql
        assert on_main == [False]  # written once, not on the UI thread
        assert kept_texts() == [MINE, datasets]
        newer = editor.buffers.model_copy(deep=True)
        older = sql_history.SqlBuffers(buffers=[sql_history.SqlBuffer(text="SELECT 'older'")])
        editor._write(newer, editor._keeps + 2)
        editor._write(older, editor._keeps + 1)  # (its worker came late)
        assert kept_texts() == [MINE, datasets]


async def test_buffers_not_written_yet_are_written_when_the_editor_closes(
    bench_db: tuple[Path, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    db, _ = bench_db
    async with create_app(db).run_test(size=(120, 40)) as pilot:
        screen = await open_sql(pilot)
        editor = editor_of(screen)
        editor.load_text(MINE)
        await settle(pilot)
        late: list[Any] = []
        monkeypatch.setattr(SqlEditor, "run_worker", lambda self, work, **_: late.append(work))
        await screen.pick_query("datasets")
        await settle(pilot)
        editor.keep()  # (what the typing pause does: no write is waiting for a timer now)
        assert late and editor._keep_timer is None  # handed to a worker that has not run
        datasets = screen.library["datasets"].sql
        pilot.app.pop_screen()  # (escape would write it too: it keeps the text on the way)
        await settle(pilot)
    assert kept_texts() == [MINE, datasets]
