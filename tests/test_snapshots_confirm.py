"""Each confirmation over the screen or dialog that raises it, at 80×24 and 160×48 (issue 25
§1): the question and the choices with their keys, drawn. On the seeded synthetic store, dark
theme, no clock. ``pytest --snapshot-update -k NAME`` redraws one after a deliberate change."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from haf_tui.tui import create_app
from tests.support import settle
from tests.test_tui_confirm import CONFIRMATIONS, SIZES, fresh_db, template  # noqa: F401


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("which", CONFIRMATIONS)
def test_confirmation(
    snap_compare: Any,
    template: tuple[Path, str],  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    which: str,
    size: str,
) -> None:
    db = fresh_db(template, tmp_path, monkeypatch)
    opener = CONFIRMATIONS[which][0]

    async def prepare(pilot: Pilot[Any]) -> None:
        pilot.app.theme = "textual-dark"
        await settle(pilot)
        await opener(pilot, template[1])
        await settle(pilot)
        await pilot.pause()

    assert snap_compare(create_app(db), terminal_size=SIZES[size], run_before=prepare)
