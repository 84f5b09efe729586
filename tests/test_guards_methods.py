"""Guards for the methods (issue 33 §2): an installed method that is no ``Method``, or whose
package cannot be imported, is reported by name (never an ``AttributeError`` from deep in the
registry) and left out of the methods; the default explorer node lists only per-instance
metrics; the last round of adaptive RANDOM asks no more masks than ``random_seeds``; and
``better_of`` says "neither" when a difference's interval holds 0."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from importlib import metadata
from typing import Any

import pytest

from haf_tui.config import RunConfig
from haf_tui.methods import registry
from haf_tui.methods.declare import MetricSpec, NodeInput
from haf_tui.methods.loader import ENTRY_POINT_GROUP, load_methods
from haf_tui.methods.rationales.settings import RationaleSettings
from haf_tui.methods.rationales.suite.plan import RANDOM_FIRST, RationalePlan
from haf_tui.methods.rationales.suite.records import rows_of
from haf_tui.methods.registry import MethodLoadError, methods
from haf_tui.reports.compare_report import better_of
from haf_tui.reports.comparison import PairedDifference
from haf_tui.vocabulary import HafError
from tests.test_rationales_suite import drive, finish, instance

# ------------------------------------------------------------------ entry points

NOT_A_METHOD = {"name": "bogus", "suite": None}
"""What a broken plug-in's entry point may name: a dict, not a ``Method``."""


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[metadata.EntryPoint]]:
    """The entry points of the group ``haf_tui.methods`` are the list this yields (the
    session's registry is installed again after the test)."""
    found: list[metadata.EntryPoint] = []
    real = metadata.entry_points

    def entry_points(**selection: Any) -> Any:
        if selection.get("group") == ENTRY_POINT_GROUP:
            return list(found)
        return real(**selection)

    monkeypatch.setattr(metadata, "entry_points", entry_points)
    yield found


def _report_of_loading() -> tuple[dict[str, Any], str]:
    """The methods found and what was said of a plug-in that could not be loaded: the load
    stops with one line (a :class:`MethodLoadError`) or leaves it out and says so (what
    ``left_out`` says, where the registry has it)."""
    try:
        found = dict(load_methods().methods)
    except MethodLoadError as error:
        return dict(methods()), str(error)
    left_out = getattr(registry, "left_out", None)
    said = left_out() if callable(left_out) else []
    return found, " | ".join(said)


@pytest.mark.parametrize(
    "value",
    [
        "tests.test_guards_methods:NOT_A_METHOD",  # no Method
        "no_such_package_for_haf.method:METHOD",  # a package that cannot be imported
    ],
)
def test_a_broken_plugin_is_reported_by_name_and_left_out(
    installed: list[metadata.EntryPoint], value: str
) -> None:
    installed.append(metadata.EntryPoint("bogus", value, ENTRY_POINT_GROUP))
    found, said = _report_of_loading()
    assert "bogus" in said and "\n" not in said, said
    assert "AttributeError" not in said, said  # (a check, not a crash deep in the registry)
    assert "bogus" not in found
    assert {"haf", "classify", "rationales", "judge"} <= set(found)


def test_a_method_load_error_is_a_one_line_haf_error() -> None:
    assert issubclass(MethodLoadError, HafError)


# ------------------------------------------------------------------ the explorer's node


def test_the_default_explorer_node_lists_only_per_instance_metrics() -> None:
    """A method without a node of its own: the node lists its per-instance metrics, not its
    per-reason or per-run ones (those have no value per instance)."""
    specs = (
        MetricSpec("toy_score", "score", "the instance's score"),
        MetricSpec("toy_reason", "reason score", "a reason's score", per="reason"),
        MetricSpec("toy_run", "run score", "the run's score", per="run"),
        MetricSpec("toy_size", "size", "words", better="lower"),
    )
    toy = dataclasses.replace(methods()["classify"], node=None, metrics=specs)
    node = NodeInput("t1", "a text", {"toy_score": 0.25, "toy_reason": 0.5, "toy_run": 1.0}, ())
    lines = toy.node_lines(node)
    assert [line.split()[0] for line in lines] == ["score", "size"], lines
    assert "0.250" in lines[0] and not any("reason" in line or "run" in line for line in lines)


# ------------------------------------------------------------------ adaptive RANDOM


def test_the_last_random_round_asks_no_more_than_random_seeds() -> None:
    """25 masks at most, rounds of 10, never tight: 10, 10, then 5 (not 10)."""
    settings = RationaleSettings.model_validate(
        {"strategy": "top_k", "k": 2, "random_seeds": 25, "random_tolerance": 1e-9}
    )
    config = RunConfig(suites=("rationales",), rationales=settings)
    plan = RationalePlan(instance(), config)
    made = drive(plan)
    assert plan.random_asked == 25 and plan.random_done
    asked = {t.sub_index // 4 for t, _ in made if t.sub_index // 4 >= RANDOM_FIRST}
    assert max(asked) == RANDOM_FIRST + 24
    outcome = finish(made, instance(), config)
    assert [r.seed for r in rows_of(outcome) if r.source == "random"] == list(range(25))
    metrics = {name: value for name, value, _ in outcome.instance_metrics}
    assert metrics["rationale_random_seeds"] == 25


# ------------------------------------------------------------------ better_of


def _difference(low: float | None, high: float | None) -> PairedDifference:
    mean = None if low is None or high is None else (low + high) / 2
    return PairedDifference(10, mean, low, high, 1.0, 0.5, (), ())


@pytest.mark.parametrize(
    ("better", "low", "high", "favoured"),
    [
        ("higher", -0.1, 0.2, "neither"),
        ("lower", -0.1, 0.2, "neither"),
        ("higher", 0.0, 0.2, "neither"),  # (0 on the interval's edge: not shown to differ)
        ("higher", -0.2, 0.0, "neither"),
        ("lower", 0.0, 0.0, "neither"),
        ("higher", 0.1, 0.2, "this"),  # second − first above 0, higher is better
        ("lower", 0.1, 0.2, "first"),
        ("higher", -0.2, -0.1, "first"),
        ("lower", -0.2, -0.1, "this"),
        (None, 0.1, 0.2, None),  # no better direction
        ("higher", None, None, None),  # no interval
    ],
)
def test_better_of_says_neither_when_the_interval_holds_zero(
    better: str | None, low: float | None, high: float | None, favoured: str | None
) -> None:
    assert better_of(better, _difference(low, high)) == favoured
