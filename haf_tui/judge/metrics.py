"""Public path of :mod:`haf_tui.methods.judge.core.metrics`."""

from haf_tui.methods.judge.core.metrics import *  # noqa: F403
