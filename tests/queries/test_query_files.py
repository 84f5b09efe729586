"""Named queries over a real DuckDB store holding two hand-made runs (tests/support/
report_store.py says what they hold): every query file's header and rows, the paper's tables,
Figure 2 and the shares."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from haf_tui import reports
from haf_tui.reports import QueryError
from haf_tui.store import (
    Store,
)
from haf_tui.store.annotations import save_note
from tests.support.judge_runs import JUDGE_RUN, store_judge_run
from tests.support.rationale_runs import store_rationale_run
from tests.support.report_store import (
    REQUIRED_SAMPLE,
    A,
    B,
    add_classifications,
    approx,
    by_run,
    records,
)

# ---------------------------------------------------------------- every query file

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
        add_classifications(store)
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


def test_classification_summarises_the_classify_suite(store: Store) -> None:
    assert records(store, "classification") == []  # no run holds the suite yet
    add_classifications(store)
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
