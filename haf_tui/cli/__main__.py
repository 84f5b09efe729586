"""``python -m haf_tui.cli``."""

from haf_tui.cli import entry

entry()
