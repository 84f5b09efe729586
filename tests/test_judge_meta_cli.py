"""``haf judge meta`` on a 12-item ACORN-format file says what its numbers are (issue 25 §7):
the interval α shown, each Avg with how many criteria it averages, the units of the label-mass
columns, a warning when the answer format forced the labels (one function for ``haf judge
meta`` and ``haf report --report judge``), no suggestion of the command just run, and Fig.
4.3's gain with its spread over the draws."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from haf_tui.cli import main
from haf_tui.config import DecodingSettings, RunConfig
from haf_tui.inference.base import GeneratedToken, Generation, TokenCallback
from haf_tui.messages import ChatMessage
from haf_tui.methods.judge.core.criteria import CRITERION_IDS
from haf_tui.methods.judge.core.meta import AVG, alpha_table, extra_rater_table
from haf_tui.methods.judge.core.metrics import extra_rater_curve
from haf_tui.methods.judge.reports import tables as judge_reports
from haf_tui.methods.judge.reports.meta import meta_items, meta_tables
from haf_tui.methods.judge.settings import JudgeSettings
from haf_tui.pipeline.runner import HafRunner
from haf_tui.store import Store, open_store
from haf_tui.store.records import RunRecord
from tests.support.acorn_rows import COPA_CHOICES, COPA_Q, write_rows
from tests.support.judge_runs import VaryingJudge, favourite, instance_number
from tests.test_scheduler import FlatSimilarity

N_ITEMS = 12
YES_NO = ("no", "yes")


def _acorn_row(k: int) -> dict[str, Any]:
    """Item k: five workers whose ratings vary with k (no voted ratings: the importer votes)."""

    def worker(w: int) -> dict[str, Any]:
        return {
            "supports": "ab"[(k + (w == 4)) % 2],
            "overall": 1 + (k + (w == 2)) % 5,
            "well_written": YES_NO[(k + w) % 3 != 0],
            "related": YES_NO[(k * w) % 4 != 1],
            "factual": ("N/A", "no", "yes")[(k + w // 2) % 3],
            "new_info": ("none", "some", "sufficient", "ample")[(k + (w == 3)) % 4],
            "unnecessary_info": YES_NO[(k + w) % 4 == 0],
            "contrastive": YES_NO[(k + 2 * w) % 3 == 0],
        }

    return {
        "id": f"acorn-{k:04d}",
        "question": COPA_Q,
        "choices": COPA_CHOICES,
        "label": k % 2,
        "explanation": f"Explanation text {k}: opening a faucet lets water flow out.",
        "worker_ratings": {f"W{w}": worker(w) for w in range(5)},
    }


class ForcedJudge(VaryingJudge):
    """Overall as :class:`VaryingJudge` (its favourite at p = 0.8); every other criterion's
    labels all at p = 0.01: the answer format forced them (mass < 0.5), as the embedded model
    does on seven criteria."""

    def score(
        self,
        messages: Sequence[ChatMessage],
        forced: str,
        settings: DecodingSettings,
        *,
        on_token: TokenCallback | None = None,
        reply_prefix: str = "",
    ) -> Generation:
        number = int(reply_prefix.splitlines()[-1].split(".")[0])
        if number == 2:
            liked = favourite(number, instance_number(messages)) == forced
            probability = 0.8 if liked else 0.05
        else:
            probability = 0.01
        token = GeneratedToken(1, forced.encode(), forced, 0, 0, math.log(probability))
        return Generation("p" + reply_prefix, 10, forced, [token], "forced", 0.0)


def _judge(store: Store, run_id: str, dataset_id: str) -> None:
    config = RunConfig(
        dataset_id=dataset_id, suites=("judge",), judge=JudgeSettings(prompt="default")
    )
    store.create_run(
        RunRecord(
            run_id=run_id, status="created", dataset_id=dataset_id, n_planned=N_ITEMS,
            config_json=config.model_dump_json(), model_file="judge.gguf",
            similarity_model="flat", similarity_kind="bi-encoder",
        )
    )  # fmt: skip
    runner = HafRunner(store, ForcedJudge(), FlatSimilarity(), config)
    assert runner.run(run_id).status == "finished"


@pytest.fixture(scope="module")
def acorn_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("acorn12")
    acorn = write_rows(folder / "ACORN.jsonl", [_acorn_row(k) for k in range(N_ITEMS)])
    db = folder / "haf.duckdb"
    assert main(["--db", str(db), "datasets", "import", "acorn", "--file", str(acorn)]) == 0
    with open_store(db) as store:
        ((dataset_id, n),) = store.query("SELECT dataset_id, count(*) FROM instances GROUP BY 1")[1]
        assert n == N_ITEMS
        _judge(store, "judged", dataset_id)
    return db


def _out(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert main(argv) == 0
    return " ".join(capsys.readouterr().out.split())


@pytest.fixture(autouse=True)
def _wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "250")  # every heading on one line


def test_judge_meta_shows_the_interval_alpha(
    acorn_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _out(["--db", str(acorn_db), "judge", "meta", "--run", "judged"], capsys)
    assert "Table 4.1, interval level" in out
    with open_store(acorn_db, read_only=True) as store:
        _, items = meta_items(store, "judged")
    rows = {r.criterion: r for r in alpha_table(items)}
    (interval,) = meta_tables(items, tables=("alpha_interval",))
    shown = {str(row[0]).split(" (")[0]: row for row in interval.rows}
    assert list(shown) == [c for c in CRITERION_IDS if c not in ("supports", "factual")] + [AVG]
    for criterion, row in shown.items():
        assert row[2:4] == (rows[criterion].human_interval, rows[criterion].llm_interval)
    human = rows["overall"].human_interval
    assert human is not None and human != rows["overall"].human  # ordinal ≠ interval here
    assert f"overall │ 12 │ {human:.3f}" in out  # shown


def test_each_avg_says_how_many_criteria_it_averages(
    acorn_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _out(["--db", str(acorn_db), "judge", "meta", "--run", "judged"], capsys)
    with open_store(acorn_db, read_only=True) as store:
        _, items = meta_items(store, "judged")
    (rho,) = meta_tables(items, tables=("rho",))
    defined = sum(1 for row in rho.rows[:-1] if row[2] is not None)
    assert defined < 8  # the forced criteria's labels are constant: ρ undefined
    assert rho.rows[-1][0] == f"{AVG} ({defined} of 8 defined)"
    assert f"{AVG} ({defined} of 8 defined)" in out


def test_judge_meta_warns_that_the_labels_were_forced(
    acorn_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _out(["--db", str(acorn_db), "judge", "meta", "--run", "judged"], capsys)
    with open_store(acorn_db, read_only=True) as store:
        warning = judge_reports.mass_warning(store, "judged")
    assert warning is not None
    assert f"{7 * N_ITEMS} of {8 * N_ITEMS} labels had mass < 0.5" in warning
    assert "7 of 8 criteria" in warning and "Overall" not in warning.split("criteria")[1]
    assert " ".join(warning.split()) in out
    # the judge report prints the same line, with the mass columns' units in their headings
    report = _out(["--db", str(acorn_db), "report", "--run", "judged", "--report", "judge"], capsys)
    assert " ".join(warning.split()) in report
    assert "% instances with mass < 0.5" in report and "labels with mass < 0.5" in report


def test_haf_report_judge_does_not_suggest_itself(
    acorn_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--db", str(acorn_db), "report", "--run", "judged", "--report", "judge"]
    out = _out(argv, capsys)
    assert "the run holds no HAF suite" in out
    assert "holds no HAF suite: haf report --run judged --report judge," not in out
    assert "--report judge, or" not in out
    assert "holds no HAF suite: `haf` (`make tui`)" in out


def test_the_gain_comes_with_its_spread_over_the_draws(
    acorn_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _out(["--db", str(acorn_db), "judge", "meta", "--run", "judged"], capsys)
    assert "gain min" in out and "gain max" in out
    with open_store(acorn_db, read_only=True) as store:
        _, items = meta_items(store, "judged")
    points = extra_rater_table(items, seed=0)
    overall = next(p for p in points if p.criterion == "overall" and p.raters == 2)
    low, high = overall.gain_range
    assert low is not None and high is not None and low <= (overall.gain or 0) <= high
    assert low < high  # 12 items: the draws disagree
    (curve,) = meta_tables(items, tables=("extra",))
    row = next(r for r in curve.rows if r[0] == "overall" and r[1] == 2)
    assert row[-2:] == (low, high)
    avg = next(r for r in curve.rows if str(r[0]).startswith(AVG) and r[1] == 2)
    assert avg[-2] is not None and avg[-2] <= avg[-1]


def test_each_draw_gain_is_that_draw_alone() -> None:
    """A draw's gain is ρ with the LLM − ρ without, in that draw (seed + i)."""
    units = [[1.0, 2.0, 2.0, 3.0, 1.0], [4.0, 4.0, 5.0, 3.0, 4.0], [2.0, 1.0, 1.0, 2.0, 3.0],
             [5.0, 4.0, 4.0, 5.0, 5.0], [3.0, 3.0, 2.0, 3.0, 4.0]]  # fmt: skip
    gold: list[float | None] = [1.0, 4.0, 2.0, 5.0, 3.0]
    llm: list[float | None] = [2.0, 4.0, 1.0, 5.0, 2.0]
    (point,) = extra_rater_curve(units, llm, gold, sizes=(1,), iterations=6, seed=3)
    assert len(point.gains) == 6
    for i, gain in enumerate(point.gains):
        (alone,) = extra_rater_curve(units, llm, gold, sizes=(1,), iterations=1, seed=3 + i)
        expected = (
            None if alone.humans is None or alone.with_llm is None
            else alone.with_llm - alone.humans
        )  # fmt: skip
        assert gain == pytest.approx(expected)
