"""The evaluation methods, one package each (HAF, classify, rationales, judge).

A method's folder holds everything it needs: ``core/`` (its pure method, no I/O),
``settings.py`` (its run settings), ``suite/`` (its plan, records and results),
``reports.py`` (its named reports), ``views.py`` (its metrics, panels and explorer node as
declarations the faces draw) and ``method.py`` (the :class:`~haf_tui.methods.declare.Method`
that gathers them). :func:`haf_tui.methods.loader.load_methods` finds them, where a program
starts: the built-in ones and any package that declares an entry point in the
``haf_tui.methods`` group, in one :class:`~haf_tui.methods.registry.MethodRegistry`.

This file imports nothing, so a method's pure core can be imported on its own.
"""

ENTRY_POINT_GROUP = "haf_tui.methods"
"""The entry point group a package declares its method in (``name = "package.module:METHOD"``)."""

BUILT_IN_MODULES = (
    "haf_tui.methods.haf.method",
    "haf_tui.methods.classify.method",
    "haf_tui.methods.rationales.method",
    "haf_tui.methods.judge.method",
)
"""The built-in methods' modules (each holds its ``METHOD``), in the order a run schedules
them: the loader imports them; methods from entry points come after them, by name."""

BUILT_IN_COMMANDS = (("judge", "the judge suite's meta-evaluation and sensitivity to edits"),)
"""The built-in methods' own ``haf`` sub-commands and their one-line summaries, so that ``haf
--help`` lists them without loading a method (a test holds each to its method's declaration)."""
