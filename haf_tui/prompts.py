"""HAF's prompts at its public path: the method lives in :mod:`haf_tui.methods.haf.core.prompts`."""

from haf_tui.methods.haf.core.prompts import *  # noqa: F403
