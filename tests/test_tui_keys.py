"""One key means one thing (issue 18 §8): every key a haf screen, widget or the app binds is
in the vocabulary of ``haf_tui/tui/keys.py`` with its one verb; the moved keys work (explorer
``]`` / ``[``, ``<`` / ``>``, ``t``, ``l``, ``v``; metrics ``space``, ``g``; monitor ``C``
asks); docs/usage.md and the ``?`` help show the table."""

from __future__ import annotations

import importlib
import pkgutil
from collections import defaultdict
from pathlib import Path
from typing import Any

import duckdb
import pytest
from textual.binding import Binding
from textual.dom import DOMNode
from textual.pilot import Pilot
from textual.widgets import Markdown
from textual.widgets._footer import FooterKey

import haf_tui.tui
from benchmarks.benchdata import build_bench_db
from benchmarks.tui_latency import settle as app_settle
from haf_tui.pipeline.runs import RunRequest
from haf_tui.tui import create_app
from haf_tui.tui.keys import KEY_TABLE, action_fits, markdown_table, verb_row
from haf_tui.tui.live import LiveSession, RunJob
from haf_tui.tui.screens.confirm import ConfirmScreen
from haf_tui.tui.screens.explorer import ExplorerScreen
from haf_tui.tui.screens.help import HelpScreen
from haf_tui.tui.screens.monitor import MonitorScreen
from haf_tui.tui.widgets.key_footer import KeyFooter
from haf_tui.tui.widgets.token_view import TokenView

USAGE = Path(__file__).resolve().parents[1] / "docs" / "usage.md"
"""Where the workbench's key table is documented (moved out of the README, issue 34 §2)."""


def haf_classes() -> list[type[DOMNode]]:
    """Every screen, widget and app class of the workbench (each module imported)."""
    for module in pkgutil.walk_packages(haf_tui.tui.__path__, "haf_tui.tui."):
        importlib.import_module(module.name)
    found: dict[str, type[DOMNode]] = {}
    stack: list[type[Any]] = [DOMNode]
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if cls.__module__.startswith("haf_tui.") and issubclass(cls, DOMNode):
            found[f"{cls.__module__}.{cls.__qualname__}"] = cls
    return list(found.values())


def haf_bindings() -> list[tuple[str, str, str]]:
    """(class, key, action) of every binding a workbench class declares itself."""
    rows = []
    for cls in haf_classes():
        own = cls.__dict__.get("BINDINGS", [])
        for binding in Binding.make_bindings(own):
            rows.append((cls.__name__, binding.key, binding.action))
    return rows


def test_the_workbench_classes_are_all_found() -> None:
    names = {cls.__name__ for cls in haf_classes()}
    expected = {"HafApp", "HomeScreen", "ExplorerScreen", "MetricsScreen", "MonitorScreen"}
    assert expected | {"SqlScreen", "WizardScreen", "HelpScreen", "InstanceList"} <= names
    assert len(haf_bindings()) > 40


def test_every_bound_key_has_the_vocabularys_verb() -> None:
    problems = []
    for cls, key, action in haf_bindings():
        row = verb_row(key, cls)
        if row is None:
            problems.append(f"{cls}: {key!r} → {action}: the key is not in haf_tui/tui/keys.py")
        elif not action_fits(row, action):
            problems.append(
                f"{cls}: {key!r} means {row.verb!r} (haf_tui/tui/keys.py) but is bound to "
                f"{action!r}: use another key, or list the action under that verb"
            )
    assert not problems, "\n".join(problems)


def test_no_key_has_two_verbs_on_two_screens() -> None:
    verbs: dict[str, set[str]] = defaultdict(set)
    for cls, key, action in haf_bindings():
        row = verb_row(key, cls)
        if row is not None and not row.only_on and action_fits(row, action):
            verbs[key].add(row.verb)
    assert {key: v for key, v in verbs.items() if len(v) > 1} == {}
    general = [key for row in KEY_TABLE if not row.only_on for key in row.keys]
    assert len(general) == len(set(general)), "a key in two rows of the table"


