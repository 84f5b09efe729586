"""The footer every screen uses: Textual's Footer, its key widgets kept and a key it has no
widget for mounted alone (rebuilt only when it has none yet or groups keys), showing only the
keys that fit whole (in the screen's order: the first bound are the most important; ``?`` and
``ctrl+p`` list the rest)."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

Shown = tuple[tuple[str, str, str, bool, str], ...]
"""(key, action, description, enabled, tooltip) of every key the footer shows, one per action
(the first key bound to it, as Footer shows them)."""


class KeyFooter(Footer):
    """A Footer that keeps its keys' widgets: Footer rebuilds them all several times as a
    screen opens, twice per focus change (a text box hides the letter keys) and whenever a key
    comes or goes, ~30-60 ms each on a 2-core machine. Keys that come and go, turn enabled or
    disabled, or change places (a focused text box binds some of the screen's keys too, which
    puts them first) are shown, hidden, restyled or moved in place; a key never shown before
    is mounted alone, in its place. It rebuilds only when it has no keys yet or groups some."""

    def __init__(self) -> None:
        super().__init__()
        self._shown: Shown | None = None

    def compose(self) -> ComposeResult:
        """Footer's keys, each made in the footer's style. Left to itself, a FooterKey starts
        compact: mounted, it takes the compact class, then the footer's binding takes it off
        again, two style updates per key (73 ms of the main thread's time as the app started
        and opened the explorer, on a 2-core machine); its value set before it is mounted, it
        takes the footer's style once (none, for a footer that is not compact)."""
        for widget in super().compose():
            if isinstance(widget, FooterKey) and not widget.has_class("-command-palette"):
                widget.set_reactive(FooterKey.compact, self.compact)  # (the palette's key
            yield widget  # is not bound to the footer's style: compact, as Footer draws it)

    async def recompose(self) -> None:
        """Rebuild the keys, then keep those that fit."""
        await super().recompose()
        self.fit_keys()

    def on_resize(self, event: events.Resize) -> None:
        """Another width: other keys fit."""
        self.fit_keys()

    def key_width(self, key: FooterKey) -> int:
        """The cells ``key`` takes (Footer's paddings: key 0 1, description 0 1 0 0; compact:
        description 0 0 0 1 and a margin of 1)."""
        return cell_len(key.key_display) + cell_len(key.description) + (2 if self.compact else 3)

    def fit_keys(self) -> None:
        """Show, in order, the keys to show that fit whole beside the palette key; hide the
        others (a key is never cut in half)."""
        keys = list(self.query(FooterKey))
        palette = [key for key in keys if key.has_class("-command-palette")]
        room = self.size.width - sum(key.outer_size.width or self.key_width(key) for key in palette)
        wanted = None if self._shown is None else {entry[:3] for entry in self._shown}
        used = 0
        for key in keys:
            if key in palette or key.has_class("-grouped"):
                continue
            if wanted is not None and (key.key, key.action, key.description) not in wanted:
                continue  # (hidden by _show_in_place)
            used += self.key_width(key)
            fits = used <= room or not self.size.width
            if key.display != fits:
                key.display = fits

    def bindings_changed(self, screen: Screen[Any]) -> None:
        """Show the keys in place; rebuild (as Footer does) only when that cannot be done."""
        shown = _shown_keys(screen)
        if shown == self._shown:
            return
        self._shown = shown
        if not (self.is_attached and self._show_in_place(screen, shown)):
            super().bindings_changed(screen)
        else:
            self.fit_keys()

    def _show_in_place(self, screen: Screen[Any], shown: Shown) -> bool:
        """Show exactly ``shown`` with the key widgets there are, a key missing mounted
        alone; False when the footer must be rebuilt (none built yet, grouped keys)."""
        widgets = [w for w in self.query(FooterKey) if not w.has_class("-command-palette")]
        if not widgets or any(w.has_class("-grouped") for w in widgets):
            return False
        by_key = {(w.key, w.action, w.description): w for w in widgets}
        wanted = {(key, action, text): on for key, action, text, on, _ in shown}
        for key, action, text, enabled, tooltip in shown:
            if (key, action, text) not in by_key:
                mounted = self._mount_key(screen, key, action, text, enabled, tooltip)
                if mounted is None:
                    return False
                by_key[key, action, text] = mounted
        order = [by_key[entry] for entry in wanted]
        if order != [w for w in widgets if w in order]:  # the order changed: move, not rebuild
            for before, widget in pairwise(order):
                self.move_child(widget, after=before)
        for entry, widget in by_key.items():
            on = wanted.get(entry)
            widget.display = on is not None
            if on is not None and widget._disabled == on:
                widget._disabled = not on
                widget.set_class(not on, "-disabled")
        self.styles.grid_size_columns = len(wanted)
        return True

    def _mount_key(
        self, screen: Screen[Any], key: str, action: str, text: str, on: bool, tooltip: str
    ) -> FooterKey | None:
        """A key widget as Footer builds it, mounted last (the caller puts it in its place):
        a key that comes and goes (the SQL screen's ``ctrl+c`` while a query runs) costs one
        widget, not a rebuild of all of them (~45 ms on a 2-core machine). None when it
        cannot be mounted (the footer is being removed with its screen)."""
        binding = next(
            b
            for _, b, _, _ in screen.active_bindings.values()
            if (b.key, b.action) == (key, action)
        )
        widget = FooterKey(
            key, self.app.get_key_display(binding), text, action, disabled=not on, tooltip=tooltip
        )
        # the footer's style from the start: a FooterKey is made compact and takes the
        # footer's style only after it is mounted; laid out in between, it kept the compact
        # width and its text was cut by its padding ("Pick run" for "Pick runs")
        widget.set_reactive(FooterKey.compact, self.compact)
        widget.data_bind(compact=Footer.compact)
        palette = [w for w in self.query(FooterKey) if w.has_class("-command-palette")]
        self.mount(widget, before=palette[0] if palette else None)
        return widget if widget.parent is self else None


def _shown_keys(screen: Screen[Any]) -> Shown:
    """What the footer shows for ``screen`` now: the first shown key of each action."""
    seen: set[str] = set()
    shown = []
    for _, binding, enabled, tooltip in screen.active_bindings.values():
        if binding.show and binding.action not in seen:
            seen.add(binding.action)
            shown.append((binding.key, binding.action, binding.description, enabled, tooltip))
    return tuple(shown)
