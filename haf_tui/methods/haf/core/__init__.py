"""HAF's method, pure and public (also at ``haf_tui.prompts``, ``haf_tui.parsing``,
``haf_tui.metrics``): the prompts, the answer parser and the metrics."""
