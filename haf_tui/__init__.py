"""haf-tui: a terminal workbench for Human-Aligned Faithfulness (HAF) evaluations.

The method itself lives in three pure modules that researchers may import directly:
:mod:`haf_tui.prompts`, :mod:`haf_tui.parsing` and :mod:`haf_tui.metrics` (they live in
:mod:`haf_tui.methods.haf.core`).
"""

__version__ = "0.1.0"
