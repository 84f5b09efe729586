"""Every confirmation shows its question and its choices with their keys, over whichever
screen or dialog raised it, at 80×24 and larger (issue 25 §1): until then the box was 4×2 and
empty (``width: auto`` around widgets of fractional width), and the app looked frozen. Each
confirmation is opened the way a researcher opens it, its drawn lines read back, then ``esc``
and ``enter`` (the highlighted, safe choice) go back to what was below, ``y`` does the verb.

The openers are shared with ``tests/test_snapshots_confirm.py`` (the same boxes as pictures)."""

from __future__ import annotations

import shutil
from collections import deque
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.geometry import Region
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import Input, TextArea

from haf_tui.pipeline.runs import RunRequest
from haf_tui.tui import create_app
from haf_tui.tui.app import HafApp
from haf_tui.tui.live import LiveRun, LiveSession, RunJob
from haf_tui.tui.screens.confirm import ConfirmScreen
from haf_tui.tui.screens.explorer import ExplorerScreen
from haf_tui.tui.screens.home import HomeScreen
from haf_tui.tui.screens.monitor import MonitorScreen
from haf_tui.tui.screens.text_editor import TextEditorScreen
from haf_tui.tui.screens.wizard import WizardScreen
from haf_tui.tui.widgets.model_picker import ModelPicker
from tests.support import settle
from tests.support.snapshot_store import snapshot_store

SIZES = {"80x24": (80, 24), "160x48": (160, 48)}

Opener = Callable[[Pilot[Any], str], Awaitable[type[Screen[Any]]]]
"""Opens one confirmation the way a researcher does; returns the class of the screen below."""


def running_session(run_id: str) -> LiveSession:
    """A run of this app going now (fixed lines: no clock)."""
    live = LiveRun(
        "Llama-3.2-3B-Instruct-Q4_K_M · bench-synthetic",
        run_id=run_id,
        status="running",
        instances_done=5,
        instances_total=12,
        generations_done={"justify": 5, "internal": 4, "external": 4},
        generations_expected={"justify": 12, "internal": 11, "external": 11},
        generations_planned={"justify": 12},  # (the follow-ups: estimated)
        current="s006 · justify",
        log=deque(["03:04:05 run started: 12 instances"]),
        log_total=1,
    )
    return LiveSession([RunJob(live.label, RunRequest(resume_run_id=run_id))], [live])


async def _edit_and_leave(pilot: Pilot[Any], key: str) -> type[Screen[Any]]:
    await pilot.press(key)
    await settle(pilot)
    await pilot.press(*"abc", "escape")
    await settle(pilot)
    return TextEditorScreen


async def label_dialog(pilot: Pilot[Any], run_id: str) -> type[Screen[Any]]:
    """Runs list, ``L``, ``abc``, ``esc`` (the issue's steps)."""
    return await _edit_and_leave(pilot, "L")


async def tag_dialog(pilot: Pilot[Any], run_id: str) -> type[Screen[Any]]:
    """Runs list, ``T``, ``abc``, ``esc``."""
    return await _edit_and_leave(pilot, "T")


async def note_editor(pilot: Pilot[Any], run_id: str) -> type[Screen[Any]]:
    """The explorer, ``w``, ``abc``, ``esc``."""
    pilot.app.push_screen(ExplorerScreen(run_id))
    await settle(pilot)
    return await _edit_and_leave(pilot, "w")


async def delete_run(pilot: Pilot[Any], run_id: str) -> type[Screen[Any]]:
    """Runs list, ``D``."""
    await pilot.press("D")
    await settle(pilot)
    return HomeScreen


async def wizard_leave(pilot: Pilot[Any], run_id: str) -> type[Screen[Any]]:
    """``n`` (the wizard), an answer changed, ``esc``."""
    await pilot.press("n")
    await settle(pilot)
    wizard = pilot.app.screen
    picker = wizard.query_one(ModelPicker)  # (the file's size differs between machines)
    picker.entries = picker.entries[:1]
    picker._fill()
    wizard.query_one("#set-temperature", Input).value = "0.9"
    await settle(pilot)
    await pilot.press("escape")
    await settle(pilot)
    return WizardScreen


async def cancel_run(pilot: Pilot[Any], run_id: str) -> type[Screen[Any]]:
    """The monitor of a run going here, ``C``."""
    app = pilot.app
    assert isinstance(app, HafApp)
    app.session = running_session(run_id)
    app.push_screen(MonitorScreen())
    await settle(pilot)
    await pilot.press("C")
    await settle(pilot)
    return MonitorScreen


async def quit_during_run(pilot: Pilot[Any], run_id: str) -> type[Screen[Any]]:
    """``q`` on the monitor while a run started here goes."""
    app = pilot.app
    assert isinstance(app, HafApp)
    app.session = running_session(run_id)
    app._session_worker = app.run_worker(lambda: None, thread=True)  # (a run's worker)
    app.push_screen(MonitorScreen())
    await settle(pilot)
    await pilot.press("q")
    await settle(pilot)
    return MonitorScreen


