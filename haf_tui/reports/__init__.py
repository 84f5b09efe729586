"""Named SQL queries over the store, the reports built on them, and their output formats.

- :mod:`haf_tui.reports.queries`: the ``queries/NAME.sql`` files (header format, loading)
  and :class:`QueryError`; :mod:`haf_tui.reports.query_running`: running them with their
  parameters (conversion, defaults, run ids: :func:`run_query` / :func:`run_named`).
- :mod:`haf_tui.reports.registry`: :class:`Report`, the :data:`REPORTS` registry
  (:func:`register_report`; the methods' reports handed over by the method registry a
  program installs), the shapers and the built-in reports.
- :mod:`haf_tui.reports.formats`: terminal, CSV, JSON and markdown output (:func:`export`).
- each method's reports live in its package (``haf_tui/methods/<name>/reports``) and are
  handed over when a program installs the method registry
  (:meth:`haf_tui.methods.registry.MethodRegistry.install`).
- :mod:`haf_tui.reports.charts` and :mod:`haf_tui.reports.panel_tables`: text charts and
  report tables as rich renderables (no Textual), which the metric panels draw with.
- :mod:`haf_tui.reports.comparison`: the statistics of comparing runs (bootstrap intervals,
  paired differences, Wilcoxon); :mod:`haf_tui.reports.compare_report` registers
  ``compare-ci`` over them.

Everything public is re-exported here, so ``from haf_tui import reports; reports.X`` works for
each of them.
"""

from __future__ import annotations

from haf_tui.reports import compare_report, formats, queries, query_running, registry
from haf_tui.reports.formats import (
    FORMATS,
    NULL_TEXT,
    export,
    format_number,
    format_value,
    table_width,
    to_csv,
    to_expanded,
    to_json,
    to_markdown,
    to_records,
    to_rich_table,
    to_rich_table_transposed,
)
from haf_tui.reports.queries import (
    PARAM_TYPES,
    QUERIES_DIR,
    QUERIES_ENV,
    NamedQuery,
    QueryError,
    QueryParam,
    Result,
    Row,
    get_query,
    load_queries,
    parse_query,
    queries_dir,
)
from haf_tui.reports.query_running import (
    coerce_param,
    defined_counts,
    first_with_reasons,
    instance_rows,
    resolve_params,
    resolve_run_id,
    rests_on,
    run_named,
    run_query,
    went_on,
    went_on_said,
)
from haf_tui.reports.registry import (
    INSTANCE_LABEL,
    POOLED_LABEL,
    REPORTS,
    SMALL_N,
    Averaged,
    PerInstance,
    Report,
    ReportResult,
    Shaper,
    compare_side_by_side,
    count_columns,
    get_report,
    pooling_rows,
    register_report,
    run_report,
    select_columns,
    summary_reports,
)

__all__ = [
    "FORMATS",
    "INSTANCE_LABEL",
    "NULL_TEXT",
    "PARAM_TYPES",
    "POOLED_LABEL",
    "QUERIES_DIR",
    "QUERIES_ENV",
    "REPORTS",
    "SMALL_N",
    "Averaged",
    "NamedQuery",
    "PerInstance",
    "QueryError",
    "QueryParam",
    "Report",
    "ReportResult",
    "Result",
    "Row",
    "Shaper",
    "coerce_param",
    "compare_report",
    "compare_side_by_side",
    "count_columns",
    "defined_counts",
    "export",
    "first_with_reasons",
    "format_number",
    "format_value",
    "formats",
    "get_query",
    "get_report",
    "instance_rows",
    "load_queries",
    "parse_query",
    "pooling_rows",
    "queries",
    "queries_dir",
    "query_running",
    "register_report",
    "registry",
    "resolve_params",
    "resolve_run_id",
    "rests_on",
    "run_named",
    "run_query",
    "run_report",
    "select_columns",
    "summary_reports",
    "table_width",
    "to_csv",
    "to_expanded",
    "to_json",
    "to_markdown",
    "to_records",
    "to_rich_table",
    "to_rich_table_transposed",
    "went_on",
    "went_on_said",
]
