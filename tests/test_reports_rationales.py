# Over 400 lines because every rationales query is recomputed here from the same stored masks.
"""The rationales suite's named queries and reports (``rationale_*``; ``haf report --report
rationales`` and the metrics screen's panel 7) on a rationales run made through the real
runner with the scripted model of :mod:`tests.support.rationale_runs`.

Every aggregate is recomputed in Python from the stored ``rationales`` masks and the gold the
annotators' masks give (:func:`haf_tui.methods.rationales.core.truth.gold_rationale`), with the
method's own functions (:mod:`haf_tui.methods.rationales.core.metrics`), so a wrong filter, n,
pooling rule or NULL handling in the SQL changes a number the tests check.

The run (top-k, k = 3, 4 RANDOM seeds): h0 is P1's Table 5 post (3 annotators), h1 an insult
(2 annotators), h2 a friendly text without annotator rationales (no plausibility; an empty
prompted rationale; all-zero occlusion scores). The model answers every rationale prompt with
``idiot | illegal | worthless | liberals``.
"""

from __future__ import annotations

import json
import shutil
import statistics
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import TabbedContent

from haf_tui import reports
from haf_tui.cli import main
from haf_tui.cli.read_commands import suggest_instance
from haf_tui.methods.rationales.core import metrics
from haf_tui.methods.rationales.core.truth import Gold, gold_rationale
from haf_tui.methods.rationales.views import NO_RATIONALES
from haf_tui.store import RunRecord, Store, open_store
from haf_tui.tui import create_app
from haf_tui.tui.metrics_data import load_metrics_data
from haf_tui.tui.screens.metrics import MetricsScreen
from haf_tui.tui.widgets.metric_panels import render_panel
from tests.support import settle
from tests.support.rationale_runs import (
    DATASET_ID,
    RATIONALE_CONFIG,
    RUN_ID,
    rationale_db,
)
from tests.test_tui_metrics import cells, open_metrics, plain, shown

OTHER = "run-without-rationales"
EMPTY = "rationale-run-not-started"


def approx(value: float | None) -> Any:
    return None if value is None else pytest.approx(value, abs=1e-12)


# ---------------------------------------------------------------- the store


@pytest.fixture(scope="module")
def template_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The rationales run, built once per module through the real runner."""
    path = tmp_path_factory.mktemp("rationale-reports") / "template.duckdb"
    assert rationale_db(path) == RUN_ID
    return path


@pytest.fixture
def db(tmp_path: Path, template_db: Path) -> Path:
    """A private copy of the store (a test may add runs)."""
    path = tmp_path / "haf.duckdb"
    shutil.copyfile(template_db, path)
    return path


@pytest.fixture
def store(db: Path) -> Iterator[Store]:
    with open_store(db) as opened:
        yield opened


def add_run(store: Store, run_id: str, config_json: str) -> None:
    """A run with no instance done: ``{}`` is a HAF run; RATIONALE_CONFIG one not started."""
    store.create_run(
        RunRecord(
            run_id=run_id,
            status="created",
            dataset_id=DATASET_ID,
            n_planned=3,
            config_json=config_json,
            model_file="other.gguf",
            similarity_model="flat",
            similarity_kind="bi-encoder",
        )
    )


def records(store: Store, name: str, **params: Any) -> list[dict[str, Any]]:
    columns, rows = reports.run_named(store, name, params)
    assert len(set(columns)) == len(columns), f"{name} repeats a column name"
    return [dict(zip(columns, row, strict=True)) for row in rows]


def stored(store: Store, *sources: str) -> list[dict[str, Any]]:
    """The run's ``rationales`` rows of ``sources`` as dicts, by instance and seed."""
    columns, rows = store.query(
        "SELECT * FROM rationales WHERE run_id = ? AND list_contains(?, source) "
        "ORDER BY instance_id, seed",
        [RUN_ID, list(sources)],
    )
    return [dict(zip(columns, row, strict=True)) for row in rows]


def golds(store: Store) -> dict[str, Gold]:
    """The instances' gold rationales (those that have one) from their stored annotators."""
    found = {i.instance_id: gold_rationale(i.text, i.extra) for i in store.instances(DATASET_ID)}
    return {key: gold for key, gold in found.items() if isinstance(gold, Gold)}


def instance_values(store: Store, metric: str) -> dict[str, float]:
    _, rows = store.query(
        "SELECT instance_id, value FROM instance_metrics WHERE run_id = ? AND metric = ?",
        [RUN_ID, metric],
    )
    return {str(instance): float(value) for instance, value in rows}


