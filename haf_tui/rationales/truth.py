"""Public path of :mod:`haf_tui.methods.rationales.core.truth`."""

from haf_tui.methods.rationales.core.truth import *  # noqa: F403
