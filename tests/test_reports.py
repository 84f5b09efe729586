"""Named queries and reports over a real DuckDB store holding two hand-made runs.

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

import csv
import io
import json
import math
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from haf_tui import reports
from haf_tui.inference.base import GeneratedToken
from haf_tui.reports import QueryError
from haf_tui.store import (
    GenerationRecord,
    InstanceRecord,
    InstanceResult,
    ReasonRecord,
    RunRecord,
    Store,
    open_store,
)
from haf_tui.store.annotations import save_note
from tests.support.judge_runs import JUDGE_RUN, store_judge_run
from tests.support.rationale_runs import store_rationale_run

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


def _tokens(text: str) -> list[GeneratedToken]:
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


def _covering(tokens: list[GeneratedToken], start: int, end: int) -> list[int]:
    return [i for i, t in enumerate(tokens) if t.char_offset < end and t.char_end > start]


def _save_generation(store: Store, run_id: str, instance_id: str, g: Gen) -> None:
    if (run_id, instance_id, g.stage) == (A, "i1", "justify"):
        output = A_I1_OUTPUT
        tokens = _tokens(output)
        decision_start, decision_end = 0, len("The text is toxic.")
    else:
        output = f"{g.decision}.\n" + "".join(f"{k + 1}. {r}\n" for k, r in enumerate(g.reasons))
        tokens, decision_start, decision_end = [], 0, len(g.decision) + 1
    reasons = []
    for k, text in enumerate(g.reasons):
        start = output.index(text)
        covered = _covering(tokens, start, start + len(text))
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


def _build(store: Store) -> None:
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


@pytest.fixture(autouse=True)
def builtin_queries(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tests read the repository's queries/, whatever the environment says."""
    monkeypatch.delenv(reports.QUERIES_ENV, raising=False)


