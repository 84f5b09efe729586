"""Public path of :mod:`haf_tui.methods.rationales.core.prompts`."""

from haf_tui.methods.rationales.core.prompts import *  # noqa: F403