def mean(values: list[float]) -> float:
    return sum(values) / len(values)


# ---------------------------------------------------------------- plausibility


def plausibility(rows: list[dict[str, Any]], gold: dict[str, Gold]) -> dict[str, Any]:
    """A rationale's dataset plausibility over the instances with a gold, in Python."""
    scored = [r for r in rows if r["instance_id"] in gold]
    preds = [r["mask"] for r in scored]
    hards = [gold[r["instance_id"]].hard for r in scored]
    ranks = [
        r["scores"] if r["scores"] is not None else [float(v) for v in r["mask"]] for r in scored
    ]
    hard_auprc = [
        metrics.auprc([float(v) for v in h], s) for h, s in zip(hards, ranks, strict=True)
    ]
    softs = (gold[r["instance_id"]].soft for r in scored)
    soft_auprc = [metrics.auprc(w, s) for w, s in zip(softs, ranks, strict=True)]
    iou = metrics.iou_f1(preds, hards)
    return {
        "n": len(scored),
        "iou_f1": iou.f1,
        "iou_precision": iou.precision,
        "iou_recall": iou.recall,
        "token_f1": mean([metrics.token_f1(p, h) for p, h in zip(preds, hards, strict=True)]),
        "token_f1_micro": metrics.micro_token_f1(preds, hards),
        "token_f1_union": mean(
            [metrics.token_f1(r["mask"], gold[r["instance_id"]].union) for r in scored]
        ),
        "auprc": mean([a for a in hard_auprc if a is not None]),
        "soft_auprc": mean([a for a in soft_auprc if a is not None]),
    }


def test_plausibility_of_prompted_and_occlusion(store: Store) -> None:
    gold = golds(store)
    assert sorted(gold) == ["h0", "h1"]  # h2 has no annotator rationale
    got = {r["rationale"]: r for r in records(store, "rationale_plausibility")}
    assert list(got) == ["prompted", "occlusion", "random"]
    for rationale, source in (("prompted", "prompt_gold"), ("occlusion", "occlusion")):
        row, want = got[rationale], plausibility(stored(store, source), gold)
        assert row["source"] == source and row["run_id"] == RUN_ID
        assert (row["model_file"], row["dataset_id"]) == ("scripted-rationales.gguf", DATASET_ID)
        assert (row["strategy"], row["variant"], row["gold"]) == ("top_k", "normal", "hard")
        assert row["selection"] == "top_k k=3"
        assert row["n"] == 2 and row["n_seeds"] == 1
        assert row["iou_precision_n"] == 2 and row["iou_recall_n"] == 2
        assert row["auprc_n"] == 2 and row["soft_auprc_n"] == 2
        for column, value in want.items():
            assert row[column] == approx(value), (rationale, column)
        assert row["alignment_f1_x100"] == approx(100 * want["token_f1"])
        assert row["token_f1_sd"] is None and row["alignment_f1_x100_sd"] is None
    # prompted: h0 names {illegal, idiot} (HARD has illegal), h1 {worthless, idiot} (both HARD)
    assert got["prompted"]["token_f1"] == approx((0.25 + 2 / 3) / 2)
    assert got["prompted"]["token_f1_micro"] == approx(2 * 3 / (4 + 10))


def test_random_baseline_is_a_mean_and_sd_over_seeds(store: Store) -> None:
    gold = golds(store)
    (row,) = [r for r in records(store, "rationale_plausibility") if r["rationale"] == "random"]
    rows = stored(store, "random")
    seeds = sorted({r["seed"] for r in rows})
    assert seeds == [0, 1, 2, 3] and row["n_seeds"] == 4 and row["n"] == 2
    per_seed = [plausibility([r for r in rows if r["seed"] == s], gold) for s in seeds]
    for column in ("iou_f1", "token_f1", "token_f1_micro", "auprc", "soft_auprc"):
        assert row[column] == approx(mean([p[column] for p in per_seed])), column
    f1s = [p["token_f1"] for p in per_seed]
    assert row["token_f1_sd"] == approx(statistics.stdev(f1s))
    assert row["iou_f1_sd"] == approx(statistics.stdev([p["iou_f1"] for p in per_seed]))
    assert row["alignment_f1_x100"] == approx(100 * mean(f1s))
    assert row["alignment_f1_x100_sd"] == approx(100 * statistics.stdev(f1s))
    for r in rows:  # RANDOM has the size of HARD (Top-Var)
        assert sum(r["mask"]) == sum(gold[r["instance_id"]].hard)


