"""Reports (built in, every one runs, a new one plugs in) and the result formats (table, CSV,
JSON, markdown, export), on the hand-made store of tests/support/report_store.py."""

from __future__ import annotations

import csv
import io
import json
import math
from typing import Any

import pytest
from rich.console import Console

from haf_tui import reports
from haf_tui.reports import QueryError
from haf_tui.store import (
    Store,
)
from tests.support.judge_runs import store_judge_run
from tests.support.rationale_runs import store_rationale_run
from tests.support.report_store import (
    A,
    B,
    add_classifications,
    approx,
)

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
    add_classifications(store)
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


def test_table4_panel_says_when_its_terms_average_different_reasons(store: Store) -> None:
    """Run A's RS averages 5 scores but 6 S(Y) (an UNCLEAR decision has no C(Y) nor score):
    the panel says the terms average their own n; with every n alike it says nothing."""
    from haf_tui.methods.declare import PanelInput, RunView
    from haf_tui.methods.haf.views.panels import TERMS_APART, table4_panel

    result = reports.run_report(store, "table4")
    run = [RunView(A, "alpha.gguf", "toy", "alpha")]

    def drawn(shown: reports.ReportResult) -> str:
        console = Console(width=300, record=True, color_system=None)
        console.print(table4_panel(PanelInput(run, {"table4": shown}, width=300)))
        return " ".join(console.export_text().split())

    assert TERMS_APART in drawn(result)
    n_at = [k for k, name in enumerate(result.columns) if name.endswith(" n")]
    alike = [tuple(7 if k in n_at else v for k, v in enumerate(row)) for row in result.rows]
    same = reports.ReportResult(result.name, result.title, result.columns, alike)
    assert TERMS_APART not in drawn(same)
