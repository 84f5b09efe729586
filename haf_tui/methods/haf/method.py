"""HAF as one method: its suite, settings, metrics, reports and views."""

from __future__ import annotations

from haf_tui.methods.declare import Method
from haf_tui.methods.haf.reports import HAF_REPORTS
from haf_tui.methods.haf.settings import HafSettings
from haf_tui.methods.haf.suite.forecast import FORECAST_NOTE, haf_forecast
from haf_tui.methods.haf.suite.suite import HAF
from haf_tui.methods.haf.views import HAF_COLUMNS, HAF_METRICS, HAF_PANELS, JUSTIFY_CONFIDENCE

METHOD: Method[HafSettings] = Method(
    name="haf",
    title="HAF",
    description="Human-Aligned Faithfulness: JUSTIFY, UPHOLD-REASON, UPHOLD-STANCE and six "
    "metrics (docs/methods/haf.md)",
    suite=HAF,
    settings=HafSettings,
    flag_prefix="haf",
    default=True,
    metrics=(*HAF_METRICS, JUSTIFY_CONFIDENCE),
    reports=HAF_REPORTS,
    summary_reports=("table1", "table2", "table4"),
    panels=HAF_PANELS,
    list_columns=HAF_COLUMNS,
    view="stances",
    posts="paper",
    forecast=haf_forecast,
    forecast_note=FORECAST_NOTE,
    legacy_settings={
        "prompting": "prompting",
        "stages": "stages",
        "parse_rules": "parse_rules",
        "weights": "weights",
    },
)
