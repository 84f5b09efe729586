"""Public path of :mod:`haf_tui.methods.judge.core.scores`."""

from haf_tui.methods.judge.core.scores import *  # noqa: F403
