"""The footer moves its keys in place when their order changes (a focused text box binds some
of the screen's keys too, which puts them first), instead of rebuilding every key widget."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Input, OptionList
from textual.widgets._footer import FooterKey

from haf_tui import reports
from haf_tui.tui import create_app
from haf_tui.tui.widgets.key_footer import KeyFooter, _shown_keys
from tests.support import settle, sql_screen
from tests.test_tui_sql_workbench import open_sql

bench_db = sql_screen.bench_db
"""A store of its own for each test (two synthetic runs of four instances)."""


@pytest.fixture
def rebuilds(monkeypatch: pytest.MonkeyPatch) -> list[KeyFooter]:
    """The footers rebuilt (every key widget composed again), one entry a rebuild."""
    found: list[KeyFooter] = []
    recompose = KeyFooter.recompose

    async def counted(self: KeyFooter) -> None:
        found.append(self)
        await recompose(self)

    monkeypatch.setattr(KeyFooter, "recompose", counted)
    return found


def footer_keys(footer: KeyFooter) -> list[tuple[str, str, str]]:
    """The keys the footer shows, in its order."""
    return [
        (key.key, key.action, key.description)
        for key in footer.query(FooterKey)
        if key.display and not key.has_class("-command-palette")
    ]


async def test_a_pick_that_focuses_the_form_moves_the_keys_without_a_rebuild(
    bench_db: Path, rebuilds: list[KeyFooter]
) -> None:
    async with create_app(bench_db).run_test(size=(200, 40)) as pilot:
        screen = await open_sql(pilot)
        footer = screen.query_one(KeyFooter)
        library = screen.query_one("#library", OptionList)
        library.focus()
        await settle(pilot)
        before = footer_keys(footer)
        built = len(rebuilds)
        library.highlighted = list(reports.load_queries()).index("stance_distribution")
        await pilot.press("enter")  # the form's Input takes the focus: ctrl+e moves
        await settle(pilot)
        assert isinstance(pilot.app.focused, Input)
        wanted = [entry[:3] for entry in _shown_keys(screen)]
        shown = footer_keys(footer)
        assert shown != before  # the order did change ...
        assert shown == wanted[: len(shown)] and len(shown) == len(wanted)  # ... as wanted
        assert len(rebuilds) == built  # ... with the widgets there were


async def test_a_key_that_appears_is_mounted_alone_not_by_a_rebuild(
    bench_db: Path, rebuilds: list[KeyFooter]
) -> None:
    """ctrl+c (cancel) shows while a query runs: one key widget mounted in its place, the
    others kept (a rebuild of them all cost ~45 ms of the first query's key)."""
    async with create_app(bench_db).run_test(size=(200, 40)) as pilot:
        screen = await open_sql(pilot)
        footer = screen.query_one(KeyFooter)
        kept = set(footer.query(FooterKey))
        built = len(rebuilds)
        assert "cancel_query" not in [action for _, action, _ in footer_keys(footer)]
        for busy in (True, False, True):  # a query runs (and is said to), has run, runs again
            screen.set_busy(busy)
            if busy:
                screen.say_running()
            await settle(pilot)
            wanted = [entry[:3] for entry in _shown_keys(screen)]
            assert ("cancel_query" in [action for _, action, _ in wanted]) == busy
            assert footer_keys(footer) == wanted  # every key, in the screen's order
        assert len(rebuilds) == built and kept <= set(footer.query(FooterKey))
        cancel = next(key for key in footer.query(FooterKey) if key.action == "cancel_query")
        assert (cancel.key_display, cancel.description) == ("^c", "Cancel query")
        assert not cancel.has_class("-disabled") and footer.styles.grid_size_columns == len(wanted)


async def test_a_key_mounted_alone_has_the_footers_style_before_it_is_laid_out(
    bench_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A FooterKey is made compact and takes the footer's style only once mounted: laid out
    in between (under load), it kept the compact width and its padding cut its text (the
    metrics screen's "space Pick run" for "Pick runs" in a snapshot)."""
    styles: list[tuple[bool, bool]] = []
    mount_key = KeyFooter._mount_key

    def recorded(self: KeyFooter, *args: Any) -> FooterKey | None:
        widget = mount_key(self, *args)
        if widget is not None:
            styles.append((widget.compact, self.compact))
        return widget

    monkeypatch.setattr(KeyFooter, "_mount_key", recorded)
    async with create_app(bench_db).run_test(size=(200, 40)) as pilot:
        screen = await open_sql(pilot)
        screen.set_busy(True)
        screen.say_running()  # ctrl+c shows: mounted alone
        await settle(pilot)
        assert styles, "no key was mounted alone"
        assert all(key == footer for key, footer in styles)


class _Keys(App[None]):
    """An app whose footer shows a few keys (``compact``: the footer's style)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(key, f"key_{key}", f"Key {key}") for key in "abcdef"
    ]

    def __init__(self, compact: bool) -> None:
        super().__init__()
        self.compact = compact

    footer_class: type[KeyFooter] = KeyFooter

    def compose(self) -> ComposeResult:
        footer = self.footer_class()
        footer.compact = self.compact
        yield footer


@pytest.mark.parametrize("compact", [False, True])
async def test_the_keys_are_built_in_the_footers_style_not_restyled_once_mounted(
    compact: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    styled: dict[str, list[bool]] = {}  # (key → each style it took: its class changed)
    watch = FooterKey._watch_compact

    def noted(self: FooterKey, value: bool) -> None:
        if self.has_class("-compact") != value:
            styled.setdefault(self.key, []).append(value)
        watch(self, value)

    monkeypatch.setattr(FooterKey, "_watch_compact", noted)
    async with _Keys(compact).run_test(size=(120, 10)) as pilot:
        await settle(pilot)
        keys = [key for key in pilot.app.query(FooterKey) if key.key in "abcdef"]
        assert len(keys) == 6
        assert all(key.compact == compact == key.has_class("-compact") for key in keys)
        palette = pilot.app.query_one("FooterKey.-command-palette", FooterKey)
        assert palette.compact and palette.has_class("-compact")  # (as Footer draws it)
    # each key styled once at most, in the footer's style (never the other first, then back)
    assert all(styled.get(key, []) in ([], [compact]) for key in "abcdef")


class _Composed(KeyFooter):
    """A footer noting each key's style as composed (before it is mounted)."""

    composed: ClassVar[dict[str, bool | None]] = {}

    def compose(self) -> ComposeResult:
        for widget in super().compose():
            if isinstance(widget, FooterKey):  # (its value as set, without initializing it)
                _Composed.composed[widget.key] = getattr(widget, "_reactive_compact", None)
            yield widget


class _ComposedKeys(_Keys):
    footer_class = _Composed


@pytest.mark.parametrize("compact", [False, True])
async def test_each_key_is_composed_with_the_footers_style_the_palettes_left_alone(
    compact: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_Composed, "composed", {})
    async with _ComposedKeys(compact).run_test(size=(120, 10)) as pilot:
        await settle(pilot)
    palette = [key for key in _Composed.composed if key not in "abcdef"]
    assert len(palette) == 1 and _Composed.composed.pop(palette[0]) is None
    assert _Composed.composed == dict.fromkeys("abcdef", compact)