def test_the_old_double_meanings_are_gone() -> None:
    bound = {(cls, key): action for cls, key, action in haf_bindings()}
    for key in ("n", "p", "c", "r", "s"):
        assert ("ExplorerScreen", key) not in bound, key
    for key in ("r", "p"):
        assert ("MetricsScreen", key) not in bound, key
    assert ("MonitorScreen", "c") not in bound and ("MonitorScreen", "space") not in bound
    assert bound[("MonitorScreen", "C")] == "cancel"
    assert bound[("ExplorerScreen", "right_square_bracket")] == "step(1)"
    assert bound[("MetricsScreen", "g")] == "pooling"


def test_the_usage_page_shows_the_key_table() -> None:
    assert markdown_table() in USAGE.read_text(encoding="utf-8"), (
        "docs/usage.md's workbench section must hold the key table: python -m haf_tui.tui.keys"
    )


# ---------------------------------------------------------------- the moved keys, driven


@pytest.fixture(scope="module")
def synth_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    path = tmp_path_factory.mktemp("keys") / "haf.duckdb"
    return path, build_bench_db(path, n_instances=30, n_runs=1, seed=11)


async def wait(pilot: Pilot[Any]) -> None:
    await pilot.pause()
    await app_settle(pilot)


def stored_order(db: Path, run_id: str) -> list[str]:
    sql = (
        "SELECT i.instance_id FROM instance_results r JOIN instances i USING (instance_id) "
        "WHERE r.run_id = ? ORDER BY i.position"
    )
    with duckdb.connect(str(db), read_only=True) as con:
        return [str(row[0]) for row in con.execute(sql, [run_id]).fetchall()]


async def test_explorer_brackets_step_instances_and_angles_step_tokens(
    synth_db: tuple[Path, list[str]],
) -> None:
    db, (run_id,) = synth_db
    order = stored_order(db, run_id)
    async with create_app(db).run_test(size=(80, 24)) as pilot:
        await wait(pilot)
        pilot.app.push_screen(ExplorerScreen(run_id))
        await wait(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, ExplorerScreen)
        first = screen.current
        assert first in order
        await pilot.press("right_square_bracket")
        await wait(pilot)
        assert screen.current == order[order.index(first) + 1]
        await pilot.press("right_square_bracket", "right_square_bracket", "left_square_bracket")
        await wait(pilot)
        assert screen.current == order[order.index(first) + 2]
        view = screen.query_one("#ex-tokens", TokenView)
        start = view.cursor
        await pilot.press("greater_than_sign", "greater_than_sign", "less_than_sign")
        assert view.cursor == start + 1
        await pilot.press("l")
        assert view.mode == "relevance"
        await pilot.press("v")
        assert view.show_prompt
        await pilot.press("t")  # the stance filter
        await wait(pilot)
        assert "stance toxic" in str(screen.query_one("#ex-shown").render())
        await pilot.press("n", "p", "c", "r", "s")  # no verb here any more: nothing changes
        await wait(pilot)
        assert isinstance(pilot.app.screen, ExplorerScreen) and view.show_prompt


async def test_monitor_capital_c_asks_before_cancelling(
    synth_db: tuple[Path, list[str]],
) -> None:
    db, _ = synth_db
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait(pilot)
        session = LiveSession.of([RunJob("a run", RunRequest(resume_run_id="x"))])
        session.runs[0].status = "running"
        app.session = session
        app.push_screen(MonitorScreen())
        await wait(pilot)
        await pilot.press("c")  # not cancel any more (c is compare)
        await pilot.press("C")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        await pilot.pause()
        assert isinstance(app.screen, MonitorScreen) and not session.control.stop.is_set()
        await pilot.press("C")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        assert isinstance(app.screen, MonitorScreen) and session.control.stop.is_set()
        session.runs[0].status = "interrupted"  # (nothing runs: the app may quit at once)


