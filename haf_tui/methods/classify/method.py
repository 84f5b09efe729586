"""classify as one method: label scores p(y | x) by teacher forcing."""

from __future__ import annotations

from pydantic import BaseModel

from haf_tui.methods.classify.reports import CLASSIFY_REPORTS
from haf_tui.methods.classify.suite.suite import CLASSIFY
from haf_tui.methods.classify.views import (
    CLASSIFY_COLUMNS,
    CLASSIFY_HELP,
    CLASSIFY_METRICS,
    LOW_MASS_LIST_MARK,
    LOW_MASS_MARK,
    classify_node,
)
from haf_tui.methods.declare import Method

METHOD: Method[BaseModel] = Method(
    name="classify",
    title="classify",
    description="label scores p(y | x) by teacher forcing "
    "(docs/methods/classify.md#2-label-scores)",
    suite=CLASSIFY,
    default=True,
    metrics=CLASSIFY_METRICS,
    reports=CLASSIFY_REPORTS,
    suggested_reports=("classification",),
    units={stage: "texts" for stage in CLASSIFY.stages},
    list_columns=CLASSIFY_COLUMNS,
    view="label-scores",
    node=classify_node,
    help=CLASSIFY_HELP,
    marks=(LOW_MASS_MARK, LOW_MASS_LIST_MARK),
)