@pytest.fixture(scope="module")
def template_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The hand-made store, built once per module through the Store API."""
    path = tmp_path_factory.mktemp("reports") / "template.duckdb"
    with open_store(path) as opened:
        _build(opened)
    return path


@pytest.fixture
def store(tmp_path: Path, template_db: Path) -> Iterator[Store]:
    """A private copy of the hand-made store (a test may change it)."""
    path = tmp_path / "haf.duckdb"
    shutil.copyfile(template_db, path)
    with open_store(path) as opened:
        yield opened


def records(store: Store, name: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    columns, rows = reports.run_named(store, name, params)
    assert len(set(columns)) == len(columns), f"{name} repeats a column name"
    return [dict(zip(columns, row, strict=True)) for row in rows]


def by_run(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    assert len({r["run_id"] for r in rows}) == len(rows)
    return {r["run_id"]: r for r in rows}


# ---------------------------------------------------------------- every query file

REQUIRED_SAMPLE = {
    "run_id": A,
    "instance_id": "i1",
    "stage": "justify",
}
QUERY_SAMPLE: dict[str, dict[str, Any]] = {  # the judge's readers: their run and instances
    "judge_codes": {"judge_run": JUDGE_RUN},
    "judge_runs": {"datasets": [f"explanations-{A}"]},
    "judge_judgements": {"judge_runs": [JUDGE_RUN], "ids": ["i1", "i2"]},
}


@pytest.mark.parametrize("path", sorted(reports.QUERIES_DIR.glob("*.sql")), ids=lambda p: p.stem)
def test_every_query_file_has_a_header_and_runs(path: Path, store: Store) -> None:
    query = reports.parse_query(path.read_text(encoding="utf-8"), path)
    assert query.name == path.stem
    assert query.title and query.title != query.name
    assert len(query.description) > 40
    assert query.params == tuple(p.name for p in query.param_specs)
    sample = REQUIRED_SAMPLE | QUERY_SAMPLE.get(query.name, {})
    required = {p.name: sample[p.name] for p in query.param_specs if p.required}
    required |= QUERY_SAMPLE.get(query.name, {})
    if query.name == "classification":
        _add_classifications(store)
    if query.name.startswith("rationale_"):  # the rationales suite: a run of it
        store_rationale_run(store)
    if query.name.startswith("judge_"):  # the judge suite: a run of it over A's explanations
        store_judge_run(store, A)
    if query.name == "notes":  # the explorer's notes and bookmarks
        save_note(store, A, "i1", "a slur, and a call for harm")
    columns, rows = reports.run_named(store, query.name, required)
    assert columns and len(set(columns)) == len(columns)
    assert rows, f"{query.name} returned no rows on the test store"


def test_the_builtin_queries_are_all_there_and_listed_in_the_readme() -> None:
    queries = reports.load_queries()
    expected = {
        "table1",
        "table2",
        "table4",
        "table2_instances",
        "table4_instances",
        "figure2",
        "stance_distribution",
        "unclear_rates",
        "contradictions",
        "contradiction_rates",
        "diagnostics",
        "instance_detail",
        "token_view",
        "model_comparison",
        "runs",
        "instances",
        "datasets",
        "skipped_rows",
        "classification",
        "rationale_summary",
        "rationale_plausibility",
        "rationale_faithfulness",
        "rationale_complexity",
        "rationale_attribution",
        "judge_summary",
        "judge_vs_haf",
        "judge_low_mass",
        "judge_codes",
        "judge_runs",
        "judge_judgements",
        "notes",
    }
    assert set(queries) == expected
    readme = (reports.QUERIES_DIR / "README.md").read_text(encoding="utf-8")
    for name in expected:
        assert f"`{name}`" in readme


CLASSIFIED = {  # run A: (p(toxic), label mass, ŷ toxic); every gold label is toxic
    "i1": (0.9, 0.8, 1.0),  # stance toxic: agrees; correct
    "i2": (0.3, 0.4, 0.0),  # stance toxic: disagrees; wrong; low mass
    "i3": (0.2, 0.6, 0.0),  # stance non-toxic: agrees; wrong
    "i4": (0.6, 0.2, 1.0),  # stance unclear: not compared; correct; low mass
}


def _add_classifications(store: Store) -> None:
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


def test_classification_summarises_the_classify_suite(store: Store) -> None:
    assert records(store, "classification") == []  # no run holds the suite yet
    _add_classifications(store)
    (row,) = records(store, "classification")
    assert row["run_id"] == A and row["n"] == 4
    assert row["pct_toxic"] == pytest.approx(100 * 2 / 4)
    assert row["mean_p_toxic"] == pytest.approx((0.9 + 0.3 + 0.2 + 0.6) / 4)
    assert row["pct_low_mass"] == pytest.approx(100 * 2 / 4)
    assert row["n_gold"] == 4 and row["pct_correct"] == pytest.approx(100 * 2 / 4)
    assert row["n_stance"] == 3 and row["pct_agree_stance"] == pytest.approx(100 * 2 / 3)
    shown = reports.run_report(store, "classification")  # haf report --report classification
    assert shown.columns[-8:] == [
        "instances",
        "% ŷ toxic",
        "mean p(toxic)",
        "% mass < 0.5",
        "gold",
        "% correct",
        "stances",
        "% agree",
    ]
    assert shown.rows[0][-8] == 4


def test_figure2_declares_its_band_edges_with_defaults() -> None:
    query = reports.get_query("figure2")
    assert query.params == ("run_ids", "low_edge", "high_edge")
    assert query.param("low_edge").default == 0.6
    assert query.param("high_edge").default == 0.8
    assert query.param("run_ids").type == "VARCHAR[]"
    assert query.param("run_ids").default == []
    assert not query.param("low_edge").required
    assert reports.get_query("token_view").param("run_id").required
    assert reports.get_query("token_view").param("sub_index").default == -1
    with pytest.raises(QueryError, match=r"no parameter 'nope'.*run_ids, low_edge, high_edge"):
        query.param("nope")


# ---------------------------------------------------------------- Table 1


def test_table1_pooled_and_instance_means_per_run(store: Store) -> None:
    rows = by_run(records(store, "table1"))
    a, b = rows[A], rows[B]
    assert (a["model_file"], a["dataset_id"], a["n_instances"], a["n_stopped"]) == (
        "alpha.gguf",
        "toy",
        4,
        1,
    )
    assert (b["n_instances"], b["n_stopped"]) == (3, 1)

    assert a["sos_pooled"] == approx((0.6 + 0.8 + 1.0 + 0.2 + 0.4 + 0.9 + 0.5 + 0.7) / 8)
    assert a["sos_pooled_n"] == 8
    assert a["sos_instance_mean"] == approx((0.8 + 0.5 + 0.6) / 3)
    assert a["sos_instance_n"] == 3  # i4 stopped: no SoS
    assert a["dis_pooled"] == a["dis_instance_mean"] == approx((0.3 + 0.5 + 0.2) / 3)
    assert a["dis_pooled_n"] == a["dis_instance_n"] == 3
    assert a["uii_pooled"] == approx((0.4 + 0.6 + 0.3) / 3)
    assert a["uii_pooled_n"] == 3
    assert a["uii_instance_mean"] == approx((0.5 + 0.3) / 2)
    assert a["uii_instance_n"] == 2  # i2's UII is NULL
    assert a["uei_pooled"] == approx((0.5 + 0.7 + 0.2) / 3)
    assert a["uei_pooled_n"] == 3
    assert a["uei_instance_mean"] == approx((0.6 + 0.2) / 2)
    assert a["uei_instance_n"] == 2
    assert a["rs_pooled"] == approx((0.9 + 0.03 + 0.4 + 0.8 + 0.3) / 5)
    assert a["rs_pooled_n"] == 5  # i2 j1's RS is NULL
    assert a["rs_instance_mean"] == approx(((0.9 + 0.03 + 0.4) / 3 + 0.55) / 2)
    assert a["rs_instance_n"] == 2
    assert a["rn_pooled"] == approx((0.4 + 0.0005) / 2)
    assert (a["rn_pooled_n"], a["rn_instance_n"]) == (2, 1)
    assert a["rn_instance_mean"] == approx((0.4 + 0.0005) / 2)

    assert b["sos_pooled"] == approx((0.3 + 0.5 + 0.9) / 3)
    assert (b["sos_pooled_n"], b["sos_instance_n"]) == (3, 2)  # NULL terms are not counted
    assert b["sos_instance_mean"] == approx((0.4 + 0.9) / 2)
    assert b["uii_pooled"] == approx(0.35)
    assert (b["uii_pooled_n"], b["uii_instance_n"]) == (1, 1)
    assert b["uei_instance_mean"] == approx(0.9)
    assert b["rs_pooled"] == approx((0.7 + 0.45 + 0.24 + 0.04) / 4)
    assert b["rn_pooled"] is None and b["rn_instance_mean"] is None
    assert (b["rn_pooled_n"], b["rn_instance_n"]) == (0, 0)


def test_table1_run_filter_and_prefixes(store: Store) -> None:
    only_b = records(store, "table1", {"run_ids": [B]})
    assert [r["run_id"] for r in only_b] == [B]
    assert [r["run_id"] for r in records(store, "table1", {"run_ids": "run-al"})] == [A]
    assert [r["run_id"] for r in records(store, "table1", {"run_ids": []})] == [A, B]
    with pytest.raises(QueryError, match="ambiguous"):
        reports.run_named(store, "table1", {"run_ids": ["run-"]})
    with pytest.raises(QueryError, match="no run 'zzz'"):
        reports.run_named(store, "table1", {"run_ids": ["zzz"]})


def test_an_exact_run_id_wins_over_a_longer_one(store: Store) -> None:
    record = store.get_run(A).model_copy(update={"run_id": A + "-retry"})
    store.create_run(record)
    assert reports.resolve_run_id(store, A) == A
    assert reports.resolve_run_id(store, A + "-r") == A + "-retry"
    with pytest.raises(QueryError, match="ambiguous"):
        reports.resolve_run_id(store, "run-alpha")
    assert [r["run_id"] for r in records(store, "table1", {"run_ids": f"{A},{B}"})] == [A, B]


# ---------------------------------------------------------------- Table 2 and Table 4


def test_table2_share_of_instances_saying_the_reasons_suffice(store: Store) -> None:
    rows = by_run(records(store, "table2"))
    a, b = rows[A], rows[B]
    assert (a["internal_no"], a["internal_n"]) == (1, 3)  # NO, UNCLEAR, YES
    assert a["internal_sufficient_pct"] == approx(100 / 3)
    assert (a["external_no"], a["external_n"]) == (2, 3)  # YES, NO, NO
    assert a["external_sufficient_pct"] == approx(200 / 3)
    assert (b["internal_no"], b["internal_n"]) == (1, 2)
    assert b["internal_sufficient_pct"] == approx(50.0)
    assert (b["external_no"], b["external_n"]) == (1, 2)


def test_table4_splits_rs_and_rn(store: Store) -> None:
    rows = {(r["run_id"], r["test"]): r for r in records(store, "table4")}
    assert list(rows) == [(A, "SUF"), (A, "NEC"), (B, "SUF"), (B, "NEC")]
    suf = rows[(A, "SUF")]
    assert suf["metric"] == "RS"
    assert suf["score_pooled"] == approx((0.9 + 0.03 + 0.4 + 0.8 + 0.3) / 5)
    assert suf["score_pooled_n"] == 5
    assert suf["c_y_pooled"] == approx((0.9 + 0.5 + 0.8 + 0.8 + 0.6) / 5)
    assert suf["c_y_pooled_n"] == 5
    assert suf["decision_weight_pooled"] == approx((1.0 + 0.1 + 1.0 + 1.0 + 0.1 + 0.5) / 6)
    assert suf["decision_weight_pooled_n"] == 6
    assert suf["informativeness_pooled"] == approx((0.4 + 0.5) / 6)
    assert suf["informativeness_pooled_n"] == 6
    assert suf["score_instance_mean"] == approx(((0.9 + 0.03 + 0.4) / 3 + (0.8 + 0.3) / 2) / 2)
    assert suf["c_y_instance_mean"] == approx(((0.9 + 0.5 + 0.8) / 3 + (0.8 + 0.6) / 2) / 2)
    assert suf["decision_weight_instance_mean"] == approx((2.1 / 3 + 1.6 / 3) / 2)
    assert suf["informativeness_instance_mean"] == approx((0.9 / 3 + 0.0) / 2)
    assert suf["score_instance_n"] == suf["informativeness_instance_n"] == 2

    nec = rows[(A, "NEC")]
    assert nec["metric"] == "RN"
    assert nec["score_pooled"] == approx((0.4 + 0.0005) / 2)
    assert nec["c_y_pooled"] == approx(0.65)
    assert nec["decision_weight_pooled"] == approx(0.55)
    assert nec["informativeness_pooled"] == approx(0.255)
    assert (nec["score_pooled_n"], nec["score_instance_n"]) == (2, 1)

    assert rows[(B, "SUF")]["c_y_pooled"] == approx((0.7 + 0.9 + 0.6 + 0.4) / 4)
    assert rows[(B, "SUF")]["informativeness_pooled"] == approx((0.5 + 0.2) / 4)
    empty = rows[(B, "NEC")]
    assert empty["score_pooled"] is None and empty["score_pooled_n"] == 0
    assert empty["c_y_instance_mean"] is None and empty["c_y_instance_n"] == 0


# ---------------------------------------------------------------- Figure 2


def _cells(rows: list[dict[str, Any]], run_id: str) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["stance"], r["band"]): r for r in rows if r["run_id"] == run_id}


def test_figure2_by_stance_and_confidence_band(store: Store) -> None:
    rows = records(store, "figure2")
    a = _cells(rows, A)
    assert list(a) == [
        (s, b) for s in ("toxic", "maybe", "non-toxic") for b in ("low", "medium", "high")
    ]
    assert a[("toxic", "high")]["n_instances"] == 1
    assert a[("toxic", "high")]["sos_mean"] == approx(0.8)
    assert a[("toxic", "high")]["dis_mean"] == approx(0.3)
    assert a[("toxic", "medium")]["sos_mean"] == approx(0.5)
    assert a[("non-toxic", "low")]["dis_mean"] == approx(0.2)
    assert a[("non-toxic", "low")]["confidence_mean"] == approx(0.5)
    assert a[("toxic", "low")]["n_instances"] == 0
    assert a[("toxic", "low")]["sos_mean"] is None and a[("toxic", "low")]["sos_n"] == 0
    assert sum(c["n_instances"] for c in a.values()) == 3  # the unclear instance is left out

    b = _cells(rows, B)
    stopped = b[("toxic", "low")]  # i3: C 0.3, stopped, no SoS / DiS
    assert (stopped["n_instances"], stopped["sos_n"], stopped["dis_n"]) == (1, 0, 0)
    assert stopped["sos_mean"] is None
    assert b[("maybe", "medium")]["sos_mean"] == approx(0.9)
    assert sum(c["n_instances"] for c in b.values()) == 3  # i4 is not finished


def test_figure2_band_edges_are_parameters(store: Store) -> None:
    rows = records(store, "figure2", {"low_edge": "0.75", "high_edge": 0.95})
    a = _cells(rows, A)
    assert a[("toxic", "low")]["n_instances"] == 1  # i2, C 0.7 < 0.75
    assert a[("toxic", "medium")]["n_instances"] == 1  # i1, C 0.9 < 0.95
    assert a[("toxic", "high")]["n_instances"] == 0
    assert _cells(rows, B)[("maybe", "low")]["sos_mean"] == approx(0.9)


def test_figure2_undefined_confidence_gets_its_own_band(store: Store) -> None:
    store.connection.execute(
        "UPDATE generations SET decision_confidence = NULL "
        "WHERE run_id = ? AND instance_id = 'i1' AND stage = 'justify'",
        [A],
    )
    a = _cells(records(store, "figure2", {"run_ids": [A]}), A)
    assert a[("toxic", "undefined")]["n_instances"] == 1
    assert a[("toxic", "undefined")]["sos_mean"] == approx(0.8)
    assert a[("toxic", "high")]["n_instances"] == 0
    assert ("maybe", "undefined") not in a


# ---------------------------------------------------------------- shares


def test_stance_distribution(store: Store) -> None:
    rows = records(store, "stance_distribution")
    a = {r["stance"]: r for r in rows if r["run_id"] == A}
    assert list(a) == ["toxic", "maybe", "non-toxic", "unclear"]
    assert [a[s]["n"] for s in a] == [2, 0, 1, 1]
    assert a["toxic"]["pct"] == approx(50.0)
    assert a["maybe"]["pct"] == 0.0
    assert a["unclear"]["pct"] == approx(25.0)
    assert a["toxic"]["n_finished"] == 4
    b = {r["stance"]: r for r in rows if r["run_id"] == B}
    assert [b[s]["n"] for s in b] == [2, 1, 0, 0]
    assert b["maybe"]["pct"] == approx(100 / 3)


def test_unclear_rates_and_stopped_instances(store: Store) -> None:
    rows = records(store, "unclear_rates")
    a = [(r["kind"], r["stage"], r["detail"], r["n"], r["of_n"]) for r in rows if r["run_id"] == A]
    assert a == [
        ("unclear decision", "justify", None, 1, 4),
        ("unclear decision", "internal", None, 1, 3),
        ("unclear decision", "external", None, 0, 3),
        ("unclear decision", "individual", "NEC", 0, 2),
        ("unclear decision", "individual", "SUF", 1, 6),
        ("stopped", "justify", "unclear stance", 1, 4),
    ]
    b = [(r["kind"], r["stage"], r["detail"], r["n"], r["of_n"]) for r in rows if r["run_id"] == B]
    assert b == [
        ("unclear decision", "justify", None, 0, 4),
        ("unclear decision", "internal", None, 0, 2),
        ("unclear decision", "external", None, 1, 2),
        ("unclear decision", "individual", "SUF", 0, 4),
        ("stopped", "justify", "no reasons", 1, 3),
    ]
    pct = {(r["run_id"], r["kind"], r["stage"], r["detail"]): r["pct"] for r in rows}
    assert pct[(A, "unclear decision", "individual", "SUF")] == approx(100 / 6)
    assert pct[(B, "stopped", "justify", "no reasons")] == approx(100 / 3)
    assert pct[(A, "unclear decision", "external", None)] == 0.0


def test_contradictions_list(store: Store) -> None:
    rows = records(store, "contradictions")
    found = [
        (r["run_id"], r["instance_id"], r["stage"], r["sub_index"], r["n_new_reasons"])
        for r in rows
    ]
    assert found == [
        (A, "i1", "internal", -1, 2),
        (A, "i1", "individual", 2, 1),
        (A, "i3", "external", -1, 1),
        (B, "i1", "external", -1, 1),
        (B, "i1", "individual", 1, 1),
    ]
    assert {r["decision"] for r in rows} == {"NO"}
    assert rows[0]["first_reason"] == "internal reason number 0 of this instance"
    assert rows[1]["test"] == "SUF"


def test_contradiction_rates(store: Store) -> None:
    rows = records(store, "contradiction_rates")
    got = {(r["run_id"], r["stage"], r["test"]): r for r in rows}
    assert list(got) == [
        (A, "internal", None),
        (A, "external", None),
        (A, "individual", "NEC"),
        (A, "individual", "SUF"),
        (B, "internal", None),
        (B, "external", None),
        (B, "individual", "SUF"),
    ]
    suf = got[(A, "individual", "SUF")]
    assert (suf["n_generations"], suf["n_no"], suf["n_contradictions"]) == (6, 3, 1)
    assert suf["pct_of_no"] == approx(100 / 3)
    assert suf["pct_of_all"] == approx(100 / 6)
    assert got[(A, "external", None)]["pct_of_no"] == approx(50.0)
    assert got[(A, "individual", "NEC")]["n_contradictions"] == 0
    assert got[(B, "internal", None)]["pct_of_no"] == approx(0.0)


def test_diagnostics(store: Store) -> None:
    rows = records(store, "diagnostics")
    got = [(r["run_id"], r["stage"], r["kind"], r["n"], r["example_instance"]) for r in rows]
    assert got == [
        (A, "justify", "no decision sentence", 1, "i4"),
        (A, "internal", "no decision sentence", 1, "i2"),
        (B, "justify", "no reasons", 1, "i3"),
    ]


# ---------------------------------------------------------------- one run, one instance


def test_runs_with_progress(store: Store) -> None:
    rows = records(store, "runs")
    assert [r["run_id"] for r in rows] == [B, A]  # newest first
    a, b = by_run(rows)[A], by_run(rows)[B]
    assert (a["n_done"], a["n_planned"], a["n_stopped"], a["n_generations"]) == (4, 4, 1, 18)
    assert a["pct_done"] == approx(100.0)
    assert a["n_tokens"] == len(_tokens(A_I1_OUTPUT))
    assert a["seconds_per_instance"] == approx(30.0)
    assert (b["n_done"], b["n_generations"], b["status"]) == (3, 12, "running")
    assert b["pct_done"] == approx(75.0)
    assert b["seconds_per_instance"] == 0.0


def test_instances_of_a_run(store: Store) -> None:
    rows = records(store, "instances", {"run_id": "run-b"})
    assert [r["instance_id"] for r in rows] == ["i1", "i2", "i3", "i4"]
    assert [r["done"] for r in rows] == [True, True, True, False]
    assert [r["stance"] for r in rows] == ["toxic", "maybe", "toxic", "toxic"]
    assert rows[2]["stopped"] == "no reasons"
    assert rows[0]["sos"] == approx(0.4)
    assert rows[0]["uii"] is None
    assert rows[1]["rs"] == approx(0.14)
    assert rows[3]["justify_confidence"] == approx(0.95)


def test_instance_detail(store: Store) -> None:
    rows = records(store, "instance_detail", {"run_id": "run-alpha", "instance_id": "i1"})
    assert [(r["stage"], r["sub_index"], r["reason_index"]) for r in rows] == [
        ("justify", -1, 0),
        ("justify", -1, 1),
        ("justify", -1, 2),
        ("internal", -1, 0),
        ("internal", -1, 1),
        ("external", -1, 0),
        ("external", -1, 1),
        ("individual", 0, None),
        ("individual", 1, 0),
        ("individual", 2, 0),
    ]
    first = rows[0]
    assert first["decision"] == "toxic"
    assert first["decision_confidence"] == approx(0.9)
    assert first["reason_text"] == A_I1_REASONS[0]
    assert (first["sos"], first["rs"], first["c_y"]) == (approx(0.6), approx(0.9), approx(0.9))
    assert (first["decision_weight"], first["i_s"]) == (approx(1.0), approx(0.0))
    assert first["rn"] is None and first["uii"] is None
    assert rows[4]["uii"] == approx(0.6)
    assert rows[4]["sos"] is None
    assert rows[6]["uei"] == approx(0.7)
    assert (rows[7]["test"], rows[7]["decision"], rows[7]["reason_text"]) == ("SUF", "NO", None)
    assert rows[9]["sos"] is None  # a sub-prompt's new reason has no JUSTIFY metrics
    stopped = records(store, "instance_detail", {"run_id": A, "instance_id": "i4"})
    assert len(stopped) == 1 and stopped[0]["decision_confidence"] is None


def test_token_view(store: Store) -> None:
    params = {"run_id": A, "instance_id": "i1", "stage": "justify"}
    rows = records(store, "token_view", params)
    tokens = _tokens(A_I1_OUTPUT)
    assert [r["position"] for r in rows] == list(range(len(tokens)))
    assert "".join(r["text"] for r in rows) == A_I1_OUTPUT
    for row, token in zip(rows, tokens, strict=True):
        assert row["logprob"] == approx(token.logprob)
        assert row["nll"] == approx(-token.logprob)
        assert row["p"] == approx(math.exp(token.logprob))
        assert row["top_ids"] == [token.token_id, 7]
        assert row["top_logprobs"] == [approx(token.logprob), approx(token.logprob - 1.0)]
        assert row["piece_hex"] == token.piece.hex().upper()
    assert [r["in_decision"] for r in rows[:6]] == [True] * 5 + [False]
    reason_1 = A_I1_OUTPUT.index(A_I1_REASONS[1])
    covered = _covering(tokens, reason_1, reason_1 + len(A_I1_REASONS[1]))
    assert [rows[i]["reason_index"] for i in covered] == [1] * len(covered)
    assert [rows[i]["relevance"] for i in covered] == [
        approx(0.1 * (n + 1)) for n in range(len(covered))
    ]
    assert rows[covered[0] - 1]["reason_index"] is None  # the "." of "2."
    # sub_index defaults to -1; another stage of the same instance has no tokens stored
    assert records(store, "token_view", {**params, "stage": "internal"}) == []


def test_model_comparison_orders_runs_as_given(store: Store) -> None:
    rows = records(store, "model_comparison", {"run_ids": [B, A]})
    assert len(rows) == 15 * 2
    assert [(r["metric"], r["run_id"]) for r in rows[:4]] == [
        ("sos", B),
        ("sos", A),
        ("dis", B),
        ("dis", A),
    ]
    values = {(r["metric"], r["run_id"]): (r["instance_mean"], r["n"]) for r in rows}
    assert values[("sos", A)] == (approx((0.8 + 0.5 + 0.6) / 3), 3)
    assert values[("sos", B)] == (approx((0.4 + 0.9) / 2), 2)
    assert values[("rn", B)] == (None, 0)
    assert values[("dis_dpp", A)] == (approx(0.05), 1)
    assert values[("decision_confidence_justify", A)] == (approx((0.9 + 0.7 + 0.5) / 3), 3)
    assert values[("decision_confidence_internal", A)] == (approx(0.7), 1)
    default_order = records(store, "model_comparison")
    assert [r["run_id"] for r in default_order[:2]] == [A, B]


# ---------------------------------------------------------------- parameters and errors


def test_missing_query_name_lists_the_known_ones() -> None:
    with pytest.raises(QueryError, match=r"no query named 'tabel1' \(known: .*table1"):
        reports.get_query("tabel1")


def test_parameter_errors(store: Store) -> None:
    with pytest.raises(QueryError, match="needs parameter instance_id"):
        reports.run_named(store, "instance_detail", {"run_id": A})
    with pytest.raises(QueryError, match="takes no parameter run_id"):
        reports.run_named(store, "table1", {"run_id": A})
    with pytest.raises(QueryError, match="low_edge of figure2: expected a number"):
        reports.run_named(store, "figure2", {"low_edge": "high"})
    with pytest.raises(QueryError, match="expected an integer"):
        reports.run_named(store, "token_view", {**REQUIRED_SAMPLE, "sub_index": "1.5"})


def test_parameter_coercion() -> None:
    figure2 = reports.get_query("figure2")
    assert reports.coerce_param(figure2.param("low_edge"), "0.7") == 0.7
    assert reports.coerce_param(figure2.param("run_ids"), "a, b,") == ["a", "b"]
    assert reports.coerce_param(figure2.param("run_ids"), None) == []
    token_view = reports.get_query("token_view")
    assert reports.coerce_param(token_view.param("sub_index"), "2") == 2
    flag = reports.QueryParam(name="flag", type="BOOLEAN")
    assert reports.coerce_param(flag, "yes") is True
    assert reports.coerce_param(flag, "0") is False


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / f"{name}.sql"
    path.write_text(text, encoding="utf-8")
    return path


def test_header_parsing_and_its_errors(tmp_path: Path) -> None:
    good = _write(
        tmp_path,
        "good",
        "-- name: good\n-- title: A good one\n-- description: first line\n"
        "--   second line, with a comma\n"
        "-- params: x (DOUBLE; default 1.5; a number, really), tags (VARCHAR[]; default []),\n"
        "--   who (VARCHAR)\n"
        "SELECT $x AS x, $who AS who, len($tags::VARCHAR[]) AS n -- it's $not_a_param\n"
        "WHERE '$also_not' <> ''\n",
    )
    query = reports.parse_query(good.read_text(), good)
    assert query.title == "A good one"
    assert query.description == "first line second line, with a comma"
    assert query.params == ("x", "tags", "who")
    x = query.param("x")
    assert (x.type, x.default, x.required, x.description) == (
        "DOUBLE",
        1.5,
        False,
        "a number, really",
    )
    assert query.param("who").required

    cases = {
        "noname": ("-- title: t\nSELECT 1\n", "no '-- name:' header line"),
        "wrong": ("-- name: other\nSELECT 1\n", "header name 'other' differs"),
        "undeclared": ("-- name: undeclared\nSELECT $y\n", "used but not declared: y"),
        "unused": ("-- name: unused\n-- params: y (DOUBLE)\nSELECT 1\n", "declared but not used"),
        "badtype": ("-- name: badtype\n-- params: y (FLOAT)\nSELECT $y\n", "unknown type 'FLOAT'"),
    }
    for name, (text, message) in cases.items():
        path = _write(tmp_path, name, text)
        with pytest.raises(QueryError, match=re.escape(message)):
            reports.parse_query(text, path)
    none = _write(tmp_path, "none", "-- name: none\n-- params: none\nSELECT 1 AS one\n")
    assert reports.parse_query(none.read_text(), none).params == ()


def test_queries_dir_override(
    tmp_path: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(tmp_path, "mine", "-- name: mine\n-- title: Mine\nSELECT count(*) AS n FROM runs\n")
    monkeypatch.setenv(reports.QUERIES_ENV, str(tmp_path))
    assert reports.queries_dir() == tmp_path
    assert list(reports.load_queries()) == ["mine"]
    assert reports.run_named(store, "mine", None) == (["n"], [(2,)])
    with pytest.raises(QueryError, match=r"known: mine\)"):
        reports.get_query("table1")
    monkeypatch.setenv(reports.QUERIES_ENV, str(tmp_path / "missing"))
    with pytest.raises(QueryError, match="no queries folder"):
        reports.load_queries()


# ---------------------------------------------------------------- reports


def test_builtin_reports() -> None:
    for name in ("table1", "table2", "table4", "figure2", "stances", "unclear"):
        assert name in reports.REPORTS
    assert [r.name for r in reports.summary_reports()] == ["table1", "table2", "table4"]
    queries = reports.load_queries()
    assert all(r.query in queries for r in reports.REPORTS.values())
    with pytest.raises(QueryError, match=r"no report named 'nope' \(known: .*table1, table2"):
        reports.get_report("nope")


def test_every_report_runs(store: Store) -> None:
    _add_classifications(store)
    rationale_run = store_rationale_run(store)
    judge_run = store_judge_run(store, A)
    for name, report in reports.REPORTS.items():
        result = reports.run_report(store, name, {"run_ids": [A, B, rationale_run, judge_run]})
        assert result.title == report.title
        if name == "compare-ci":  # the four runs share no suite: no metric to compare
            assert result.rows == []
            result = reports.run_report(store, name, {"run_ids": [A, B]})
        assert result.rows and all(len(row) == len(result.columns) for row in result.rows)


def test_table1_report_has_a_row_per_pooling_rule(store: Store) -> None:
    result = reports.run_report(store, "table1")
    got = [dict(zip(result.columns, row, strict=True)) for row in result.rows]
    assert [(r["run"], r["pooling"]) for r in got] == [
        (A, reports.POOLED_LABEL),
        (A, reports.INSTANCE_LABEL),
        (B, reports.POOLED_LABEL),
        (B, reports.INSTANCE_LABEL),
    ]
    assert got[0]["SoS"] == approx(5.1 / 8) and got[0]["SoS n"] == 8
    assert got[1]["SoS"] == approx(1.9 / 3) and got[1]["SoS n"] == 3
    assert got[1]["instances"] == 4 and got[0]["model"] == "alpha.gguf"
    assert got[3]["RN"] is None and got[3]["RN n"] == 0


def test_compare_report_puts_runs_side_by_side(store: Store) -> None:
    result = reports.run_report(store, "compare", {"run_ids": [B, A]})
    assert result.columns[0] == "metric"
    assert result.columns[1].startswith("beta.gguf") and result.columns[3].startswith("alpha")
    assert result.columns[2] == result.columns[1] + " n"
    sos = result.rows[0]
    assert sos[0] == "SoS"
    assert sos[1:] == (approx((0.4 + 0.9) / 2), 2, approx(1.9 / 3), 3)
    assert len(result.rows) == 15


def test_a_new_report_plugs_in(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reports.registry, "REPORTS", dict(reports.REPORTS))
    report = reports.Report(
        "alpha_only",
        "Stances",
        "stance_distribution",
        shape=reports.select_columns((("stance", "S"), ("n", "N"))),
    )
    reports.register_report(report)
    with pytest.raises(ValueError, match="already registered"):
        reports.register_report(report)
    result = reports.run_report(store, "alpha_only", {"run_ids": [A]})
    assert result.columns == ["S", "N"]
    assert result.rows == [("toxic", 2), ("maybe", 0), ("non-toxic", 1), ("unclear", 1)]
    assert [r.name for r in reports.summary_reports()] == ["table1", "table2", "table4"]


# ---------------------------------------------------------------- formats

COLUMNS = ["name", "value", "n", "flags", "raw", "when"]
ROWS: list[tuple[Any, ...]] = [
    ("a|b", 0.1 + 0.2, 3, [1.5, None], b"\x00\xff", None),
    ("[bold]x[/bold]", None, 0, [], None, None),
    ("nan", math.nan, 1, None, None, None),
]


def _render(table: Any) -> str:
    console = Console(file=io.StringIO(), width=200, color_system=None)
    console.print(table)
    output = console.file
    assert isinstance(output, io.StringIO)
    return output.getvalue()


def test_rich_table_rounds_and_shows_null() -> None:
    text = _render(reports.to_rich_table("Title", COLUMNS, ROWS))
    assert "Title" in text
    assert "0.300" in text and "0.30000000000000004" not in text
    assert "—" in text
    assert "[bold]x[/bold]" in text  # cell text is not read as markup
    assert "[1.500, —]" in text
    assert "00ff" in text


def test_csv_keeps_every_digit() -> None:
    text = reports.to_csv(COLUMNS, ROWS)
    parsed = list(csv.reader(io.StringIO(text)))
    assert parsed[0] == COLUMNS
    assert parsed[1] == ["a|b", "0.30000000000000004", "3", "[1.5, null]", "00ff", ""]
    assert float(parsed[1][1]) == 0.1 + 0.2
    assert parsed[2][1] == "" and parsed[2][3] == "[]"
    assert parsed[3][1] == "nan"


def test_json_keeps_floats_and_nulls() -> None:
    loaded = json.loads(reports.to_json(COLUMNS, ROWS))
    assert loaded[0] == {
        "name": "a|b",
        "value": 0.1 + 0.2,
        "n": 3,
        "flags": [1.5, None],
        "raw": "00ff",
        "when": None,
    }
    assert loaded[1]["value"] is None
    assert loaded[2]["value"] is None  # NaN is not JSON
    assert json.loads(reports.to_json(["x", "x"], [(1, 2)])) == [{"x": 1, "x_2": 2}]
    assert json.loads(reports.to_json(["v"], [(math.inf,)])) == [{"v": "Infinity"}]


def test_markdown_pipe_table() -> None:
    lines = reports.to_markdown(COLUMNS, ROWS).splitlines()
    assert lines[0] == "| name | value | n | flags | raw | when |"
    assert lines[1] == "| --- | ---: | ---: | --- | --- | --- |"
    assert lines[2] == "| a\\|b | 0.300 | 3 | [1.500, —] | 00ff | — |"
    assert lines[3].startswith("| [bold]x[/bold] | — | 0 |")
    assert len(lines) == 2 + len(ROWS)


def test_query_results_round_trip_through_json_and_csv(store: Store) -> None:
    columns, rows = reports.run_named(store, "table1")
    loaded = json.loads(reports.to_json(columns, rows))
    assert [[record[c] for c in columns] for record in loaded] == [list(r) for r in rows]
    parsed = list(csv.DictReader(io.StringIO(reports.to_csv(columns, rows))))
    for record, row in zip(parsed, rows, strict=True):
        value = row[columns.index("rs_instance_mean")]
        assert float(record["rs_instance_mean"]) == value
        assert record["rn_pooled"] == (
            "" if row[columns.index("rn_pooled")] is None else repr(row[columns.index("rn_pooled")])
        )


def test_export_dispatches_every_format(store: Store) -> None:
    columns, rows = reports.run_named(store, "table2")
    assert reports.export("csv", columns, rows) == reports.to_csv(columns, rows)
    assert json.loads(reports.export("json", columns, rows)) == json.loads(
        reports.to_json(columns, rows)
    )
    assert reports.export("markdown", columns, rows, title="T2").startswith("### T2\n\n| run_id")
    table = reports.export("table", columns, rows, title="Table 2", width=250)
    assert "Table 2" in table and "33.333" in table and "66.667" in table
    with pytest.raises(QueryError, match="unknown format 'xml'"):
        reports.export("xml", columns, rows)
    assert set(reports.FORMATS) == {"table", "csv", "json", "markdown"}
