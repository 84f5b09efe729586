"""Public path of :mod:`haf_tui.methods.rationales.core.parsing`."""

from haf_tui.methods.rationales.core.parsing import *  # noqa: F403
