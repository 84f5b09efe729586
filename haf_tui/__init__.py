"""haf-tui: a terminal workbench for Human-Aligned Faithfulness (HAF) evaluations.

Each method itself lives in its pure core, which researchers may import directly:
HAF's :mod:`haf_tui.methods.haf.core.prompts`, :mod:`haf_tui.methods.haf.core.parsing` and
:mod:`haf_tui.methods.haf.core.metrics`; the others' in ``haf_tui.methods.<name>.core``.
"""

__version__ = "0.1.0"
