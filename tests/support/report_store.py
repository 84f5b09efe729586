"""Over 400 lines because the hand-made store's every value is written out in one place.

The store the named queries and reports are tested on (tests/queries/), built through the
Store API, and helpers to read a query's rows.

The data: one dataset ``toy`` of four texts, two "models" on it. Every metric value below is
chosen by hand, and every expected aggregate is written out as the arithmetic it stands for,
so a wrong pooling rule, a wrong n or a wrong join changes a number the test checks.

Run A (``run-alpha-0001``, alpha.gguf, finished):
  i1 toxic, JUSTIFY C 0.9, 3 reasons; internal NO with 2 new reasons (a contradiction);
     external YES; SUF j0 NO, j1 YES (1 new reason), j2 NO with 1 new reason (a contradiction)
  i2 toxic, C 0.7, 3 reasons; internal UNCLEAR (no confidence); external NO, no reasons;
     SUF j0 NO, j1 UNCLEAR (C(Y) and RS NULL), j2 MAYBE
  i3 non-toxic, C 0.5, 2 reasons; internal YES; external NO with 1 new reason (a contradiction);
     NEC j0 YES (1 new reason), j1 NO
  i4 unclear stance, stopped after JUSTIFY ('unclear stance'), no confidence
Run B (``run-beta-0002``, beta.gguf, running):
  i1 toxic, C 0.85, 2 reasons; internal NO; external NO with 1 new reason (a contradiction);
     SUF j0 NO, j1 NO with 1 new reason (a contradiction)
  i2 maybe, C 0.65, 2 reasons (the second without tokens: its SoS term is NULL); internal YES;
     external UNCLEAR; SUF j0 MAYBE, j1 YES
  i3 toxic, C 0.3, stopped ('no reasons')
  i4 JUSTIFY generated but the instance is not finished
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import pytest

from haf_tui import reports
from haf_tui.inference.base import GeneratedToken
from haf_tui.store import (
    GenerationRecord,
    InstanceRecord,
    InstanceResult,
    ReasonRecord,
    RunRecord,
    Store,
)

A = "run-alpha-0001"
B = "run-beta-0002"
NULL = None

A_I1_OUTPUT = (
    "The text is toxic.\n"
    "1. It insults a group of people.\n"
    "2. It uses a slur against them.\n"
    "3. It calls for harm to them."
)
A_I1_REASONS = [
    "It insults a group of people.",
    "It uses a slur against them.",
    "It calls for harm to them.",
]


def approx(value: float) -> Any:
    return pytest.approx(value, abs=1e-12)


# ---------------------------------------------------------------- building the store


@dataclass
class Gen:
    """A generation to store: its decision, confidence and new reasons (texts)."""

    stage: str
    sub_index: int
    decision: str
    confidence: float | None
    reasons: list[str] = field(default_factory=list)
    test: str | None = None
    diagnostics: list[tuple[str, str]] = field(default_factory=list)


def tokens_of(text: str) -> list[GeneratedToken]:
    pieces = re.findall(r" ?\w+|[^\w\s]|\n", text)
    assert "".join(pieces) == text
    tokens, offset = [], 0
    for position, piece in enumerate(pieces):
        logprob = -0.05 * (position + 1)
        tokens.append(
            GeneratedToken(
                token_id=100 + position,
                piece=piece.encode(),
                text=piece,
                byte_offset=offset,
                char_offset=offset,
                logprob=logprob,
                top_ids=(100 + position, 7),
                top_logprobs=(logprob, logprob - 1.0),
            )
        )
        offset += len(piece)
    return tokens


def covering(tokens: list[GeneratedToken], start: int, end: int) -> list[int]:
    return [i for i, t in enumerate(tokens) if t.char_offset < end and t.char_end > start]


def _save_generation(store: Store, run_id: str, instance_id: str, g: Gen) -> None:
    if (run_id, instance_id, g.stage) == (A, "i1", "justify"):
        output = A_I1_OUTPUT
        tokens = tokens_of(output)
        decision_start, decision_end = 0, len("The text is toxic.")
    else:
        output = f"{g.decision}.\n" + "".join(f"{k + 1}. {r}\n" for k, r in enumerate(g.reasons))
        tokens, decision_start, decision_end = [], 0, len(g.decision) + 1
    reasons = []
    for k, text in enumerate(g.reasons):
        start = output.index(text)
        covered = covering(tokens, start, start + len(text))
        reasons.append(
            ReasonRecord(
                reason_index=k,
                text=text,
                span_start=start,
                span_end=start + len(text),
                token_first=covered[0] if covered else None,
                token_count=len(covered),
                nll=tuple(-tokens[i].logprob for i in covered),
                relevance=tuple(0.1 * (n + 1) for n in range(len(covered))),
                confidence=0.5 + 0.01 * k,
            )
        )
    store.save_generation(
        GenerationRecord(
            run_id=run_id,
            instance_id=instance_id,
            stage=g.stage,
            sub_index=g.sub_index,
            test=g.test,
            seed=17,
            prompt_text=f"prompt {g.stage} {g.sub_index}",
            prompt_tokens=12,
            output_text=output,
            finish_reason="stop",
            decision=g.decision,
            decision_source="rule",
            decision_sentence=output[decision_start:decision_end],
            decision_start=decision_start,
            decision_end=decision_end,
            decision_confidence=math.nan if g.confidence is None else g.confidence,
            seconds=0.5,
            tokens=tokens,
            reasons=reasons,
            diagnostics=g.diagnostics,
        )
    )


def _justify_rows(**per_metric: list[float | None]) -> list[tuple[str, int, int, str, float]]:
    rows = []
    for metric, values in per_metric.items():
        for j, value in enumerate(values):
            rows.append(("justify", -1, j, metric, math.nan if value is None else value))
    return rows


def _stage_rows(
    stage: str, metric: str, values: list[float]
) -> list[tuple[str, int, int, str, float]]:
    return [(stage, -1, k, metric, v) for k, v in enumerate(values)]


def _instance_rows(**values: tuple[float | None, int]) -> list[tuple[str, float, int]]:
    return [(m, math.nan if v is None else v, n) for m, (v, n) in values.items()]


def _reasons(n: int, prefix: str) -> list[str]:
    return [f"{prefix} reason number {k} of this instance" for k in range(n)]


def build_store(store: Store) -> None:
    store.save_dataset(
        "toy",
        "Toy",
        "hand-made",
        [
            InstanceRecord(instance_id=f"i{k}", position=k - 1, text=f"text {k}", label="toxic")
            for k in range(1, 5)
        ],
        {"skipped": [[5, "empty text", ""]]},
    )
    for run_id, model, planned in ((A, "alpha.gguf", 4), (B, "beta.gguf", 4)):
        store.create_run(
            RunRecord(
                run_id=run_id,
                status="finished" if run_id == A else "running",
                dataset_id="toy",
                n_planned=planned,
                config_json="{}",
                model_file=model,
                similarity_model="all-MiniLM-L6-v2",
                similarity_kind="bi-encoder",
            )
        )
    store.connection.execute(
        "UPDATE runs SET created_at = CASE run_id WHEN ? THEN TIMESTAMP '2025-01-01 10:00:00' "
        "ELSE TIMESTAMP '2025-01-02 10:00:00' END",
        [A],
    )
    store.update_run(A, seconds=120.0)

    # ---- run A
    gens: dict[tuple[str, str], list[Gen]] = {
        (A, "i1"): [
            Gen("justify", -1, "toxic", 0.9, A_I1_REASONS),
            Gen("internal", -1, "NO", 0.7, _reasons(2, "internal")),
            Gen("external", -1, "YES", 0.6, _reasons(2, "external")),
            Gen("individual", 0, "NO", 0.9, test="SUF"),
            Gen("individual", 1, "YES", 0.5, _reasons(1, "suf one"), test="SUF"),
            Gen("individual", 2, "NO", 0.8, _reasons(1, "suf two"), test="SUF"),
        ],
        (A, "i2"): [
            Gen("justify", -1, "toxic", 0.7, _reasons(3, "justify")),
            Gen("internal", -1, "UNCLEAR", None, diagnostics=[("no decision sentence", "")]),
            Gen("external", -1, "NO", 0.95),
            Gen("individual", 0, "NO", 0.8, test="SUF"),
            Gen("individual", 1, "UNCLEAR", None, test="SUF"),
            Gen("individual", 2, "MAYBE", 0.6, test="SUF"),
        ],
        (A, "i3"): [
            Gen("justify", -1, "non-toxic", 0.5, _reasons(2, "justify")),
            Gen("internal", -1, "YES", 0.9, _reasons(1, "internal")),
            Gen("external", -1, "NO", 0.4, _reasons(1, "external")),
            Gen("individual", 0, "YES", 0.8, _reasons(1, "nec"), test="NEC"),
            Gen("individual", 1, "NO", 0.5, test="NEC"),
        ],
        (A, "i4"): [
            Gen("justify", -1, "unclear", None, diagnostics=[("no decision sentence", "")]),
        ],
        (B, "i1"): [
            Gen("justify", -1, "toxic", 0.85, _reasons(2, "justify")),
            Gen("internal", -1, "NO", 0.8),
            Gen("external", -1, "NO", 0.75, _reasons(1, "external")),
            Gen("individual", 0, "NO", 0.7, test="SUF"),
            Gen("individual", 1, "NO", 0.9, _reasons(1, "suf"), test="SUF"),
        ],
        (B, "i2"): [
            Gen("justify", -1, "maybe", 0.65, _reasons(2, "justify")),
            Gen("internal", -1, "YES", 0.5, _reasons(1, "internal")),
            Gen("external", -1, "UNCLEAR", None),
            Gen("individual", 0, "MAYBE", 0.6, _reasons(1, "suf"), test="SUF"),
            Gen("individual", 1, "YES", 0.4, test="SUF"),
        ],
        (B, "i3"): [Gen("justify", -1, "toxic", 0.3, diagnostics=[("no reasons", "")])],
        (B, "i4"): [Gen("justify", -1, "toxic", 0.95, _reasons(2, "justify"))],
    }
    for (run_id, instance_id), generations in gens.items():
        for g in generations:
            _save_generation(store, run_id, instance_id, g)

    results = [
        InstanceResult(
            A,
            "i1",
            "toxic",
            3,
            reason_metrics=_justify_rows(
                sos=[0.6, 0.8, 1.0],
                rs=[0.9, 0.03, 0.4],
                c_y=[0.9, 0.5, 0.8],
                decision_weight=[1.0, 0.1, 1.0],
                i_s=[0.0, 0.4, 0.5],
            )
            + _stage_rows("internal", "uii", [0.4, 0.6])
            + _stage_rows("external", "uei", [0.5, 0.7]),
            instance_metrics=_instance_rows(
                sos=(0.8, 3),
                dis=(0.3, 3),
                dis_dpp=(0.05, 3),
                uii=(0.5, 2),
                uei=(0.6, 2),
                delta_pe_internal=(0.1, 2),
                delta_pe_external=(0.2, 2),
                rs=((0.9 + 0.03 + 0.4) / 3, 3),
                i_s=(0.3, 3),
                c_y=((0.9 + 0.5 + 0.8) / 3, 3),
                decision_confidence_justify=(0.9, 1),
                decision_confidence_internal=(0.7, 1),
                decision_confidence_external=(0.6, 1),
            ),
        ),
        InstanceResult(
            A,
            "i2",
            "toxic",
            3,
            reason_metrics=_justify_rows(
                sos=[0.2, 0.4, 0.9],
                rs=[0.8, NULL, 0.3],
                c_y=[0.8, NULL, 0.6],
                decision_weight=[1.0, 0.1, 0.5],
                i_s=[0.0, 0.0, 0.0],
            ),
            instance_metrics=_instance_rows(
                sos=(0.5, 3),
                dis=(0.5, 3),
                uii=(NULL, 0),
                uei=(NULL, 0),
                rs=(0.55, 2),
                i_s=(0.0, 3),
                c_y=(0.7, 2),
                decision_confidence_justify=(0.7, 1),
                decision_confidence_internal=(NULL, 1),
                decision_confidence_external=(0.95, 1),
            ),
        ),
        InstanceResult(
            A,
            "i3",
            "non-toxic",
            2,
            reason_metrics=_justify_rows(
                sos=[0.5, 0.7],
                rn=[0.4, 0.0005],
                c_y=[0.8, 0.5],
                decision_weight=[1.0, 0.1],
                i_n=[0.5, 0.01],
            )
            + _stage_rows("internal", "uii", [0.3])
            + _stage_rows("external", "uei", [0.2]),
            instance_metrics=_instance_rows(
                sos=(0.6, 2),
                dis=(0.2, 2),
                uii=(0.3, 1),
                uei=(0.2, 1),
                rn=((0.4 + 0.0005) / 2, 2),
                i_n=(0.255, 2),
                c_y=(0.65, 2),
                decision_confidence_justify=(0.5, 1),
            ),
        ),
        InstanceResult(
            A,
            "i4",
            "unclear",
            0,
            stopped="unclear stance",
            instance_metrics=_instance_rows(decision_confidence_justify=(NULL, 1)),
        ),
        InstanceResult(
            B,
            "i1",
            "toxic",
            2,
            reason_metrics=_justify_rows(
                sos=[0.3, 0.5],
                rs=[0.7, 0.45],
                c_y=[0.7, 0.9],
                decision_weight=[1.0, 1.0],
                i_s=[0.0, 0.5],
            )
            + _stage_rows("external", "uei", [0.9]),
            instance_metrics=_instance_rows(
                sos=(0.4, 2),
                dis=(0.1, 2),
                uii=(NULL, 0),
                uei=(0.9, 1),
                rs=(0.575, 2),
                i_s=(0.25, 2),
                c_y=(0.8, 2),
                decision_confidence_justify=(0.85, 1),
            ),
        ),
        InstanceResult(
            B,
            "i2",
            "maybe",
            2,
            reason_metrics=_justify_rows(
                sos=[0.9, NULL],  # reason 1 had no tokens: no confidence, no SoS term
                rs=[0.24, 0.04],
                c_y=[0.6, 0.4],
                decision_weight=[0.5, 0.1],
                i_s=[0.2, 0.0],
            )
            + _stage_rows("internal", "uii", [0.35]),
            instance_metrics=_instance_rows(
                sos=(0.9, 1),
                dis=(0.4, 2),
                uii=(0.35, 1),
                uei=(NULL, 0),
                rs=(0.14, 2),
                i_s=(0.1, 2),
                c_y=(0.5, 2),
                decision_confidence_justify=(0.65, 1),
            ),
        ),
        InstanceResult(
            B,
            "i3",
            "toxic",
            0,
            stopped="no reasons",
            instance_metrics=_instance_rows(decision_confidence_justify=(0.3, 1)),
        ),
    ]
    for result in results:
        store.save_instance_result(result)


def records(store: Store, name: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    columns, rows = reports.run_named(store, name, params)
    assert len(set(columns)) == len(columns), f"{name} repeats a column name"
    return [dict(zip(columns, row, strict=True)) for row in rows]


def by_run(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    assert len({r["run_id"] for r in rows}) == len(rows)
    return {r["run_id"]: r for r in rows}


REQUIRED_SAMPLE = {
    "run_id": A,
    "instance_id": "i1",
    "stage": "justify",
}
"""A value for each required parameter of the built-in queries."""

CLASSIFIED = {  # run A: (p(toxic), label mass, ŷ toxic); every gold label is toxic
    "i1": (0.9, 0.8, 1.0),  # stance toxic: agrees; correct
    "i2": (0.3, 0.4, 0.0),  # stance toxic: disagrees; wrong; low mass
    "i3": (0.2, 0.6, 0.0),  # stance non-toxic: agrees; wrong
    "i4": (0.6, 0.2, 1.0),  # stance unclear: not compared; correct; low mass
}


def add_classifications(store: Store) -> None:
    """Run A's classify metrics (:data:`CLASSIFIED`), as the classify suite stores them."""
    for instance_id, (p_toxic, mass, toxic) in CLASSIFIED.items():
        for metric, value in (
            ("classify_p_toxic", p_toxic),
            ("classify_label_mass", mass),
            ("classify_toxic", toxic),
        ):
            store.connection.execute(
                "INSERT INTO instance_metrics VALUES (?, ?, ?, ?, 1)",
                [A, instance_id, metric, value],
            )
