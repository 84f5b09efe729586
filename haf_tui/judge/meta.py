"""Public path of :mod:`haf_tui.methods.judge.core.meta`."""

from haf_tui.methods.judge.core.meta import *  # noqa: F403
