"""The HAF suite (spec ``HAF.md``). Its method (prompts, parsing, metrics) is public at
``haf_tui.prompts``, ``haf_tui.parsing`` and ``haf_tui.metrics``; this folder plugs it into
the pipeline: stages, the plan of an instance, records and instance metrics."""

from haf_tui.suites.haf.suite import HAF, HafSuite

__all__ = ["HAF", "HafSuite"]
