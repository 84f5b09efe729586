"""The rationales method as one package: token rationales of a toxicity decision."""

from __future__ import annotations

from haf_tui.methods.declare import Method
from haf_tui.methods.rationales.reports import RATIONALE_REPORTS
from haf_tui.methods.rationales.settings import RATIONALE_PARALLEL, RationaleSettings
from haf_tui.methods.rationales.suite.forecast import FORECAST_NOTE, rationale_forecast
from haf_tui.methods.rationales.suite.plan import CLASSIFY, OCCLUSION, PERTURB
from haf_tui.methods.rationales.suite.records import MIGRATIONS as RATIONALES_TABLE
from haf_tui.methods.rationales.suite.suite import RATIONALES
from haf_tui.methods.rationales.suite.tables import RATIONALE_MIGRATIONS
from haf_tui.methods.rationales.views import (
    RATIONALE_COLUMNS,
    RATIONALE_HELP,
    RATIONALE_MARKS,
    RATIONALE_METRICS,
    RATIONALE_PANELS,
    RATIONALE_TABLE_METRICS,
    rationales_node,
)

METHOD: Method[RationaleSettings] = Method(
    name="rationales",
    title="rationales",
    description="which words explain the decision: plausibility against annotators, "
    "faithfulness by removal, complexity (docs/methods/rationales.md)",
    suite=RATIONALES,
    settings=RationaleSettings,
    flag_prefix="rationale",
    metrics=(*RATIONALE_METRICS, *RATIONALE_TABLE_METRICS),
    reports=RATIONALE_REPORTS,
    suggested_reports=(
        "rationales",
        "rationale-attribution",
        "rationale-plausibility",
        "rationale-faithfulness",
        "rationale-complexity",
    ),
    units={CLASSIFY: "texts", OCCLUSION: "texts", PERTURB: "texts"},
    panels=RATIONALE_PANELS,
    list_columns=RATIONALE_COLUMNS,
    workbench="haf_tui.methods.rationales.tui:EXPLORER",
    migrations=(*RATIONALES_TABLE, *RATIONALE_MIGRATIONS),
    help=RATIONALE_HELP,
    marks=RATIONALE_MARKS,
    node=rationales_node,
    posts="every_post",
    n_parallel=RATIONALE_PARALLEL,
    forecast=rationale_forecast,
    forecast_note=FORECAST_NOTE,
    legacy_settings={"rationales": None},
)
