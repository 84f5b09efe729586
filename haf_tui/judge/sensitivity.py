"""Public path of :mod:`haf_tui.methods.judge.core.sensitivity`."""

from haf_tui.methods.judge.core.sensitivity import *  # noqa: F403
