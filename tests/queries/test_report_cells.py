"""Every number cell of every registered report, rebuilt (issue 42 §3): each report declares
how its number columns come from stored per-instance rows (``Report.averages``,
:class:`reports.Averaged`: a mean, a share, a standard deviation or a count), and this check
rebuilds each such cell, and its n, from the stored rows in plain Python
(``tests/support/report_cells.py``) that shares no SQL with the report, on a scripted store
holding several suites: the hand-made HAF runs of ``tests/support/report_store.py`` (run A
with classify's metrics, run B with some), the scripted rationales run of
``tests/support/rationale_runs.py`` and, planted on it, attention / saliency /
input×gradient rationales whose every number differs from occlusion's, and the HAF run and
judge run of ``tests/support/judge_runs.py`` (nudged so each criterion's mean is its own, and
one SoS undefined where DiS is not).

A report added later is covered by declaring its averages; every number cell of every
registered report is rebuilt, the n of a rebuilt one, or its column is listed below with
why, so a new column is a choice, not an oversight. A value repeated on rows it does not
belong to, two columns swapped and a wrong n each fail it."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from haf_tui import reports
from haf_tui.methods.judge.reports.tables import SCORED, SHORT_NAMES
from haf_tui.store import Store, open_store
from tests.support.judge_runs import JUDGE_RUN, SOURCE_RUN, judge_store
from tests.support.rationale_runs import RUN_ID as RATIONALE_RUN
from tests.support.rationale_runs import store_rationale_run
from tests.support.report_cells import rebuilt_cells
from tests.support.report_store import A, B, add_classifications, build_store

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
        if position == 0:  # (the quantisation gaps: a mean of |value| and a maximum)
            for instance, gap in (("h0", -0.03), ("h1", 0.02)):
                con.execute(
                    "INSERT INTO instance_metrics (run_id, instance_id, metric, value, n) "
                    "VALUES (?, ?, 'rationale_quant_gap', ?, 1)",
                    [RATIONALE_RUN, instance, gap],
                )
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
    store = judge_store(path)  # (a HAF run "source" and a judge run of it)
    try:
        for metric, changed, first in (
            ("judge_related", "0", 1),  # (each criterion's mean its own: 5/6, …)
            ("judge_contrastive", "1 - value", 1),
            ("judge_unnecessary_info", "1", 2),
            ("judge_factual", "CASE WHEN value = -1 THEN 0 ELSE value END", 2),  # (3/4, n 4)
            ("judge_new_info", "NULL", 1),  # (n 5)
        ):
            store.connection.execute(
                f"UPDATE instance_metrics SET value = {changed} WHERE run_id = ? AND metric = ? "
                "AND instance_id IN (SELECT DISTINCT instance_id FROM instance_metrics "
                f"WHERE run_id = ? ORDER BY instance_id LIMIT {first})",
                [JUDGE_RUN, metric, JUDGE_RUN],
            )
        store.connection.execute(  # (one SoS undefined where DiS is not: their n differ)
            "UPDATE instance_metrics SET value = NULL WHERE run_id = ? AND metric = 'sos' "
            "AND instance_id = 'i1'",
            [SOURCE_RUN],
        )
        build_store(store)
        add_classifications(store)  # (run A: mean p(toxic) 0.5 = the share of ŷ toxic)
        store.connection.execute(  # (a HateXplain class: % correct is no % ŷ toxic)
            "UPDATE instances SET label = 'normal' WHERE dataset_id = 'toy' AND instance_id = 'i2'"
        )
        for instance, p_toxic, mass, toxic in (("i1", 0.7, 0.35, 1.0), ("i2", 0.45, 0.3, 0.0)):
            for metric, value in (  # (run B: neither)
                ("classify_p_toxic", p_toxic),
                ("classify_label_mass", mass),
                ("classify_toxic", toxic),
            ):
                store.connection.execute(
                    "INSERT INTO instance_metrics VALUES (?, ?, ?, ?, 1)",
                    [B, instance, metric, value],
                )
        store_rationale_run(store)
        store.connection.execute(  # (a SUFF and a label mass of their own: no column all 0)
            "UPDATE rationales SET suff = 0.12, p_only = p_full - 0.12 WHERE run_id = ? "
            "AND source = 'occlusion' AND instance_id = 'h1'",
            [RATIONALE_RUN],
        )
        store.connection.execute(
            "UPDATE instance_metrics SET value = 0.3 WHERE run_id = ? "
            "AND metric = 'rationale_label_mass' AND instance_id = 'h2'",
            [RATIONALE_RUN],
        )
        plant_attributions(store)
        store.connection.execute(  # (a text without R unscored: no COMP, no flip, while
            # SUFF is defined: words removed and the rationales report's faithfulness leave
            # the row out; its SUFF and size differ from the others')
            "UPDATE rationales SET p_without = NULL, predicted_without = NULL, comp = NULL, "
            "flip = NULL WHERE run_id = ? AND ((source = 'prompt_predicted' "
            "AND instance_id = 'h0') OR (source = 'random' AND instance_id = 'h1'))",
            [RATIONALE_RUN],
        )
    finally:
        store.close()
    return path


@pytest.fixture
def store(several_suites: Path) -> Iterator[Store]:
    with open_store(several_suites, read_only=True) as opened:
        yield opened


DECLARED = {name: report for name, report in sorted(reports.REPORTS.items()) if report.averages}


@pytest.mark.parametrize("name", sorted(DECLARED))
def test_every_declared_cell_is_rebuilt_from_the_stored_rows(store: Store, name: str) -> None:
    checked, wrong, _ = rebuilt_cells(store, name)
    assert checked >= 2, f"{name}: the store gives it too few cells to check ({checked})"
    assert not wrong, "\n".join(wrong)


_RATIONALE_TESTS = "tests/test_reports_rationales.py"
NOT_YET_DECLARED: dict[str, dict[str, str]] = {
    "compare": {"*": "a value and n column per run (named after it): tests/test_compare_suites.py"},
    "compare-ci": {"*": "bootstrap intervals and Wilcoxon tests: tests/test_compare_stats.py"},
    "contradictions": {
        "with new reasons": "a NO answer with rows in the reasons table: test_query_files.py",
        "% of NO": "with new reasons / Y = NO: test_query_files.py",
    },
    "rationales": {
        "IOU": "2PR/(P+R) of two pooled means, no mean of rows: " + _RATIONALE_TESTS,
        "TOK micro": "2·ΣTP/(Σ|R̂|+Σ|R|), a ratio of sums: " + _RATIONALE_TESTS,
        "% empty": "shares of the prompted answers (one per call, gold and ŷ shown one call "
        "when equal), not of stored rationale rows: " + _RATIONALE_TESTS,
        "% out-of-text": "as % empty",
        "% ≠ k": "as % empty",
        "answers": "the n of % empty: as % empty",
        "% no gold": "(instances − with gold) / instances of two counts: " + _RATIONALE_TESTS,
        "undecided": "gold-label counts of the dataset: tests/test_rationales_edge_cases.py",
        "tokens ≠ text": "as undecided",
        "bad-mask posts skipped": "the dataset's skipped rows: as undecided",
    },
    "rationale-plausibility": {
        "IoU-F1": "as IOU of rationales",
        "token F1 micro": "as TOK micro of rationales",
    },
    "judge": {
        "maybe": "instances whose source stance (in the dataset's extra) is maybe: "
        "tests/test_reports_judge.py",
        "% instances with mass < 0.5": "instances with any label's mass < 0.5: "
        "tests/test_reports_judge.py",
        "labels with mass < 0.5": "as % instances with mass < 0.5",
        "labels": "every label's mass row: as % instances with mass < 0.5",
    },
    "judge-vs-haf": {
        "mean": "a mean over one instance's criteria (not over instances): "
        "tests/test_reports_judge.py",
        "criteria": "the n of mean",
        "min mass": "a minimum over one instance's labels: tests/test_reports_judge.py",
    },
    "judge-vs-haf-summary": {
        "*": "Spearman ρ of judge-vs-haf's rows and their pair counts: tests/test_reports_judge.py",
    },
}  # fmt: skip
"""Number columns of the registered reports that no declaration rebuilds, each with why (and
where it is checked instead)."""


def number_columns(result: reports.ReportResult) -> set[str]:
    """The columns holding a number (int or float, not a flag) on some row."""
    return {
        column
        for k, column in enumerate(result.columns)
        if any(isinstance(row[k], int | float) and not isinstance(row[k], bool)
               for row in result.rows)
    }  # fmt: skip


@pytest.mark.parametrize("name", sorted(reports.REPORTS))
def test_every_number_cell_is_rebuilt_or_listed(store: Store, name: str) -> None:
    """Every number cell of every registered report, on every row, is rebuilt by a
    declaration (or is the checked n of one) or its column is listed above with its reason:
    a column added to a report is declared or listed, never silently unchecked."""
    report = reports.get_report(name)
    result = report.run(store, {"run_ids": []})
    listed = NOT_YET_DECLARED.get(name, {})
    if "*" in listed:  # (a report whose columns are named after its runs, or no means)
        assert not report.averages, f"{name}: listed whole yet declares averages"
        return
    assert result.rows, f"{name}: the store gives it no rows"
    _, _, covered = rebuilt_cells(store, name)
    numbers = number_columns(result)
    assert set(listed) <= numbers, f"{name}: listed yet no number column: {set(listed) - numbers}"
    unchecked = set()
    for at_row, row in enumerate(result.rows):
        for k, column in enumerate(result.columns):
            number = isinstance(row[k], int | float) and not isinstance(row[k], bool)
            if number and column not in listed and (at_row, column) not in covered:
                unchecked.add(column)
    assert not unchecked, f"{name}: {sorted(unchecked)} neither rebuilt nor listed"
    declared = {averaged.column for averaged in report.averages}
    assert declared <= set(result.columns), name


@pytest.mark.parametrize("name", sorted(DECLARED))
def test_no_two_columns_hold_the_same_numbers(store: Store, name: str) -> None:
    """Two columns of a declaring report swapped would show: no two of its number columns
    (one of them rebuilt, one of them not a count) hold the same value on every row."""
    report = reports.get_report(name)
    result = report.run(store, {"run_ids": []})
    declared = {averaged.column for averaged in report.averages}
    numbers = [k for k, column in enumerate(result.columns) if column in number_columns(result)]
    alike = [
        (result.columns[i], result.columns[j])
        for i, j in itertools.combinations(numbers, 2)
        if declared & {result.columns[i], result.columns[j]}
        and any(isinstance(row[k], float) for row in result.rows for k in (i, j))
        and all(row[i] == row[j] for row in result.rows)
    ]
    assert not alike, f"{name}: columns alike on every row of the store: {alike}"


def test_the_store_holds_what_the_check_needs(store: Store) -> None:
    """Several suites' runs, the planted attributions each with numbers of its own."""
    _, runs = store.query("SELECT count(*) FROM runs")
    assert runs[0][0] == 5
    _, rows = store.query(
        "SELECT source, avg(comp) FROM rationales WHERE run_id = ? GROUP BY source", [RATIONALE_RUN]
    )
    by = {source: value for source, value in rows}
    values = [by[s] for s in ("occlusion", *ATTRIBUTION_FACTORS)]
    assert len(set(values)) == len(values)  # a value repeated across rows would show
    judged = reports.run_report(store, "judge", {"run_ids": [JUDGE_RUN]})
    means = [judged.rows[0][judged.columns.index(SHORT_NAMES[c])] for c in SCORED]
    assert len(set(means)) == len(means), means  # two criteria swapped would show
    _, defined = store.query(
        "SELECT count(value) FILTER (WHERE metric = 'sos'), "
        "count(value) FILTER (WHERE metric = 'dis') FROM instance_metrics WHERE run_id = ?",
        [SOURCE_RUN],
    )
    assert defined[0][0] == defined[0][1] - 1  # SoS's n and DiS's n swapped would show
    classified = reports.run_report(store, "classification", {"run_ids": [A]})
    shares = [classified.rows[0][classified.columns.index(c)] for c in ("% ŷ toxic", "% correct",
              "% agree")]  # fmt: skip
    assert len(set(shares)) == 3, shares
