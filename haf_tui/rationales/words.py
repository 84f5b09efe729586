"""Public path of :mod:`haf_tui.methods.rationales.core.words`."""

from haf_tui.methods.rationales.core.words import *  # noqa: F403