CONFIRMATIONS: dict[str, tuple[Opener, str, str, str]] = {
    "label": (label_dialog, "Discard your changes?", "discard", "keep editing"),
    "tags": (tag_dialog, "Discard your changes?", "discard", "keep editing"),
    "note": (note_editor, "Discard your changes?", "discard", "keep editing"),
    "delete": (delete_run, "Delete run ", "delete", "keep it"),
    "wizard": (wizard_leave, "Leave the new evaluation?", "leave", "stay"),
    "cancel": (cancel_run, "Cancel the run?", "cancel it", "keep running"),
    "quit": (quit_during_run, "Quit while a run is going?", "quit", "keep running"),
}
"""Each confirmation: its opener, its title, its yes and its no."""


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    path = tmp_path_factory.mktemp("confirm") / "template.duckdb"
    return path, snapshot_store(path)[0]


def fresh_db(template: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the store; no model folder but the test's own (the wizard's list)."""
    monkeypatch.setenv("HAF_HOME", str(tmp_path))
    monkeypatch.delenv("HAF_MODELS_PATH", raising=False)
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "haf.duckdb"
    shutil.copyfile(template[0], db)
    return db


def drawn(pilot: Pilot[Any], box: Region) -> list[str]:
    """The lines drawn now inside ``box`` (a region of the screen)."""
    lines = [strip.text for strip in pilot.app.screen._compositor.render_strips()]
    return [line[box.x : box.right] for line in lines[box.y : box.bottom]]


def words_shown(lines: list[str], text: str) -> bool:
    """Whether ``text`` is drawn, its words in order (wrapped at the box's edge)."""
    joined = " ".join(" ".join(line.replace("│", " ").split()) for line in lines)
    return " ".join(text.split()) in joined


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("which", CONFIRMATIONS)
async def test_every_confirmation_shows_its_question_and_keys(
    template: tuple[Path, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    which: str,
    size: str,
) -> None:
    opener, title, yes, no = CONFIRMATIONS[which]
    db = fresh_db(template, tmp_path, monkeypatch)
    async with create_app(db).run_test(size=SIZES[size]) as pilot:
        await settle(pilot)
        below = await opener(pilot, template[1])
        confirm = pilot.app.screen
        assert isinstance(confirm, ConfirmScreen)
        assert isinstance(pilot.app.screen_stack[-2], below)
        box = confirm.query_one("Vertical").region
        assert box.width >= 40 and box.height >= 6 and pilot.app.screen.region.contains_region(box)
        lines = drawn(pilot, box)
        assert words_shown(lines, title), "\n".join(lines)
        assert words_shown(lines, confirm.question), "\n".join(lines)
        assert words_shown(lines, f"y {yes}") and words_shown(lines, f"n {no}")
        assert words_shown(lines, f"n / esc {no}"), "\n".join(lines)

        await pilot.press("escape")  # esc: no, back to what was below
        await settle(pilot)
        assert isinstance(pilot.app.screen, below)
        if which in {"label", "tags", "note"}:  # the text kept; enter: the highlighted (no)
            editor = pilot.app.screen
            field = editor.query_one("#editor-text")
            text = field.text if isinstance(field, TextArea) else field.value  # type: ignore[attr-defined]
            assert "abc" in text
            await pilot.press("escape")
            await settle(pilot)
            assert isinstance(pilot.app.screen, ConfirmScreen)
            await pilot.press("enter")
            await settle(pilot)
            assert pilot.app.screen is editor
            await pilot.press("escape", "y")  # y: discard, the dialog closes
            await settle(pilot)
            assert not isinstance(pilot.app.screen, TextEditorScreen | ConfirmScreen)


async def test_q_over_a_question_above_an_edit_asks_before_losing_the_text(
    template: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Runs list, ``L``, ``abc``, ``esc``, then ``q``: quitting would lose the label typed, so it
    asks (until then the app quit at once); ``n`` goes back with the text kept, ``y`` quits."""
    db = fresh_db(template, tmp_path, monkeypatch)
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await label_dialog(pilot, template[1])
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("q")
        await settle(pilot)
        asking = app.screen
        assert isinstance(asking, ConfirmScreen) and asking.quit_question
        assert "the text typed in 'Label run" in asking.question
        await pilot.press("q")  # asked once
        await settle(pilot)
        assert app.screen is asking and app.is_running
        await pilot.press("n", "escape")  # back over the discard question, to the dialog
        await settle(pilot)
        assert isinstance(app.screen, TextEditorScreen) and app.screen.text.endswith("abc")
        await pilot.press("escape", "q", "y")  # (q types in the box: from its question)
        await pilot.pause()
        assert not app.is_running
