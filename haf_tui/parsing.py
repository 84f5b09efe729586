"""HAF's parsing at its public path: the method lives in :mod:`haf_tui.methods.haf.core.parsing`."""

from haf_tui.methods.haf.core.parsing import *  # noqa: F403