# ---------------------------------------------------------------- faithfulness


def test_faithfulness_with_every_baseline(store: Store) -> None:
    toxic = instance_values(store, "rationale_toxic")
    predicted = {key: "toxic" if value else "non-toxic" for key, value in toxic.items()}
    got = {r["rationale"]: r for r in records(store, "rationale_faithfulness")}
    assert list(got) == ["prompted", "occlusion", "human", "random", "everything"]
    sizes = {"prompted": 3, "occlusion": 3, "human": 2, "everything": 3}
    for rationale, source in (
        ("prompted", "prompt_predicted"),
        ("occlusion", "occlusion"),
        ("human", "human"),
        ("everything", "everything"),
    ):
        rows, row = stored(store, source), got[rationale]
        assert row["source"] == source and row["n"] == len(rows) == sizes[rationale]
        flips = [int(r["predicted_without"] != predicted[r["instance_id"]]) for r in rows]
        assert [r["flip"] for r in rows] == flips
        assert row["flip_rate"] == approx(metrics.flip_rate(flips)) and row["flip_n"] == len(rows)
        comps = [metrics.comprehensiveness(r["p_full"], r["p_without"]) for r in rows]
        assert row["comp"] == approx(mean(comps)) and row["comp_n"] == len(rows)
        suffs = [
            metrics.sufficiency(r["p_full"], r["p_only"]) for r in rows if r["p_only"] is not None
        ]
        if rationale == "everything":  # only R of every word is the text: 0 by definition
            assert row["suff"] == 0.0
        else:
            assert row["suff"] == approx(mean(suffs)) and row["suff_n"] == len(rows)
        assert row["words_removed"] == approx(mean([sum(r["mask"]) for r in rows]))
        assert row["n_seeds"] == 1 and row["flip_rate_sd"] is None
    # h2's prompted rationale is empty: nothing removed, comp 0 and no flip, without a call
    h2 = next(r for r in stored(store, "prompt_predicted") if r["instance_id"] == "h2")
    assert (h2["size"], h2["comp"], h2["flip"]) == (0, 0.0, 0)
    assert got["everything"]["words_removed"] == approx((17 + 18 + 10) / 3)


def test_random_flip_rate_is_a_mean_and_sd_over_seeds(store: Store) -> None:
    (row,) = [r for r in records(store, "rationale_faithfulness") if r["rationale"] == "random"]
    rows = stored(store, "random")
    rates = [
        metrics.flip_rate([r["flip"] for r in rows if r["seed"] == seed]) or 0.0
        for seed in range(4)
    ]
    comps = [mean([r["comp"] for r in rows if r["seed"] == seed]) for seed in range(4)]
    assert row["n_seeds"] == 4 and row["n"] == 2 and row["flip_n"] == 2
    assert row["flip_rate"] == approx(mean(rates))
    assert row["flip_rate_sd"] == approx(statistics.stdev(rates))
    assert row["comp"] == approx(mean(comps)) and row["comp_sd"] == approx(statistics.stdev(comps))
    assert row["suff"] is None and row["suff_n"] == 0  # RANDOM is only removed, never kept


# ---------------------------------------------------------------- complexity


def test_complexity_counts_the_undefined(store: Store) -> None:
    got = {r["source"]: r for r in records(store, "rationale_complexity")}
    assert list(got) == [
        "prompt_gold",
        "prompt_predicted",
        "occlusion",
        "human",
        "random",
        "everything",
    ]
    assert got["prompt_predicted"]["rationale"] == "prompted, ŷ shown"
    for source, row in got.items():
        rows = stored(store, source)
        scores = [r["scores"] if source == "occlusion" else r["mask"] for r in rows]
        entropies = [metrics.entropy(s) for s in scores]
        defined = [h for h in entropies if h is not None]
        assert row["n"] == len(rows) and row["cpx_entropy_n"] == len(defined), source
        assert row["n_undefined"] == len(rows) - len(defined)
        assert row["cpx_entropy"] == approx(mean(defined))
        norms = [h for s in scores if (h := metrics.entropy_norm(s)) is not None]
        assert row["cpx_entropy_norm"] == approx(mean(norms))
        ginis = [g for s in scores if (g := metrics.gini(s)) is not None]
        assert row["spr_gini"] == approx(mean(ginis)) and row["spr_gini_n"] == len(ginis)
        assert row["cpx_ratio"] == approx(mean([metrics.cpx_ratio(r["mask"]) for r in rows]))
        assert row["spr_ratio"] == approx(mean([metrics.spr_ratio(r["mask"]) for r in rows]))
    # h2: an empty prompted rationale and all-zero occlusion scores leave H and G undefined
    assert got["prompt_predicted"]["n_undefined"] == 1 and got["occlusion"]["n_undefined"] == 1
    assert got["random"]["n"] == 2 * 4  # instances × seeds
    assert got["everything"]["spr_gini"] == 0.0 and got["everything"]["cpx_entropy_norm"] == approx(
        1.0
    )


