"""Public path of :mod:`haf_tui.methods.judge.core.grammar`."""

from haf_tui.methods.judge.core.grammar import *  # noqa: F403
