"""The token view's status shows every number whole: the top-k alternatives as many as its width
holds, each whole, then how many more; the token's text, not its numbers, is what a narrow
status cuts (at 80×24 the explorer's line read ``' only' -1.…``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rich.cells import cell_len
from textual.widgets import Static

from benchmarks.benchdata import build_bench_db
from haf_tui.tui import create_app
from haf_tui.tui.screens.explorer import ExplorerScreen
from haf_tui.tui.widgets.token_view import Token, TokenView, top_line
from tests.support import settle
from tests.test_tui_explorer import open_run

TOKEN = Token(
    " article",
    -0.2641,
    top_texts=("The", " article", " only", " 日本", "\n"),
    top_logprobs=(-0.0612, -0.2641, -1.3209, -2.5, -10.25),
)
WHOLE = [f"{text!r} {lp:.2f}" for text, lp in zip(TOKEN.top_texts, TOKEN.top_logprobs, strict=True)]


@pytest.mark.parametrize("width", range(0, 90))
def test_the_alternatives_shown_are_whole_in_order_and_the_rest_counted(width: int) -> None:
    line = top_line(TOKEN, width)
    assert line.startswith("top: ")
    more = re.search(r"\(\+(\d+) more\)$", line)
    hidden = int(more.group(1)) if more else 0
    shown = len(WHOLE) - hidden
    assert line == "top: " + "  ".join(WHOLE[:shown] + ([f"(+{hidden} more)"] if hidden else []))
    if cell_len(line) > width:  # (too narrow for even the count: nothing shown but it)
        assert shown == 0
    elif hidden:  # the most that fit: one more would not
        rest = [f"(+{hidden - 1} more)"] if hidden > 1 else []
        assert cell_len("top: " + "  ".join(WHOLE[: shown + 1] + rest)) > width


def test_a_width_that_holds_them_all_shows_them_all_and_no_width_too() -> None:
    everything = "top: " + "  ".join(WHOLE)
    assert top_line(TOKEN, cell_len(everything)) == everything
    assert top_line(TOKEN, None) == everything
    assert top_line(TOKEN, cell_len(everything) - 1).endswith("(+1 more)")
    assert top_line(Token("x", -1.0), 40) == "top: —"


def test_the_first_line_puts_the_numbers_before_the_token_s_text() -> None:
    view = TokenView()
    view.tokens, view.title = [Token("a" * 200, -0.5), TOKEN], "JUSTIFY"
    first = view.status_text(50).plain.splitlines()[0]
    assert first.startswith("token 1/2  logprob -0.500  NLL 0.500  'aaa")


def _status(screen: ExplorerScreen) -> tuple[list[str], int]:
    status = screen.query_one(TokenView).query_one("#tv-status", Static)
    return str(status.render()).splitlines(), status.content_size.width


async def test_the_explorer_s_status_shows_whole_numbers_at_80x24_and_after_a_resize(
    tmp_path: Path,
) -> None:
    db = tmp_path / "haf.duckdb"
    (run_id,) = build_bench_db(db, n_instances=3, n_runs=1, seed=7)
    async with create_app(db).run_test(size=(200, 50)) as pilot:
        screen = await open_run(pilot, run_id)
        wide, wide_width = _status(screen)
        await pilot.resize_terminal(80, 24)
        await settle(pilot)
        narrow, narrow_width = _status(screen)
    assert narrow_width < wide_width
    for lines, width in ((wide, wide_width), (narrow, narrow_width)):
        top = lines[2]
        assert top.startswith("top: ") and "…" not in top and cell_len(top) <= width
        assert re.match(r"token \d+/\d+  logprob -?\d+\.\d{3}  NLL -?\d+\.\d{3}  ", lines[0])
    assert "more)" in narrow[2] and narrow[2] != wide[2]  # (fewer alternatives at 80 columns)
