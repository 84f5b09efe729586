"""Every declared cell of every report, rebuilt (issue 42 §3): each report's columns that are
means of stored per-instance rows say so (``Report.averages``, :class:`reports.Averaged`), and
this check rebuilds each of their cells, and its n, from the stored rows with a plain Python
mean that shares no SQL with the report, on a scripted store holding several suites: the
hand-made HAF runs of ``tests/support/report_store.py`` (run A with classify's metrics), the
scripted rationales run of
``tests/support/rationale_runs.py`` and, planted on it, attention / saliency /
input×gradient rationales whose every number differs from occlusion's.

A report added later is covered by declaring its averages; the columns of the registered
reports that are numbers and not yet declared (nor an n) are listed below, so a new one is a
choice, not an oversight. A value repeated on rows it does not belong to, two columns
swapped and a wrong n each fail it."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import pytest

from haf_tui import reports
from haf_tui.store import Store, open_store
from tests.support.rationale_runs import RUN_ID as RATIONALE_RUN
from tests.support.rationale_runs import store_rationale_run
from tests.support.report_store import B, add_classifications, build_store

ATTRIBUTION_FACTORS = {"attention": 0.5, "saliency": 0.25, "input_x_gradient": 0.125}
"""The planted attribution rows: occlusion's numbers times their factor (so each differs)."""
SCALED = ("comp", "suff", "token_f1", "auprc", "cpx_entropy", "spr_gini")


def plant_attributions(store: Store) -> None:
    """Attention, saliency and input×gradient rationales on the rationales run, and their
    instance metrics (agreement with the prompted rationale, skewness), each its own."""
    con = store.connection
    for position, (source, factor) in enumerate(ATTRIBUTION_FACTORS.items()):
        con.execute(
            "CREATE OR REPLACE TEMP TABLE copied AS SELECT * FROM rationales "
            "WHERE run_id = ? AND source = 'occlusion'",
            [RATIONALE_RUN],
        )
        scaled = ", ".join(f"{column} = {column} * {factor}" for column in SCALED)
        flip = "flip = CASE WHEN instance_id = 'h0' THEN 1 - flip ELSE flip END"
        con.execute(f"UPDATE copied SET source = ?, {scaled}, {flip}", [source])
        con.execute("INSERT INTO rationales SELECT * FROM copied")
        instances = [row[0] for row in con.execute(
            "SELECT DISTINCT instance_id FROM copied ORDER BY instance_id"
        ).fetchall()]  # fmt: skip
        for k, instance in enumerate(instances[: 3 - (position == 2)]):  # (I×G: one fewer)
            for metric, value in (
                (f"rationale_alignment_f1_{source}", 0.1 * (position + 1) + 0.01 * k),
                (f"rationale_skew_{source}", -0.5 * position + 0.2 * k),
            ):
                con.execute(
                    "INSERT INTO instance_metrics (run_id, instance_id, metric, value, n) "
                    "VALUES (?, ?, ?, ?, 1)",
                    [RATIONALE_RUN, instance, metric, value],
                )


