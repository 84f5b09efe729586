"""Public path of :mod:`haf_tui.methods.judge.core.guidelines`."""

from haf_tui.methods.judge.core.guidelines import *  # noqa: F403