# ---------------------------------------------------------------- the summary (P1 Table 4)


def test_summary_is_p1_table4_with_the_shares(store: Store) -> None:
    gold = golds(store)
    prompted, occlusion = records(store, "rationale_summary")
    assert (prompted["rationale"], occlusion["rationale"]) == ("prompted", "occlusion")
    for row, plausible, faithful in (
        (prompted, "prompt_gold", "prompt_predicted"),
        (occlusion, "occlusion", "occlusion"),
    ):
        want = plausibility(stored(store, plausible), gold)
        assert row["n"] == 3 and row["n_gold"] == 2
        assert row["pct_skipped"] == approx(100 / 3)  # h2: rationale_has_gold = 0
        for column in ("iou_f1", "token_f1", "token_f1_micro", "auprc"):
            assert row[column] == approx(want[column]), column
        rows = stored(store, faithful)
        assert row["comp"] == approx(mean([r["comp"] for r in rows]))
        assert row["suff"] == approx(mean([r["suff"] for r in rows]))
        assert row["flip_rate"] == approx(metrics.flip_rate([r["flip"] for r in rows]))
        assert row["n_faithful"] == 3
        scores = [r["scores"] if faithful == "occlusion" else r["mask"] for r in rows]
        entropies = [h for s in scores if (h := metrics.entropy(s)) is not None]
        assert row["cpx"] == approx(mean(entropies)) and row["cpx_n"] == len(entropies) == 2
        ginis = [g for s in scores if (g := metrics.gini(s)) is not None]
        assert row["spr"] == approx(mean(ginis))
        assert row["pct_low_mass"] == 0.0  # the scripted label mass is 0.95
        annotators = [metrics.annotator_iou(g.masks) for g in gold.values()]
        assert row["annotator_iou"] == approx(mean([a for a in annotators if a is not None]))
        assert row["annotator_iou_n"] == 2
        by_instance = {r["instance_id"]: r["mask"] for r in stored(store, "occlusion")}
        aligned = [
            metrics.token_f1(r["mask"], by_instance[r["instance_id"]])
            for r in stored(store, "prompt_predicted")
        ]
        if row is occlusion:  # occlusion's own agreement with the prompted rationale
            assert row["agreement_f1"] == approx(mean(aligned)) and row["agreement_n"] == 3
        else:  # (the prompted rationale against itself: none)
            assert row["agreement_f1"] is None and row["agreement_n"] is None
        assert row["selection"] == "top_k k=3" and row["variant"] == "normal"
    # the answers (one call each: gold = ŷ here) name worthless / liberals, not in h0's text,
    # 2 of 3 in-text words (k = 3) in h0 and h1, none in h2 (an empty rationale)
    answers = stored(store, "prompt_gold")
    assert [r["size"] for r in answers] == [2, 2, 0]
    assert prompted["n_answers"] == 3 and prompted["n_with_k"] == 3
    assert prompted["pct_empty"] == approx(100 / 3)
    assert prompted["pct_out_of_text"] == 100.0 and prompted["pct_not_k"] == 100.0
    in_text = [len(r["words"]) - len(r["out_of_text"]) for r in answers]
    assert in_text == [2, 2, 0]
    assert occlusion["pct_empty"] == 0.0  # top-3 of every text
    assert occlusion["pct_out_of_text"] is None and occlusion["pct_not_k"] is None
    assert occlusion["n_answers"] is None


ATTRIBUTION_AGREEMENT = {"attention": [0.6, 0.5, 0.5], "saliency": [0.2, 0.2, 0.2]}
"""Planted per-instance agreements with the prompted rationale (issue 42 §3: 0.53 / 0.20 on
the attribution rows of a run whose prompted-vs-occlusion mean is another number)."""


