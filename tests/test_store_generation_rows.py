"""A generation's rows as the store writes them: its reasons (spans, token scores, confidence;
NaN stored as NULL) and its parse diagnostics, under the generation's key, in the one
transaction that stores the generation (``store/result_rows.py``)."""

from __future__ import annotations

import math
from pathlib import Path

from haf_tui.store.records import GenerationRecord, InstanceResult, ReasonRecord
from haf_tui.store.result_rows import ROWS_A_STATEMENT
from tests.test_scheduler import _store_with_run


def _generation() -> GenerationRecord:
    reasons = [
        ReasonRecord(0, "it insults", 0, 10, 2, 3, (0.1, 0.2, 0.3), (0.5, 0.25, 0.25), 0.7),
        ReasonRecord(1, "it threatens", 12, 24, None, 0, (), (), math.nan),
    ]
    return GenerationRecord(
        run_id="run", instance_id="i0", stage="justify", sub_index=0, test=None, seed=1,
        prompt_text="p", prompt_tokens=3, output_text="o", finish_reason="stop",
        decision="toxic", decision_source="rule", decision_sentence="It is toxic.",
        decision_start=0, decision_end=12, decision_confidence=0.9, seconds=0.1,
        reasons=reasons, diagnostics=[("no_reasons", "none found"), ("extra", "two")],
    )  # fmt: skip


def test_a_generations_reasons_and_diagnostics_are_stored_under_its_key(tmp_path: Path) -> None:
    store, _ = _store_with_run(tmp_path / "rows.duckdb", 1, 1)
    store.save_generation(_generation())
    reasons = store.query(
        "SELECT instance_id, stage, sub_index, reason_index, text, token_first, nll, relevance, "
        "confidence FROM reasons ORDER BY reason_index"
    )[1]
    assert reasons == [
        ("i0", "justify", 0, 0, "it insults", 2, [0.1, 0.2, 0.3], [0.5, 0.25, 0.25], 0.7),
        ("i0", "justify", 0, 1, "it threatens", None, [], [], None),
    ]
    diagnostics = store.query("SELECT kind, detail FROM parse_diagnostics ORDER BY kind")[1]
    assert diagnostics == [("extra", "two"), ("no_reasons", "none found")]
    store.close()


def test_an_instances_rows_past_one_statement_are_all_stored(tmp_path: Path) -> None:
    """More metric rows than one statement holds (``ROWS_A_STATEMENT``): every row stored,
    each with its own value, NaN as NULL."""
    store, _ = _store_with_run(tmp_path / "many.duckdb", 1, 1)
    many = 2 * ROWS_A_STATEMENT + 1
    result = InstanceResult("run", "i0", "toxic", 1, None)
    result.instance_metrics = [
        (f"m{k}", math.nan if k == many - 1 else k / 4, k) for k in range(many)
    ]
    store.save_instance_result(result)
    rows = store.query("SELECT metric, value, n FROM instance_metrics ORDER BY n")[1]
    assert rows == [(f"m{k}", None if k == many - 1 else k / 4, k) for k in range(many)]
