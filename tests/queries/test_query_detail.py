"""Named queries over one run and one instance (runs, instances, instance_detail,
token_view, model_comparison), and the queries' parameters, header parsing and errors, on the
hand-made store of tests/support/report_store.py."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from haf_tui import reports
from haf_tui.reports import QueryError
from haf_tui.store import (
    Store,
)
from tests.support.report_store import (
    A_I1_OUTPUT,
    A_I1_REASONS,
    REQUIRED_SAMPLE,
    A,
    B,
    approx,
    by_run,
    covering,
    records,
    tokens_of,
)

# ---------------------------------------------------------------- one run, one instance


def test_runs_with_progress(store: Store) -> None:
    rows = records(store, "runs")
    assert [r["run_id"] for r in rows] == [B, A]  # newest first
    a, b = by_run(rows)[A], by_run(rows)[B]
    assert (a["n_done"], a["n_planned"], a["n_stopped"], a["n_generations"]) == (4, 4, 1, 18)
    assert a["pct_done"] == approx(100.0)
    assert a["n_tokens"] == len(tokens_of(A_I1_OUTPUT))
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
    tokens = tokens_of(A_I1_OUTPUT)
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
    covered = covering(tokens, reason_1, reason_1 + len(A_I1_REASONS[1]))
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
