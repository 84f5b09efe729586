"""A generation's rows as the store writes them: its reasons (spans, token scores, confidence;
NaN stored as NULL) and its parse diagnostics, under the generation's key, in the one
transaction that stores the generation (``store/result_rows.py``); and the one way the store
writes them and an instance's metrics, a list a column (``insert_columns``), held to an
``INSERT … VALUES`` of one row at a time, as they were stored before."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import duckdb
import pytest

from haf_tui.store.records import GenerationRecord, InstanceResult, ReasonRecord
from haf_tui.store.result_rows import (
    DIAGNOSTIC_COLUMNS,
    REASON_COLUMNS,
    diagnostic_rows,
    insert_columns,
    insert_instance_results,
    reason_rows,
)
from haf_tui.vocabulary import null_for_nan
from tests.support.same_rows import assert_same_rows
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
        "SELECT instance_id, stage, sub_index, reason_index, text, span_start, span_end, "
        "token_first, token_count, nll, relevance, confidence FROM reasons ORDER BY reason_index"
    )[1]
    assert reasons == [
        ("i0", "justify", 0, 0, "it insults", 0, 10, 2, 3, [0.1, 0.2, 0.3], [0.5, 0.25, 0.25], 0.7),
        ("i0", "justify", 0, 1, "it threatens", 12, 24, None, 0, [], [], None),
    ]
    diagnostics = store.query("SELECT kind, detail FROM parse_diagnostics ORDER BY kind")[1]
    assert diagnostics == [("extra", "two"), ("no_reasons", "none found")]
    store.close()


def test_an_instances_thousands_of_metric_rows_are_all_stored(tmp_path: Path) -> None:
    """An instance's 5,000 metric rows in one statement: every row stored, each with its own
    value and count (none shifted, none lost at either end), NaN as NULL."""
    store, _ = _store_with_run(tmp_path / "many.duckdb", 1, 1)
    many = 5000
    result = InstanceResult("run", "i0", "toxic", 1, None)
    result.instance_metrics = [
        (f"m{k}", math.nan if k == many - 1 else k / 4, k) for k in range(many)
    ]
    store.save_instance_result(result)
    rows = store.query("SELECT metric, value, n FROM instance_metrics ORDER BY n")[1]
    assert rows == [(f"m{k}", None if k == many - 1 else k / 4, k) for k in range(many)]
    store.close()


_REASONS = (
    "CREATE TABLE reasons (run_id VARCHAR, instance_id VARCHAR, stage VARCHAR, sub_index INTEGER,"
    " reason_index INTEGER, text VARCHAR, span_start INTEGER, span_end INTEGER,"
    " token_first INTEGER, token_count INTEGER, nll DOUBLE[], relevance DOUBLE[],"
    " confidence DOUBLE)"
)


def _odd_reason_row(k: int) -> list[object]:
    """A ``reasons`` row of odd values: quotes, SQL, unicode, 5,000 characters (the fourth
    row's 100,000), placeholders' marks; NaN, infinities, ints and None in the lists and the
    double."""
    texts = ['it\'s "quoted"; DROP TABLE reasons; --', "ünï 日本 🙂", "x" * 5000, "", "?", "$1"]
    if k == 3:
        texts[k % 6] = "y" * 100_000
    nlls = [[], [math.nan, 1.5], [1, 2], [0.1] * 50, None, [math.inf, -0.0]]
    confidences = [None, 0.1, 1, 2**31, 1e308, -math.inf]
    return [
        "run", f"i{k}", "justify", k, k, texts[k % 6], 0, 2**31 - 1, None if k % 2 else k, k,
        nlls[k % 6], [0.5] if k % 3 else [], confidences[k % 6],
    ]  # fmt: skip


def _a_row_a_statement(con: Any, table: str, rows: list[list[Any]]) -> None:
    """How a generation's rows were stored before they were stored a list a column: an
    ``INSERT … VALUES`` of one row, a statement a row."""
    for row in rows:
        con.execute(f"INSERT INTO {table} VALUES ({', '.join('?' * len(row))})", row)


@pytest.mark.parametrize("count", [0, 1, 2, 199, 200, 201, 401, 2000])
def test_rows_in_columns_are_those_inserted_one_at_a_time(count: int) -> None:
    """:func:`insert_columns` (a list a column, unnested, one statement however many rows)
    stores each row as one ``INSERT`` a row stores it, to the type and the last bit: odd
    texts, NaN and infinities, ints where doubles go, None, empty lists; none lost or shifted
    in a batch of thousands."""
    rows = [_odd_reason_row(k) for k in range(count)]
    one_by_one, in_columns = duckdb.connect(), duckdb.connect()
    for con in (one_by_one, in_columns):
        con.execute(_REASONS)
    _a_row_a_statement(one_by_one, "reasons", rows)
    insert_columns(in_columns, "reasons", REASON_COLUMNS, rows)
    read = "SELECT *, typeof(nll), typeof(confidence) FROM reasons ORDER BY reason_index"
    expected = one_by_one.execute(read).fetchall()
    assert len(expected) == count
    assert_same_rows(in_columns.execute(read).fetchall(), expected, "reasons")


def _odd_generation(count: int) -> GenerationRecord:
    """A generation with ``count`` reasons and as many diagnostics of odd values (the
    schema's NOT NULLs kept): unicode, quotes, 5,000 characters, NaN, ±inf, -0.0, the least
    double, empty lists, a token_first of None, 2**31 - 1."""
    texts = ["ünï 日本 🙂", 'it\'s "q"; --', "x" * 5000, "", "?", "$1"]
    numbers = [math.nan, math.inf, -math.inf, -0.0, 5e-324, 0.1, 1e308]
    reasons = [
        ReasonRecord(
            k, texts[k % 6], k, 2**31 - 1 - k, None if k % 3 == 0 else k, k % 5,
            tuple(numbers[(k + j) % 7] for j in range(k % 4)), (numbers[k % 7],) if k % 2 else (),
            numbers[(k + 3) % 7],
        )
        for k in range(count)
    ]  # fmt: skip
    diagnostics = [(texts[(k + 1) % 6], texts[k % 6]) for k in range(count)]
    record = _generation()
    record.reasons, record.diagnostics = reasons, diagnostics
    return record


@pytest.mark.parametrize("count", [1, 401])
def test_a_runs_generation_stores_its_rows_as_one_row_a_statement_did(
    tmp_path: Path, count: int
) -> None:
    """``save_generation`` (a run's path: the reasons and diagnostics a list a column) stores
    in the real schema what an ``INSERT … VALUES`` a row stored: every column's value and type
    to the last bit, for one reason and for hundreds."""
    in_columns, _ = _store_with_run(tmp_path / "columns.duckdb", 1, 1)
    one_by_one, _ = _store_with_run(tmp_path / "rows.duckdb", 1, 1)
    record = _odd_generation(count)
    in_columns.save_generation(record)
    bare = _odd_generation(0)
    one_by_one.save_generation(bare)
    key = [record.run_id, record.instance_id, record.stage, record.sub_index]
    with one_by_one.transaction() as con:
        _a_row_a_statement(con, "reasons", reason_rows(key, record))
        _a_row_a_statement(con, "parse_diagnostics", diagnostic_rows(key, record))
    for table in ("reasons", "parse_diagnostics"):
        read = f"SELECT *, typeof(COLUMNS(*)) FROM {table} ORDER BY ALL"
        expected = one_by_one.query(read)[1]
        assert len(expected) == count, table
        assert_same_rows(in_columns.query(read)[1], expected, table)
    in_columns.close()
    one_by_one.close()


def test_diagnostics_in_columns_are_those_inserted_one_at_a_time() -> None:
    """``parse_diagnostics`` rows a list a column are those an ``INSERT`` a row stores: None
    details, unicode, 5,000 characters, SQL in a text."""
    details = [None, "ünï 🙂", "x" * 5000, "'; DROP TABLE parse_diagnostics; --", ""]
    rows = [["run", f"i{k}", "justify", k, f"kind{k % 3}", details[k % 5]] for k in range(23)]
    one_by_one, in_columns = duckdb.connect(), duckdb.connect()
    for con in (one_by_one, in_columns):
        con.execute(
            "CREATE TABLE parse_diagnostics (run_id VARCHAR, instance_id VARCHAR, stage VARCHAR,"
            " sub_index INTEGER, kind VARCHAR, detail VARCHAR)"
        )
    _a_row_a_statement(one_by_one, "parse_diagnostics", rows)
    insert_columns(in_columns, "parse_diagnostics", DIAGNOSTIC_COLUMNS, rows)
    read = "SELECT *, typeof(detail) FROM parse_diagnostics ORDER BY sub_index"
    expected = one_by_one.execute(read).fetchall()
    assert len(expected) == 23
    assert_same_rows(in_columns.execute(read).fetchall(), expected, "parse_diagnostics")


def test_a_column_of_one_value_for_every_row_and_a_short_row() -> None:
    """``=expr`` columns take no value of the row; a row with a value too few or too many is
    refused, never stored shifted."""
    con = duckdb.connect()
    con.execute("CREATE TABLE t (a VARCHAR, b INTEGER, c DOUBLE, d TIMESTAMP)")
    insert_columns(con, "t", ("VARCHAR", "=NULL", "DOUBLE", "=current_timestamp"), [["x", 1.5]])
    assert con.execute("SELECT a, b, c, d IS NOT NULL FROM t").fetchall() == [
        ("x", None, 1.5, True)
    ]
    for bad in ([["x"]], [["x", 1.5, 2.0]]):
        with pytest.raises(ValueError):
            insert_columns(con, "t", ("VARCHAR", "=NULL", "DOUBLE", "=current_timestamp"), bad)
    assert con.execute("SELECT count(*) FROM t").fetchall() == [(1,)]


_RESULTS = """
CREATE TABLE instance_results (run_id VARCHAR, instance_id VARCHAR, stance VARCHAR,
    n_reasons INTEGER, stopped VARCHAR, created_at TIMESTAMP);
CREATE TABLE reason_metrics (run_id VARCHAR, instance_id VARCHAR, stage VARCHAR,
    sub_index INTEGER, reason_index INTEGER, metric VARCHAR, value DOUBLE);
CREATE TABLE instance_metrics (run_id VARCHAR, instance_id VARCHAR, metric VARCHAR,
    value DOUBLE, n INTEGER);
"""


def _results_a_row_a_statement(con: Any, result: InstanceResult) -> None:
    """How an instance's results were stored before a batch's were stored a list a column."""
    row = [result.run_id, result.instance_id, result.stance, result.n_reasons, result.stopped]
    con.execute("INSERT INTO instance_results VALUES (?, ?, ?, ?, ?, current_timestamp)", row)
    for m in result.reason_metrics:
        con.execute(
            "INSERT INTO reason_metrics VALUES (?, ?, ?, ?, ?, ?, ?)",
            [result.run_id, result.instance_id, *m[:4], null_for_nan(m[4])],
        )
    for name, value, n in result.instance_metrics:
        con.execute(
            "INSERT INTO instance_metrics VALUES (?, ?, ?, ?, ?)",
            [result.run_id, result.instance_id, name, null_for_nan(value), n],
        )


def test_results_stored_a_list_a_column_are_those_stored_a_row_a_statement() -> None:
    """A run's and a re-score's results (``insert_instance_results``, a list a column) are
    stored as an ``INSERT`` a row stored them: odd texts, None, NaN, ±inf, -0.0, the least
    double, ints where doubles go, 2**31 - 1 counts."""
    values: list[Any] = [math.nan, math.inf, -math.inf, -0.0, 0.1, 1, 2**53 + 1, 5e-324, None, True]
    texts = ["ünï 日本 🙂", "", 'it\'s "q"; --', "x" * 5000, "?", None]
    results = []
    for k in range(12):
        result = InstanceResult("run", f"i{k}", texts[k % 6], (2**31 - 1) * (k % 2), texts[-k % 6])
        result.reason_metrics = [("justify", k, j, f"m{j}", values[(k + j) % 10]) for j in range(3)]
        result.instance_metrics = [(f"n{j}", values[(3 * k + j) % 10], j) for j in range(4)]
        results.append(result)
    one_by_one, in_columns = duckdb.connect(), duckdb.connect()
    for con in (one_by_one, in_columns):
        con.execute(_RESULTS)
    for result in results:
        _results_a_row_a_statement(one_by_one, result)
    insert_instance_results(in_columns, results)
    for table in ("instance_results", "reason_metrics", "instance_metrics"):
        columns = "* EXCLUDE (created_at)" if table == "instance_results" else "*"
        read = f"SELECT {columns}, typeof(COLUMNS({columns})) FROM {table} ORDER BY ALL"
        expected = one_by_one.execute(read).fetchall()
        assert expected, table
        assert_same_rows(in_columns.execute(read).fetchall(), expected, table)
