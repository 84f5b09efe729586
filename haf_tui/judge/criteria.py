"""Public path of :mod:`haf_tui.methods.judge.core.criteria`."""

from haf_tui.methods.judge.core.criteria import *  # noqa: F403
