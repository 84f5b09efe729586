"""Public path of :mod:`haf_tui.methods.judge.core.parsing`."""

from haf_tui.methods.judge.core.parsing import *  # noqa: F403
