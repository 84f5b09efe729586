"""Public path of :mod:`haf_tui.methods.classify.core.labels`."""

from haf_tui.methods.classify.core.labels import *  # noqa: F403
