"""Public path of :mod:`haf_tui.methods.rationales.core.metrics`."""

from haf_tui.methods.rationales.core.metrics import *  # noqa: F403
