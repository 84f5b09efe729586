"""The demo's texts and decoding, pinned to what docs/demo.md states they were chosen from:
greedy decoding for ``haf run --demo`` alone (real runs keep the paper's temperature), and the
built-in sample starting with the texts whose greedy JUSTIFY answer went on under every
perturbation measured on this CPU (not under every kernel build: docs/demo.md). A slip in the
defaults, the sample's order or the CLI's fill-in of the demo's settings fails here, without a
model."""

from __future__ import annotations

from pathlib import Path

import pytest

from haf_tui.cli import build_parser
from haf_tui.cli.run_command import _config
from haf_tui.config import DecodingSettings
from haf_tui.datasets import builtin_sample
from haf_tui.defaults import (
    DEMO_MAX_TEXTS,
    DEMO_SEED,
    DEMO_TEMPERATURE,
    DEMO_TEXTS_GOING_ON,
    DEMO_UNTIL_COMPLETE,
)

DEMO_PAGE = Path(__file__).resolve().parents[1] / "docs" / "demo.md"


def test_the_demo_s_settings_are_the_ones_docs_demo_md_states() -> None:
    page = " ".join(DEMO_PAGE.read_text(encoding="utf-8").split())  # (its lines wrapped)
    assert DEMO_TEMPERATURE == 0.0 and DEMO_SEED == 23
    assert (DEMO_UNTIL_COMPLETE, DEMO_MAX_TEXTS) == (3, 16)
    assert DEMO_TEXTS_GOING_ON == ("s04", "s05", "s14")
    assert "temperature 0 (greedy decoding)" in page
    assert "starts with s04, s05 and s14" in page
    assert f"until {DEMO_UNTIL_COMPLETE} have gone through every stage" in page


def test_the_sample_starts_with_the_texts_that_went_on_under_this_cpu_s_perturbations() -> None:
    ids = [instance.instance_id for instance in builtin_sample().instances]
    assert tuple(ids[: len(DEMO_TEXTS_GOING_ON)]) == DEMO_TEXTS_GOING_ON
    assert len(ids) == len(set(ids)) == DEMO_MAX_TEXTS  # (the demo may reach every text)


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