def with_attributions(store: Store) -> None:
    """The run's occlusion rows copied as attention / saliency / input×gradient rows, and
    each attribution's own per-instance agreement stored (input×gradient's: none)."""
    for source in ("attention", "saliency", "input_x_gradient"):
        store.connection.execute(
            "CREATE OR REPLACE TEMP TABLE copied AS SELECT * FROM rationales "
            "WHERE run_id = ? AND source = 'occlusion'",
            [RUN_ID],
        )
        store.connection.execute("UPDATE copied SET source = ?", [source])
        store.connection.execute("INSERT INTO rationales SELECT * FROM copied")
    for source, values in ATTRIBUTION_AGREEMENT.items():
        for instance, value in zip(("h0", "h1", "h2"), values, strict=True):
            store.connection.execute(
                "INSERT INTO instance_metrics (run_id, instance_id, metric, value, n) "
                "VALUES (?, ?, ?, ?, 1)",
                [RUN_ID, instance, f"rationale_alignment_f1_{source}", value],
            )


def test_each_rationale_row_shows_its_own_agreement_with_the_prompted(store: Store) -> None:
    with_attributions(store)
    by = {r["rationale"]: r for r in records(store, "rationale_summary", run_ids=[RUN_ID])}
    assert list(by) == ["prompted", "occlusion", "attention", "saliency", "input×gradient"]
    occlusion = instance_values(store, "rationale_alignment_f1")
    assert by["occlusion"]["agreement_f1"] == approx(mean(list(occlusion.values())))
    for source, label in (("attention", "attention"), ("saliency", "saliency")):
        values = ATTRIBUTION_AGREEMENT[source]
        assert by[label]["agreement_f1"] == approx(mean(values)), label
        assert by[label]["agreement_n"] == 3
    assert by["input×gradient"]["agreement_f1"] is None  # none stored: no number, n 0
    assert by["input×gradient"]["agreement_n"] == 0
    assert by["prompted"]["agreement_f1"] is None
    shown = reports.run_report(store, "rationales", {"run_ids": [RUN_ID]})
    assert shown.columns.count("agree F1") == 1 and "align F1" not in shown.columns
    attribution = reports.run_report(store, "rationale-attribution", {"run_ids": [RUN_ID]})
    assert "agree F1" not in attribution.columns  # P2's alignment has its own name


