"""Public path of :mod:`haf_tui.methods.judge.core.prompts`."""

from haf_tui.methods.judge.core.prompts import *  # noqa: F403
