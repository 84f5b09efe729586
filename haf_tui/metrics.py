"""HAF's metrics at its public path: the method lives in :mod:`haf_tui.methods.haf.core.metrics`."""

from haf_tui.methods.haf.core.metrics import *  # noqa: F403