def test_haf_report_defines_agreement_apart_from_alignment(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with open_store(db) as store:
        with_attributions(store)
    args = ["--db", str(db), "report", "--run", RUN_ID, "--report", "rationales"]
    assert main([*args, "--columns", "all"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "agree F1: token F1 of the row's rationale against the prompted one" in out
    assert "align F1 ×100: 100 · token F1 against the annotators" in out


def test_only_runs_with_the_suite_and_the_filter(store: Store) -> None:
    add_run(store, OTHER, "{}")  # a HAF run: in none of the rationale queries
    add_run(store, EMPTY, RATIONALE_CONFIG.model_dump_json())  # the suite, nothing done yet
    summary = records(store, "rationale_summary")
    assert [(r["run_id"], r["rationale"]) for r in summary] == [
        (EMPTY, "prompted"),
        (EMPTY, "occlusion"),
        (RUN_ID, "prompted"),
        (RUN_ID, "occlusion"),
    ]  # (model other.gguf before scripted-rationales.gguf)
    empty = summary[0]
    assert (empty["n"], empty["n_gold"], empty["n_faithful"], empty["n_answers"]) == (0, 0, 0, 0)
    assert empty["iou_f1"] is None and empty["token_f1"] is None and empty["pct_skipped"] is None
    for name in ("rationale_plausibility", "rationale_faithfulness", "rationale_complexity"):
        assert {r["run_id"] for r in records(store, name)} == {RUN_ID}, name
    assert records(store, "rationale_summary", run_ids=[OTHER]) == []
    only = records(store, "rationale_summary", run_ids=["rationale-run-n"])  # a unique prefix
    assert {r["run_id"] for r in only} == {EMPTY}
    assert {r["run_id"] for r in records(store, "rationale_faithfulness", run_ids=[RUN_ID])} == {
        RUN_ID
    }


# ---------------------------------------------------------------- reports and haf report

REPORT_COLUMNS = {
    "rationales": [
        "model", "dataset", "run", "selection", "prompt", "rationale", "instances", "with gold",
        "IOU", "TOK", "TOK micro", "COMP", "SUFF", "% flip", "faithful n", "AUPRC", "CPX H",
        "SPR G", "CPX n", "answers", "% empty", "% out-of-text", "% ≠ k", "% mass < 0.5",
        "% no gold", "annotator IoU", "agree F1", "agree n", "instances by gold label",
        "undecided",
        "tokens ≠ text", "bad-mask posts skipped",
    ],
    "rationale-plausibility": [
        "model", "dataset", "run", "selection", "prompt", "gold", "rationale", "instances",
        "seeds", "IoU-F1", "IoU P", "IoU P n", "IoU R", "IoU R n", "token F1", "token F1 sd",
        "token F1 micro", "token F1 UNION", "AUPRC", "soft AUPRC", "AUPRC n", "align F1 ×100",
        "align F1 ×100 sd",
    ],
    "rationale-faithfulness": [
        "model", "dataset", "run", "selection", "prompt", "rationale", "instances", "seeds",
        "COMP", "COMP n", "SUFF", "SUFF n", "% flip", "% flip sd", "flip n", "words removed",
    ],
    "rationale-complexity": [
        "model", "dataset", "run", "selection", "prompt", "rationale", "rationales", "CPX H",
        "CPX H n", "CPX H/ln n", "SPR G", "SPR G n", "CPX |R̂|/n", "SPR 1−|R̂|/n", "Σv = 0",
    ],
}  # fmt: skip
REPORT_QUERIES = {
    "rationales": "rationale_summary",
    "rationale-plausibility": "rationale_plausibility",
    "rationale-faithfulness": "rationale_faithfulness",
    "rationale-complexity": "rationale_complexity",
}


def test_the_reports_are_registered_with_readable_columns(store: Store) -> None:
    for name, columns in REPORT_COLUMNS.items():
        report = reports.get_report(name)
        assert report.query == REPORT_QUERIES[name] and not report.summary
        result = reports.run_report(store, name, {"run_ids": [RUN_ID]})
        assert result.columns == columns, name
        assert len(result.rows) == len(records(store, report.query)), name
    shown = reports.run_report(store, "rationales")
    row = dict(zip(shown.columns, shown.rows[0], strict=True))
    assert (row["run"], row["rationale"], row["instances"], row["with gold"]) == (
        RUN_ID,
        "prompted",
        3,
        2,
    )
    assert row["TOK"] == approx((0.25 + 2 / 3) / 2)
    assert [r.name for r in reports.summary_reports()] == ["table1", "table2", "table4"]


def test_haf_report_rationales(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--db", str(db), "report", "--run", RUN_ID[:9], "--report", "rationales"]
    assert main([*args, "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)  # (one document: the report and its companion)
    assert list(document) == ["rationales", "rationale-attribution"]
    assert document["rationale-attribution"]
    rows = document["rationales"]
    assert [(r["run"], r["rationale"]) for r in rows] == [
        (RUN_ID, "prompted"),
        (RUN_ID, "occlusion"),
    ]
    assert rows[0]["TOK"] == approx((0.25 + 2 / 3) / 2) and rows[0]["% no gold"] == approx(100 / 3)
    assert main([*args, "--columns", "all"]) == 0  # (every column; by default those that fit)
    out = " ".join(capsys.readouterr().out.split())
    assert "Rationales — P1 Table 4 per model × dataset × strategy" in out
    for label in ("IOU", "TOK", "COMP", "SUFF", "AUPRC", "CPX H", "SPR G", "% out-of-text"):
        assert label in out, label
    assert "0.458" in out  # TOK of the prompted rationale
    # the hint haf report ends with: the reports not just shown (issue 25 §7)
    assert "--report rationales," not in out and "--report rationales (" not in out
    details = "--report rationale-plausibility (details: --report rationale-faithfulness, "
    assert f"the run holds no HAF suite: haf report --run {RUN_ID} {details}" in out
    for name in REPORT_COLUMNS:
        assert main(["--db", str(db), "report", "--report", name, "--format", "csv"]) == 0
        assert RUN_ID in capsys.readouterr().out


def test_the_hint_names_the_report_of_each_suite(store: Store) -> None:
    from rich.console import Console

    def hint() -> str:
        console = Console(width=300, record=True, color_system=None)
        suggest_instance(store, RUN_ID, console)
        return console.export_text()

    assert "--report rationales" in hint() and "--report classification" not in hint()
    store.connection.execute(
        'UPDATE runs SET config = json_merge_patch(config, \'{"suites": ["classify"]}\')'
    )
    said = hint()
    assert "holds no HAF suite: haf report --run" in said and "--report classification" in said
    assert "--report rationales" not in said


# ---------------------------------------------------------------- the metrics screen (key 7)


def test_the_panel_shows_the_summary_and_which_runs_lack_the_suite(
    store: Store, tmp_path: Path
) -> None:
    add_run(store, OTHER, "{}")
    data = load_metrics_data(store)
    runs = {run.run_id: run for run in data.runs}
    text = plain(render_panel("rationales", data, [runs[RUN_ID]], width=160), width=160)
    assert "Rationales — P1 Table 4" in text
    assert cells(text, "rationale") == ["prompted", "occlusion"]
    assert cells(text, "TOK") == [f"{(0.25 + 2 / 3) / 2:.3f}", f"{(4 / 9 + 4 / 7) / 2:.3f}"]
    assert cells(text, "% no gold") == ["33.333", "33.333"]
    assert "IOU: IoU-F1" in text and "? defines each" in " ".join(text.split())
    both = plain(render_panel("rationales", data, list(runs.values()), width=160), width=160)
    assert f"without the rationales suite (not shown): other · {DATASET_ID} · {OTHER}" in both
    alone = plain(render_panel("rationales", data, [runs[OTHER]], width=160), width=160)
    assert "none of the chosen runs holds the rationales suite" in alone
    with open_store(tmp_path / "haf-only.duckdb") as haf_only:  # no run holds the suite
        haf_only.save_dataset(DATASET_ID, "HateXplain (mini)", "tests", [])
        add_run(haf_only, OTHER, "{}")
        empty = load_metrics_data(haf_only)
    text = plain(render_panel("rationales", empty, empty.runs, width=120), width=120)
    assert " ".join(NO_RATIONALES.split()) in " ".join(text.split())


async def test_key_7_opens_the_rationales_panel(db: Path) -> None:
    app = create_app(db)
    async with app.run_test(size=(200, 60)) as pilot:
        screen = await open_metrics(pilot, MetricsScreen([RUN_ID]))
        tabs = screen.query_one("#mx-tabs", TabbedContent)
        assert tabs.active == "table1"
        await pilot.press("7")
        await settle(pilot)
        assert tabs.active == "rationales"
        text = shown(screen, "rationales")
        assert cells(text, "run") == [RUN_ID, RUN_ID]
        assert cells(text, "rationale") == ["prompted", "occlusion"]
        assert cells(text, "instances") == ["3", "3"] and cells(text, "with gold") == ["2", "2"]
        assert cells(text, "% empty") == ["33.333", "0.000"]
        assert cells(text, "% out-of-text") == ["100.000", "—"]
        await pilot.press("right_square_bracket")  # on to the judge panel (8)
        assert tabs.active == "judge"
        await pilot.press("left_square_bracket")
        assert tabs.active == "rationales"


def test_adaptive_random_weighs_each_instance_alike_and_takes_the_sd_over_common_seeds(
    db: Path,
) -> None:
    import duckdb

    with duckdb.connect(str(db)) as con:  # one instance stopped after 2 seeds, one asked 4
        (first,) = con.execute(
            "SELECT min(instance_id) FROM rationales WHERE source = 'random'"
        ).fetchone() or (None,)
        con.execute(
            "DELETE FROM rationales WHERE source = 'random' AND instance_id = ? AND seed >= 2",
            [first],
        )
    with open_store(db) as store:
        rows = stored(store, "random")
        (row,) = [r for r in records(store, "rationale_faithfulness") if r["rationale"] == "random"]
        (plausible,) = [
            r for r in records(store, "rationale_plausibility") if r["rationale"] == "random"
        ]
    by_instance: dict[str, list[float]] = {}
    for r in rows:
        by_instance.setdefault(r["instance_id"], []).append(r["comp"])
    assert sorted(len(v) for v in by_instance.values()) == [2, 4]
    assert row["comp"] == approx(mean([mean(v) for v in by_instance.values()]))
    common = [mean([r["comp"] for r in rows if r["seed"] == seed]) for seed in range(2)]
    assert row["n_seeds"] == 2 and row["comp_sd"] == approx(statistics.stdev(common))
    assert plausible["n_seeds"] == 2
