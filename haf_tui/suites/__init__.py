"""The evaluation suites a run can hold, by name: the one place a new suite is registered.

A suite is a folder under ``haf_tui/suites/`` with an object that meets
:class:`~haf_tui.suites.base.Suite`; add it to :data:`SUITES` below and every face can run it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from haf_tui.config import RunConfig
from haf_tui.store.records import InstanceRecord
from haf_tui.suites.base import Suite, Task
from haf_tui.suites.classify import CLASSIFY
from haf_tui.suites.haf import HAF
from haf_tui.suites.judge import JUDGE
from haf_tui.suites.rationales import RATIONALES
from haf_tui.vocabulary import HafError

SUITES: Final[dict[str, Suite]] = {
    suite.name: suite for suite in (HAF, CLASSIFY, RATIONALES, JUDGE)
}
"""Every suite, in the order a run schedules them (one line per suite)."""

DEFAULT_SUITES: Final[tuple[str, ...]] = ("haf", "classify")
"""What a new run holds unless told otherwise."""


class UnknownSuiteError(HafError, ValueError):
    """A run named a suite that is not registered."""


def suites_named(names: Sequence[str]) -> list[Suite]:
    """The suites called ``names``, in registry order; a one-line error for an unknown one."""
    unknown = [name for name in names if name not in SUITES]
    if unknown:
        raise UnknownSuiteError(f"unknown suite(s) {unknown}: choose from {list(SUITES)}")
    if not names:
        raise UnknownSuiteError(f"a run needs at least one suite: choose from {list(SUITES)}")
    return [suite for name, suite in SUITES.items() if name in names]


def first_tasks(
    config: RunConfig, instance: InstanceRecord | None = None
) -> list[tuple[Suite, Task]]:
    """The tasks each suite of a run asks of one instance before any answer (``instance``
    None: a placeholder text, for counting them)."""
    instance = instance or InstanceRecord(instance_id="", position=0, text="")
    return [
        (suite, task)
        for suite in suites_named(config.suites)
        for task in suite.plan(instance, config).start()
    ]


def settle_config(config: RunConfig, instances: Sequence[InstanceRecord]) -> RunConfig:
    """The config a new run stores, once each of its suites has filled in what it reads from
    the dataset (a suite may define ``settle(config, instances)``; the rationales suite sets
    Top-Ratio's ratio)."""
    for suite in suites_named(config.suites):
        settle = getattr(suite, "settle", None)
        if callable(settle):
            config = settle(config, instances)
    return config


def run_stages(config: RunConfig) -> list[str]:
    """The stages of a run's suites, in order."""
    return [stage for suite in suites_named(config.suites) for stage in suite.run_stages(config)]


def stage_titles() -> dict[str, str]:
    """Every stage of every suite with its short title, in order."""
    return {stage: title for suite in SUITES.values() for stage, title in suite.titles.items()}


def suite_of_stage(stage: str) -> Suite:
    """The suite whose generations are stored under ``stage``."""
    for suite in SUITES.values():
        if stage in suite.stages:
            return suite
    raise UnknownSuiteError(f"no suite has the stage {stage!r}")


__all__ = [
    "DEFAULT_SUITES",
    "SUITES",
    "Suite",
    "UnknownSuiteError",
    "first_tasks",
    "run_stages",
    "settle_config",
    "stage_titles",
    "suite_of_stage",
    "suites_named",
]
