"""The judge as one method: an 8-criterion LLM judge of explanations and its meta-evaluation."""

from __future__ import annotations

from haf_tui.config import RunConfig
from haf_tui.methods.declare import Method, RateUnit
from haf_tui.methods.judge.commands import JUDGE_COMMAND
from haf_tui.methods.judge.reports.tables import JUDGE_REPORTS
from haf_tui.methods.judge.settings import JudgeSettings, judge_settings
from haf_tui.methods.judge.suite.plan import STAGE
from haf_tui.methods.judge.suite.suite import JUDGE
from haf_tui.methods.judge.views import JUDGE_COLUMNS, JUDGE_METRICS, JUDGE_PANELS
from haf_tui.methods.judge.views.help import JUDGE_HELP, JUDGE_MARKS


def judge_units(config: RunConfig) -> dict[str, RateUnit]:
    """Constrained: labels scored by teacher forcing (texts); free: generated answers (tokens)."""
    return {STAGE: "tokens" if judge_settings(config).mode == "free" else "texts"}


METHOD: Method[JudgeSettings] = Method(
    name="judge",
    title="judge",
    description="an 8-criterion LLM judge of explanation quality and its meta-evaluation "
    "(docs/methods/judge.md)",
    suite=JUDGE,
    settings=JudgeSettings,
    flag_prefix="judge",
    metrics=JUDGE_METRICS,
    reports=JUDGE_REPORTS,
    suggested_reports=("judge",),
    units=judge_units,
    panels=JUDGE_PANELS,
    list_columns=JUDGE_COLUMNS,
    workbench="haf_tui.methods.judge.tui:EXPLORER",
    dataset_formats=("haf_tui.methods.judge.datasets.acorn:ACORN_FORMAT",),
    run_datasets=(
        "haf_tui.methods.judge.datasets.explanations:EXPLANATIONS",
        "haf_tui.methods.judge.datasets.explanations:EDITS",
    ),
    help=JUDGE_HELP,
    marks=JUDGE_MARKS,
    commands=(JUDGE_COMMAND,),
    needs="a judge run needs a dataset of explanations: run:ID",
    legacy_settings={"judge": None},
)
