"""The demo's texts and decoding, pinned to what docs/demo.md states they were chosen from:
greedy decoding for ``haf run --demo`` alone (real runs keep the paper's temperature), and the
demo's texts starting with those whose greedy JUSTIFY answer went on under every CPU kernel
kind measured (docs/demo.md; the order itself: test_demo_texts.py). A slip in the defaults or
the CLI's fill-in of the demo's settings fails here, without a model."""

from __future__ import annotations

from pathlib import Path

import pytest

from haf_tui.cli import build_parser
from haf_tui.cli.run_command import _config
from haf_tui.config import DecodingSettings
from haf_tui.datasets import builtin_sample, demo_texts
from haf_tui.defaults import (
    DEMO_MAX_TEXTS,
    DEMO_SEED,
    DEMO_TEMPERATURE,
    DEMO_TEXTS_GOING_ON,
    DEMO_UNTIL_COMPLETE,
)
from haf_tui.pipeline.demo import demo_said

DEMO_PAGE = Path(__file__).resolve().parents[1] / "docs" / "demo.md"


def test_the_demo_s_settings_are_the_ones_docs_demo_md_states() -> None:
    page = " ".join(DEMO_PAGE.read_text(encoding="utf-8").split())  # (its lines wrapped)
    assert DEMO_TEMPERATURE == 0.0 and DEMO_SEED == 23
    assert DEMO_UNTIL_COMPLETE == 3 and len(demo_texts().instances) == DEMO_MAX_TEXTS
    going_on = ", ".join(DEMO_TEXTS_GOING_ON[:-1]) + f" and {DEMO_TEXTS_GOING_ON[-1]}"
    assert "temperature 0 (greedy decoding)" in page
    assert f"starts with {going_on}" in page
    assert f"until {DEMO_UNTIL_COMPLETE} have gone through every stage" in page
    assert f"at most all {DEMO_MAX_TEXTS}" in page


def test_the_sample_is_unchanged_by_the_demo_s_texts() -> None:
    """``--dataset sample`` (and the workbench's demo source) keep the 16 texts in the order
    the demo took before it had texts of its own."""
    ids = [instance.instance_id for instance in builtin_sample().instances]
    assert ids[:3] == ["s04", "s05", "s14"] and len(ids) == len(set(ids)) == 16


@pytest.mark.parametrize(
    ("argv", "temperature"),
    [
        (["run", "--demo"], DEMO_TEMPERATURE),  # the demo's: greedy
        (["run", "--demo", "--temperature", "0.6"], 0.6),  # the user's wins
        (["run"], DecodingSettings().temperature),  # a real run: the paper's 0.6
        (["run", "--temperature", "0"], 0.0),
    ],
)
def test_only_the_demo_decodes_greedily_unless_told(argv: list[str], temperature: float) -> None:
    decoding = _config(build_parser().parse_args(argv)).decoding
    assert decoding.temperature == temperature
    assert decoding.seed == (DEMO_SEED if "--demo" in argv else DecodingSettings().seed)


@pytest.mark.parametrize(
    ("limit", "until", "said"),
    [
        (DEMO_MAX_TEXTS, 3, "the demo's 25 texts in order until 3 go through every stage"),
        (40, 3, "the demo's 25 texts in order until 3 go through every stage"),  # (all 25)
        (10, 1, "the demo's first 10 texts in order until 1 goes through every stage"),
        (3, 3, "the demo's first 3 texts in order"),  # (the rule stops nothing)
        (1, 3, "the demo's first text in order"),
    ],
)
def test_the_demo_s_rule_is_said_as_it_runs(limit: int, until: int, said: str) -> None:
    """What the wizard's review says the demo source runs (``haf run --demo``'s rule, with
    the sample size as ``--limit``)."""
    assert demo_said(limit, until) == said