async def test_help_shows_the_screens_own_keys_first(synth_db: tuple[Path, list[str]]) -> None:
    db, (run_id,) = synth_db
    async with create_app(db).run_test(size=(80, 24)) as pilot:
        await wait(pilot)
        pilot.app.push_screen(ExplorerScreen(run_id))
        await wait(pilot)
        await pilot.press("question_mark")
        await wait(pilot)
        help_screen = pilot.app.screen
        assert isinstance(help_screen, HelpScreen)
        text = help_screen.text
        here = text.index("## Keys here: Explorer")
        assert here < text.index("## Every key")
        own = text[here : text.index("##", here + 3)]
        assert "| `]` | next item | Next |" in own and "| `t` | stance filter | Stance |" in own
        assert "| `?` | help & definitions | Help |" in own
        first_row = own.splitlines()[4]  # (title, blank, header, rule): the screen's own first
        assert first_row == "| `escape` | back / close | Back |"
        assert help_screen.query_one(Markdown).display
        await pilot.press("escape")
        assert isinstance(pilot.app.screen, ExplorerScreen)


@pytest.mark.real_model
async def test_monitor_capital_c_cancels_a_real_run_and_leaves_it_resumable(
    tmp_path: Path, embedded_backend: Any, minilm: Any
) -> None:
    """A run of the embedded model started in the app: p pauses it, C asks, y cancels; the
    database holds the run as interrupted with fewer instances done than planned."""
    from haf_tui.config import DecodingSettings, RunConfig
    from haf_tui.datasets import builtin_sample, sample_dataset
    from haf_tui.pipeline.models import LoadedModels

    db = tmp_path / "haf.duckdb"
    config = RunConfig(decoding=DecodingSettings(max_new_tokens=24), suites=("haf",))
    dataset = sample_dataset(builtin_sample(), 6, 1)
    request = RunRequest(config=config, dataset=dataset)
    request.preloaded = LoadedModels(embedded_backend, minilm)
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.start_runs([RunJob("embedded", request, close_models=False)])
        await pilot.press("p")  # pause before the next generation
        await pilot.pause()
        assert isinstance(app.screen, MonitorScreen) and app.session is not None
        session = app.session
        await pilot.press("C")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen) and session.active
        await pilot.press("y")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not session.active and session.runs[0].status == "interrupted"
        run_id = session.runs[0].run_id
    with duckdb.connect(str(db), read_only=True) as con:
        status, planned = con.execute(
            "SELECT status, n_planned FROM runs WHERE run_id = ?", [run_id]
        ).fetchone() or (None, None)
        (done,) = con.execute(
            "SELECT count(*) FROM instance_results WHERE run_id = ?", [run_id]
        ).fetchone() or (0,)
    assert status == "interrupted" and planned == 6 and done < 6


@pytest.mark.parametrize("width", [80, 200])
async def test_the_footer_shows_whole_keys_only(
    synth_db: tuple[Path, list[str]], width: int
) -> None:
    """The footer shows the screen's keys in order while they fit whole; the rest are in ?."""
    db, (run_id,) = synth_db
    async with create_app(db).run_test(size=(width, 24)) as pilot:
        await wait(pilot)
        pilot.app.push_screen(ExplorerScreen(run_id))
        await wait(pilot)
        footer = pilot.app.screen.query_one(KeyFooter)
        wanted = {entry[:3] for entry in footer._shown or ()}
        keys = [key for key in footer.query(FooterKey) if not key.has_class("-command-palette")]
        keys = [key for key in keys if (key.key, key.action, key.description) in wanted]
        (palette,) = footer.query(".-command-palette")
        shown = [key for key in keys if key.display]
        assert shown == keys[: len(shown)]  # in the screen's order, the first ones
        assert [key.key for key in shown][:2] == ["escape", "right_square_bracket"]
        assert all(key.region.right <= palette.region.x for key in shown)
        if len(shown) < len(keys):  # the next one would not have fit whole
            assert shown[-1].region.right + footer.key_width(keys[len(shown)]) > palette.region.x
        assert len(shown) < len(keys) or width > 80  # 80: the rest in ? and ctrl+p
