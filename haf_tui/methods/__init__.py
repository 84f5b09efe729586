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