@pytest.fixture(scope="module")
def several_suites(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cells") / "haf.duckdb"
    with open_store(path) as store:
        build_store(store)
        add_classifications(store)  # (run A: mean p(toxic) 0.5 = the share of ŷ toxic)
        for instance, p_toxic, toxic in (("i1", 0.7, 1.0), ("i2", 0.45, 0.0)):  # (run B: not)
            for metric, value in (("classify_p_toxic", p_toxic), ("classify_toxic", toxic)):
                store.connection.execute(
                    "INSERT INTO instance_metrics VALUES (?, ?, ?, ?, 1)",
                    [B, instance, metric, value],
                )
        store_rationale_run(store)
        plant_attributions(store)
    return path


@pytest.fixture
def store(several_suites: Path) -> Iterator[Store]:
    with open_store(several_suites, read_only=True) as opened:
        yield opened


# ---------------------------------------------------------------- the rebuilding


def stored_values(store: Store, run_id: str, averaged: reports.Averaged, key: str) -> list[float]:
    """The defined per-instance values a cell of ``averaged`` averages, read plainly."""
    source = dict(averaged.sources).get(key, "") if averaged.by else ""
    if averaged.table == "instance_metrics":
        metric = averaged.stored.replace("{source}", source)
        _, rows = store.query(
            "SELECT value FROM instance_metrics WHERE run_id = ? AND metric = ?", [run_id, metric]
        )
    else:
        assert averaged.table == "rationales" and averaged.stored.isidentifier()
        gold = " AND gold_size > 0" if averaged.with_gold else ""
        _, rows = store.query(
            f"SELECT {averaged.stored} FROM rationales "
            f"WHERE run_id = ? AND source = ? AND seed = 0{gold}",
            [run_id, source],
        )
    values = [float(value) for (value,) in rows if value is not None]
    return [value for value in values if not math.isnan(value)]


def rebuilt_cells(store: Store, name: str) -> tuple[int, list[str]]:
    """Check every declared cell of report ``name``; (cells checked, what did not match)."""
    report = reports.get_report(name)
    result = report.run(store, {"run_ids": []})
    columns = result.columns
    n_of = reports.count_columns(columns, report.counts)
    checked, wrong = 0, []
    for row in result.rows:
        cell = dict(zip(columns, row, strict=True))
        for averaged in report.averages:
            if any(str(cell[column]) != value for column, value in averaged.rows):
                continue
            key = str(cell[averaged.by]) if averaged.by else ""
            at = columns.index(averaged.column)
            shown, n_at = row[at], n_of.get(at)
            where = f"{name} · {cell['run']} · {key or '-'} · {averaged.column}"
            if key in averaged.other_rule:
                continue
            checked += 1
            if averaged.by and key not in dict(averaged.sources):
                if shown is not None:  # (a row this mean does not belong to)
                    wrong.append(f"{where}: {shown!r} where no such mean is")
                continue
            values = stored_values(store, str(cell["run"]), averaged, key)
            want = averaged.scale * sum(values) / len(values) if values else None
            if want is None and shown is not None:
                wrong.append(f"{where}: {shown!r}, none stored")
            elif want is not None and (shown is None or abs(float(shown) - want) > 1e-9):
                wrong.append(f"{where}: {shown!r}, the stored rows give {want!r}")
            if n_at is not None and (row[n_at] or 0) != len(values):
                wrong.append(f"{where}: n {row[n_at]!r}, the stored rows give {len(values)}")
    return checked, wrong


DECLARED = {name: report for name, report in sorted(reports.REPORTS.items()) if report.averages}


@pytest.mark.parametrize("name", sorted(DECLARED))
def test_every_declared_cell_is_rebuilt_from_the_stored_rows(store: Store, name: str) -> None:
    checked, wrong = rebuilt_cells(store, name)
    assert checked >= 2, f"{name}: the store gives it too few cells to check ({checked})"
    assert not wrong, "\n".join(wrong)


NOT_YET_DECLARED: dict[str, set[str]] = {
    "table1": set(),
    "classification": {"% mass < 0.5", "% correct", "% agree"},
    "rationales": {
        "IOU", "TOK micro", "% empty", "% out-of-text", "% ≠ k", "% mass < 0.5", "% no gold",
        "annotator IoU",
    },
    "rationale-faithfulness": {"% flip sd", "words removed"},
    "rationale-attribution": {
        "align F1 ×100", "± sd", "% flip", "% flip sd", "words removed", "skew sd",
        "quant gap mean", "quant gap max",
    },
}  # fmt: skip
"""Number columns of the declaring reports that are no plain mean of stored rows yet declared
(pooled rules, spreads over seeds, shares of answers): each is checked by its own report's
tests (tests/queries/, test_reports_rationales.py)."""


def test_the_declared_reports_name_every_number_column(store: Store) -> None:
    """A declaring report's number columns are its averages, their n columns or listed above:
    a column added to it is declared (and rebuilt) or listed, never silently unchecked."""
    assert {"table1", "classification", "rationales", "rationale-attribution"} <= set(DECLARED)
    assert "rationale-faithfulness" in DECLARED
    for name, report in DECLARED.items():
        result = report.run(store, {"run_ids": []})
        n_of = reports.count_columns(result.columns, report.counts)
        counts = {result.columns[n] for n in n_of.values()}
        numbers = {
            column
            for k, column in enumerate(result.columns)
            if any(isinstance(row[k], float) for row in result.rows)
        }
        declared = {averaged.column for averaged in report.averages}
        left = numbers - declared - counts - NOT_YET_DECLARED.get(name, set())
        assert not left, f"{name}: {sorted(left)} neither declared nor listed"
        assert declared <= set(result.columns), name


def test_the_store_holds_what_the_check_needs(store: Store) -> None:
    """Several suites' runs, the planted attributions each with numbers of its own."""
    _, runs = store.query("SELECT count(*) FROM runs")
    assert runs[0][0] == 3
    _, rows = store.query(
        "SELECT source, avg(comp) FROM rationales WHERE run_id = ? GROUP BY source", [RATIONALE_RUN]
    )
    by = {source: value for source, value in rows}
    values = [by[s] for s in ("occlusion", *ATTRIBUTION_FACTORS)]
    assert len(set(values)) == len(values)  # a value repeated across rows would show
