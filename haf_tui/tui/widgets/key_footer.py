"""The footer every screen uses: Textual's Footer, rebuilt only when the keys it shows change."""

from __future__ import annotations

from typing import Any

from textual.screen import Screen
from textual.widgets import Footer


class KeyFooter(Footer):
    """A Footer that rebuilds its keys (a widget each) only when the keys it would show
    change, not on every bindings signal: Footer rebuilds several times as a screen opens and
    twice per focus change, ~30-60 ms each on a 2-core machine."""

    def __init__(self) -> None:
        super().__init__()
        self._shown: tuple[Any, ...] | None = None

    def bindings_changed(self, screen: Screen[Any]) -> None:
        """Rebuild (as Footer does) only if the shown keys differ."""
        shown = tuple(
            (key, binding.action, binding.description, enabled, tooltip)
            for key, (_, binding, enabled, tooltip) in screen.active_bindings.items()
            if binding.show
        )
        if shown != self._shown:
            self._shown = shown
            super().bindings_changed(screen)
