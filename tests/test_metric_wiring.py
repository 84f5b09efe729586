"""The wiring between records and the method: generations and reasons written to a real
DuckDB store, metrics computed by the runner from the records in memory (a fresh run) or from
what it reads back (a resume), with a dictionary similarity double, and every stored SoS, DiS,
UII, UEI, RS, RN, I_S/I_N and C(Y) equal to a value worked out by hand below (HAF.md section
5; g: the dictionary, h = 1 − g).

A mutation of ``haf_tui/suites/haf/instance_metrics.py`` (RS over R instead of R∖r_j, RN with
the first reason's confidence for every j, SoS with g² ...) changes one of these numbers; a
similarity the wiring asks for that the dictionary lacks fails the test (KeyError).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import pytest

from haf_tui.config import RunConfig
from haf_tui.methods.base import Answer
from haf_tui.pipeline.runner import HafRunner, RunSummary
from haf_tui.pipeline.scheduler import InstanceWork
from haf_tui.store import (
    GenerationRecord,
    InstanceRecord,
    ReasonRecord,
    RunRecord,
    Store,
    open_store,
)

# ---------------------------------------------------------------- the instances

D_TOXIC = "you are all worthless and should leave"
R1, R2, R3 = "insults the reader", "tells people to leave", "uses a generalisation"
S1, S2 = "it is demeaning", "calls people worthless"  # internal (Y = YES)
E1 = "the group is a protected class"  # external: Y = NO yet a new reason (a contradiction)
T1 = "it excludes people"  # SUF r2: new reason
U1 = "a reason whose tokens were lost"  # SUF r3 (UNCLEAR): its confidence is undefined

D_NON = "thanks for the detailed schedule"
Q1, Q2 = "it thanks the author", "it is about a bus schedule"
X1 = "no slur appears"  # external (Y = YES)
K1, K2 = "it is polite", "nothing targets a group"  # NEC new reasons

G: dict[tuple[str, str], float] = {
    # toxic: reasons to the input, and to each other
    (R1, D_TOXIC): 0.5, (R2, D_TOXIC): 0.4, (R3, D_TOXIC): 0.1,
    (R1, R2): 0.2, (R1, R3): 0.6, (R2, R3): 0.5,
    # new reasons to every original reason
    (S1, R1): 0.3, (S1, R2): 0.1, (S1, R3): 0.0,
    (S2, R1): 0.9, (S2, R2): 0.5, (S2, R3): 0.5,
    (E1, R1): 0.0, (E1, R2): 1.0, (E1, R3): 0.5,
    (T1, R1): 0.4, (T1, R2): 0.0, (T1, R3): 0.8,
    (U1, R1): 0.7, (U1, R2): 0.7, (U1, R3): 0.7,
    # non-toxic
    (Q1, D_NON): 0.3, (Q2, D_NON): 0.6, (Q1, Q2): 0.25,
    (X1, Q1): 0.5, (X1, Q2): 0.0,
    (K1, Q1): 0.6, (K1, Q2): 0.1,
    (K2, Q1): 0.9, (K2, Q2): 0.4,
}  # fmt: skip


class DictSimilarity:
    """g from the dictionary above, in either order; a pair it lacks is an error."""

    name = "dictionary double"

    def similarities(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        return [G[(a, b)] if (a, b) in G else G[(b, a)] for a, b in pairs]


def _reason(index: int, text: str, confidence: float) -> ReasonRecord:
    count = 0 if math.isnan(confidence) else 2
    return ReasonRecord(index, text, 0, len(text), 0 if count else None, count, (), (), confidence)


def _generation(
    instance: str, stage: str, sub: int, decision: str, c_y: float | None, reasons: list[Any]
) -> GenerationRecord:
    test = None if stage != "individual" else ("NEC" if instance == "n1" else "SUF")
    return GenerationRecord(
        run_id="wiring",
        instance_id=instance,
        stage=stage,
        sub_index=sub,
        test=test,
        seed=1,
        prompt_text="(prompt)",
        prompt_tokens=1,
        output_text="(output)",
        finish_reason="stop",
        decision=decision,
        decision_source="rules",
        decision_sentence=None,
        decision_start=None,
        decision_end=None,
        decision_confidence=math.nan if c_y is None else c_y,
        seconds=0.0,
        reasons=[_reason(i, text, c) for i, (text, c) in enumerate(reasons)],
    )


GENERATIONS = [
    _generation("t1", "justify", -1, "toxic", 0.85, [(R1, 0.9), (R2, 0.6), (R3, 0.3)]),
    _generation("t1", "internal", -1, "YES", 0.7, [(S1, 0.4), (S2, 0.8)]),
    _generation("t1", "external", -1, "NO", 0.95, [(E1, 0.5)]),
    _generation("t1", "individual", 0, "NO", 0.8, []),
    _generation("t1", "individual", 1, "YES", 0.6, [(T1, 0.5)]),
    _generation("t1", "individual", 2, "UNCLEAR", 0.5, [(U1, math.nan)]),
    _generation("n1", "justify", -1, "non-toxic", 0.66, [(Q1, 0.8), (Q2, 0.5)]),
    _generation("n1", "internal", -1, "NO", 0.9, []),
    _generation("n1", "external", -1, "YES", 0.4, [(X1, 0.6)]),
    _generation("n1", "individual", 0, "YES", 0.7, [(K1, 0.9)]),
    _generation("n1", "individual", 1, "MAYBE", 0.5, [(K2, 0.2)]),
]


# ---------------------------------------------------------------- worked by hand

TOXIC: dict[str, float | None] = {
    # SoS = mean_j [0.8·C_j + 0.2·g(r_j, d)] = mean(0.72+0.10, 0.48+0.08, 0.24+0.02)
    "sos": (0.82 + 0.56 + 0.26) / 3,
    # DiS = Σ_{i≠j} h_ij·C_j / 6 with h12 = 0.8, h13 = 0.4, h23 = 0.5:
    # 0.8·0.6 + 0.8·0.9 + 0.4·0.3 + 0.4·0.9 + 0.5·0.3 + 0.5·0.6 = 2.13
    "dis": 2.13 / 6,
    # UII: ΣC = 1.8; div(s1,R) = (0.7·0.9 + 0.9·0.6 + 1.0·0.3)/1.8 = 1.47/1.8,
    # div(s2,R) = (0.1·0.9 + 0.5·0.6 + 0.5·0.3)/1.8 = 0.54/1.8 = 0.3
    "uii": ((0.5 * 0.4 + 0.5 * 1.47 / 1.8) + (0.5 * 0.8 + 0.5 * 0.3)) / 2,
    # UEI (Y = NO, one new reason): div(e1,R) = (1.0·0.9 + 0·0.6 + 0.5·0.3)/1.8 = 1.05/1.8
    "uei": 0.5 * 0.5 + 0.5 * 1.05 / 1.8,
    # Δ-PE = mean −ln C(s) − mean −ln C_j
    "delta_pe_internal": (-math.log(0.4) - math.log(0.8)) / 2
    - (-math.log(0.9) - math.log(0.6) - math.log(0.3)) / 3,
    "delta_pe_external": -math.log(0.5) - (-math.log(0.9) - math.log(0.6) - math.log(0.3)) / 3,
    # RS_1: NO (S = 1), no new reasons (I_S = 0): 1·0.8·1 = 0.8
    # RS_2: YES (S = 0.1); I_S over R∖r2 = {r1, r3} (ΣC = 1.2): div(t1) = (0.6·0.9 + 0.2·0.3)/1.2
    #       = 0.5, I_S = 0.5·0.5 + 0.5·0.5 = 0.5; RS_2 = 0.1·0.6·(1 − 0.5) = 0.03
    # RS_3: UNCLEAR, its only new reason has no confidence: I_S undefined, so RS_3 too
    "rs": (0.8 + 0.03) / 2,
    "i_s": (0.0 + 0.5) / 2,
    "c_y": (0.8 + 0.6 + 0.5) / 3,
    "decision_confidence_justify": 0.85,
    "decision_confidence_internal": 0.7,
    "decision_confidence_external": 0.95,
}
TOXIC_REASONS = {("rs", 0): 0.8, ("rs", 1): 0.03, ("rs", 2): None, ("i_s", 0): 0.0,
                 ("i_s", 1): 0.5, ("i_s", 2): None, ("c_y", 2): 0.5,
                 ("decision_weight", 2): 0.1}  # fmt: skip

NON_TOXIC: dict[str, float | None] = {
    "sos": ((0.64 + 0.06) + (0.40 + 0.12)) / 2,  # 0.61
    "dis": (0.75 * 0.5 + 0.75 * 0.8) / 2,  # h12 = 0.75
    "uii": None,  # Y = NO without new reasons
    # UEI: ΣC = 1.3; div(x1) = (0.5·0.8 + 1.0·0.5)/1.3 = 0.9/1.3
    "uei": 0.5 * 0.6 + 0.5 * 0.9 / 1.3,
    # RN_1 (leave out q1, C = 0.8): I_N = 0.5·0.9 + 0.5·0.6·0.8 = 0.69; N(YES) = 1: 0.7·0.69
    # RN_2 (leave out q2, C = 0.5): I_N = 0.5·0.2 + 0.5·0.4·0.5 = 0.2; N(MAYBE) = 0.5:
    #       0.5·0.5·0.2 = 0.05
    "rn": (0.7 * 0.69 + 0.05) / 2,
    "i_n": (0.69 + 0.2) / 2,
    "c_y": (0.7 + 0.5) / 2,
}
NON_TOXIC_REASONS = {("rn", 0): 0.7 * 0.69, ("rn", 1): 0.05, ("i_n", 0): 0.69, ("i_n", 1): 0.2}


@pytest.fixture(scope="module", params=["in memory", "read back"])
def stored(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    db = tmp_path_factory.mktemp("wiring") / "haf.duckdb"
    config = RunConfig(dataset_id="wiring-data")
    instances = [
        InstanceRecord(instance_id="t1", position=0, text=D_TOXIC, label="toxic"),
        InstanceRecord(instance_id="n1", position=1, text=D_NON, label="non-toxic"),
    ]
    with open_store(db) as store:
        store.save_dataset("wiring-data", "wiring", "test", instances)
        store.create_run(
            RunRecord(
                run_id="wiring",
                status="running",
                dataset_id="wiring-data",
                n_planned=2,
                config_json=config.model_dump_json(),
                model_file="none.gguf",
                similarity_model=DictSimilarity.name,
                similarity_kind="bi-encoder",
            )
        )
        for generation in GENERATIONS:
            store.save_generation(generation)
        runner = HafRunner(store, cast(Any, None), DictSimilarity(), config)
        runner._context = replace(runner._context, run_id="wiring")
        summary = RunSummary("wiring", "running", 0, 2)
        for instance in instances:
            work = InstanceWork(instance, replayed=request.param == "read back")
            work.answers = [
                Answer.of_record(g) for g in GENERATIONS if g.instance_id == instance.instance_id
            ]
            runner._finish_instance("wiring", work, summary)
    return db


def _metrics(store: Store, instance: str) -> dict[str, float | None]:
    rows = store.query(
        "SELECT metric, value FROM instance_metrics WHERE run_id = 'wiring' AND instance_id = ?",
        [instance],
    )[1]
    return dict(rows)


def _reason_metrics(store: Store, instance: str) -> dict[tuple[str, int], float | None]:
    rows = store.query(
        "SELECT metric, reason_index, value FROM reason_metrics "
        "WHERE run_id = 'wiring' AND instance_id = ? AND stage = 'justify'",
        [instance],
    )[1]
    return {(m, i): v for m, i, v in rows}


def _check(stored_values: dict[Any, float | None], expected: dict[Any, float | None]) -> None:
    for key, value in expected.items():
        assert key in stored_values, key
        if value is None:
            assert stored_values[key] is None, (key, stored_values[key])
        else:
            assert stored_values[key] == pytest.approx(value, abs=1e-12), key


def test_a_toxic_instance_with_three_reasons(stored: Path) -> None:
    with open_store(stored, read_only=True) as store:
        _check(_metrics(store, "t1"), TOXIC)
        _check(_reason_metrics(store, "t1"), TOXIC_REASONS)
        assert "rn" not in _metrics(store, "t1")  # SUF path only


def test_a_non_toxic_instance_takes_the_necessity_path(stored: Path) -> None:
    with open_store(stored, read_only=True) as store:
        values = _metrics(store, "n1")
        _check(values, NON_TOXIC)
        _check(_reason_metrics(store, "n1"), NON_TOXIC_REASONS)
        assert "rs" not in values and "i_s" not in values


def test_the_instance_counts_say_how_many_values_were_defined(stored: Path) -> None:
    with open_store(stored, read_only=True) as store:
        rows = store.query(
            "SELECT instance_id, metric, n FROM instance_metrics WHERE run_id = 'wiring' "
            "AND metric IN ('sos', 'uii', 'rs', 'i_s', 'c_y', 'rn')"
        )[1]
    counts = {(i, m): n for i, m, n in rows}
    assert counts == {
        ("t1", "sos"): 3, ("t1", "uii"): 2, ("t1", "rs"): 2, ("t1", "i_s"): 2, ("t1", "c_y"): 3,
        ("n1", "sos"): 2, ("n1", "uii"): 0, ("n1", "rn"): 2, ("n1", "c_y"): 2,
    }  # fmt: skip
