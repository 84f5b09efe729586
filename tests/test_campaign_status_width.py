"""``haf campaign status`` at 80 columns (issue 34 §9): every run id printed whole, so that it
can be copied into ``haf report --run``; the columns that give way are the counts, not the id."""

from __future__ import annotations

import io

from rich.console import Console

from haf_tui.campaign.status import CampaignStatus, CellState
from haf_tui.cli.campaign_command import _print_status

RUN_IDS = ("20261127-101500-ab12", "20261127-113000-cd34", None)


def _status() -> CampaignStatus:
    cells = [
        CellState("SmolLM2-135M-Instruct.Q4_1", "builtin-sample-n8-s23", 0, RUN_IDS[0],
                  "finished", 8, 8, 312, 641.0),
        CellState("Qwen2.5-0.5B-Instruct-Q4_K_M", "hate_explain_50", 1, RUN_IDS[1],
                  "interrupted", 17, 50, 1204, 3321.0, eta_seconds=6120.0),
        CellState("Qwen2.5-0.5B-Instruct-Q4_K_M", "builtin-sample-n8-s23", 2, RUN_IDS[2],
                  "pending", 0, 8, 0, 0.0, eta_seconds=900.0),
    ]  # fmt: skip
    return CampaignStatus("grid of three", cells, 7020.0, True)


def _printed(width: int) -> str:
    console = Console(width=width, file=io.StringIO(), color_system=None, legacy_windows=False)
    _print_status(_status(), console)
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert isinstance(out, str)
    return out


def test_status_at_80_columns_prints_every_run_id_whole() -> None:
    out = _printed(80)
    assert all(len(line) <= 80 for line in out.splitlines())
    for run_id in RUN_IDS[:2]:
        assert run_id is not None and run_id in out, out
    assert "17/50" in out and "interrupted" in out  # the cell's progress stays too
    assert "2/3 cells finished" not in out and "1/3 cells finished" in out


def test_status_at_60_columns_still_keeps_the_run_ids() -> None:
    out = _printed(60)
    for run_id in RUN_IDS[:2]:
        assert run_id is not None and run_id in out, out
