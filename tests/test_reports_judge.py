"""The judge suite's reports (issue 15): ``judge``, ``judge-vs-haf`` (+ its ρ summary),
``judge-mass``, ``haf report --report judge`` and ``haf judge sensitivity``, on judge runs made
through the real runner with scripted models (:mod:`tests.support.judge_runs`).

The fixture's judge (``VaryingJudge``) gives instance n: Overall 1 + n mod 5 (instance 1's
Overall labels all get p 0.05, so its label is the first, 1, and its mass 0.25), Supports b
(a mismatch with the toxic stance) when n mod 3 = 0, Factual N/A on odd n. Every number the
tests check is recomputed here from the stored instance metrics with the method's own
functions (:func:`haf_tui.methods.judge.core.criteria.normalised_score`,
:func:`haf_tui.methods.judge.core.metrics.spearman`), and a few by hand.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from haf_tui import reports
from haf_tui.cli import main
from haf_tui.config import DecodingSettings
from haf_tui.inference.base import GeneratedToken, Generation, TokenCallback
from haf_tui.messages import ChatMessage
from haf_tui.methods.judge.core.criteria import CRITERION_IDS, normalised_score
from haf_tui.methods.judge.core.metrics import spearman
from haf_tui.methods.judge.reports.tables import SCORED, SHORT_NAMES, TARGET_MARK, sensitivity_table
from haf_tui.methods.judge.settings import JudgeSettings
from haf_tui.store import Store, open_store
from tests.support import one_line_error
from tests.support.judge_runs import (
    JUDGE_RUN,
    N_INSTANCES,
    REASONS,
    SOURCE_RUN,
    VaryingJudge,
    favourite,
    instance_number,
    judge_store,
)


@pytest.fixture(scope="module")
def judge_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("judge") / "j.duckdb"
    judge_store(path).close()
    return path


@pytest.fixture
def store(judge_db: Path) -> Any:
    with open_store(judge_db, read_only=True) as opened:
        yield opened


def metrics_of(store: Store, run_id: str) -> dict[str, dict[str, float]]:
    found: dict[str, dict[str, float]] = {}
    rows = store.query(
        "SELECT instance_id, metric, value FROM instance_metrics WHERE run_id = ?", [run_id]
    )[1]
    for instance_id, metric, value in rows:
        found.setdefault(str(instance_id), {})[str(metric)] = value
    return found


def as_dicts(result: reports.ReportResult) -> list[dict[str, Any]]:
    return [dict(zip(result.columns, row, strict=True)) for row in result.rows]


def approx(value: float | None) -> Any:
    return None if value is None else pytest.approx(value, abs=1e-12)


# ---------------------------------------------------------------- judge


def test_the_judge_report_matches_the_stored_labels(store: Store) -> None:
    (row,) = as_dicts(reports.run_report(store, "judge"))
    judged = metrics_of(store, JUDGE_RUN)
    assert len(judged) == N_INSTANCES
    assert row["run"] == JUDGE_RUN and row["model"] == "judge.gguf"
    assert row["judged"] == "scripted"  # the source run's model
    assert row["dataset"] == f"explanations-{SOURCE_RUN}"
    assert (row["prompt"], row["mode"], row["instances"]) == ("verbatim", "constrained", 6)
    for crit in SCORED:
        scores = [normalised_score(crit, int(m[f"judge_{crit}"])) for m in judged.values()]
        defined = [s for s in scores if s is not None]
        heading = SHORT_NAMES[crit]
        assert row[heading] == approx(sum(defined) / len(defined)), crit
        assert row[f"{heading} n"] == len(defined), crit
    # by hand: Overall codes 1, 1 (instance 1: a tie, the first label), 3, 4, 5, 1
    assert row["Overall"] == pytest.approx((0 + 0 + 0.5 + 0.75 + 1 + 0) / 6)
    assert row["Factual n"] == 3  # N/A on odd instances: left out
    assert row["Unnecessary"] == 1.0  # always "no": inverted to 1
    assert row["New info"] == pytest.approx((0 + 1 + 2 + 3 + 0 + 1) / 3 / 6)
    # Supports b on instances 0 and 3 against their toxic stance
    assert row["% Supports ≠ stance"] == pytest.approx(100 * 2 / 6)
    assert (row["stances"], row["maybe"]) == (6, 0)
    # one label-mass warning: instance 1's Overall (5 × 0.05)
    assert row["% instances with mass < 0.5"] == pytest.approx(100 / 6)
    assert (row["labels with mass < 0.5"], row["labels"]) == (1, 8 * 6)
    assert row["% failed"] is None and row["failed"] is None  # constrained: nothing fails


def test_the_mass_report_lists_the_forced_labels(store: Store) -> None:
    (row,) = as_dicts(reports.run_report(store, "judge-mass"))
    assert (row["run"], row["instance"], row["criterion"]) == (JUDGE_RUN, "i1", "overall")
    assert row["mass"] == pytest.approx(0.25) and row["code"] == 1
    rows = reports.run_report(store, "judge-mass", {"mass_threshold": 0.9}).rows
    assert len(rows) > 1  # the threshold is a parameter


def test_a_non_judge_run_has_no_judge_rows(store: Store) -> None:
    assert reports.run_report(store, "judge", {"run_ids": [SOURCE_RUN]}).rows == []
    assert reports.run_report(store, "judge-vs-haf", {"run_ids": [SOURCE_RUN]}).rows == []


class ForgetfulJudge(VaryingJudge):
    """Free answers without line 6 (New information) on even instances, and "Somewhat" for
    Related on instance 1: 4 of 48 criterion answers fail."""

    def generate(self, messages: Sequence[ChatMessage], settings: DecodingSettings, *,
                 on_token: TokenCallback | None = None) -> Generation:  # fmt: skip
        n = instance_number(messages)
        lines = [f"{k}. {favourite(k, n)}" for k in range(1, 9)]
        if n % 2 == 0:
            lines = [line for line in lines if not line.startswith("6.")]
        if n == 1:
            lines[3] = "4. Somewhat"
        return Generation("p", 10, "\n".join(lines), [], "stop", 0.0)


def test_free_mode_failures_and_no_mass(tmp_path: Path) -> None:
    with judge_store(
        tmp_path / "free.duckdb", JudgeSettings(mode="free"), model=ForgetfulJudge()
    ) as store:
        (row,) = as_dicts(reports.run_report(store, "judge"))
        assert row["mode"] == "free"
        assert row["% failed"] == pytest.approx(100 * 4 / 48) and row["failed"] == 4
        assert row["New info n"] == 3 and row["Related n"] == 5
        assert row["% instances with mass < 0.5"] is None and row["labels"] is None
        # free mode: the favourite labels, no tie on instance 1 (Overall 1 + n mod 5)
        assert row["Overall"] == pytest.approx((0 + 0.25 + 0.5 + 0.75 + 1 + 0) / 6)


# ---------------------------------------------------------------- judge vs HAF


def test_judge_vs_haf_joins_each_explanation_with_its_sos_and_dis(store: Store) -> None:
    rows = as_dicts(reports.run_report(store, "judge-vs-haf"))
    judged, source = metrics_of(store, JUDGE_RUN), metrics_of(store, SOURCE_RUN)
    assert [r["instance"] for r in rows] == [f"i{n}" for n in range(N_INSTANCES)]
    for row in rows:
        mine, haf = judged[row["instance"]], source[row["instance"]]
        scores = [normalised_score(c, int(mine[f"judge_{c}"])) for c in SCORED]
        defined = [s for s in scores if s is not None]
        assert row["Overall"] == mine["judge_overall"]
        assert row["Overall E"] == approx(mine["judge_overall_expected"])
        assert row["mean"] == approx(sum(defined) / len(defined))
        assert row["criteria"] == len(defined)
        assert row["Supports = stance"] == mine["judge_supports_matches"]
        assert row["min mass"] == approx(min(v for k, v in mine.items() if k.endswith("_mass")))
        assert row["SoS"] == approx(haf["sos"]) and row["DiS"] == approx(haf["dis"])
        assert (row["source run"], row["judged"], row["stance"]) == (
            SOURCE_RUN,
            "scripted",
            "toxic",
        )
    assert [r["Supports = stance"] for r in rows] == [0, 1, 1, 0, 1, 1]
    assert rows[1]["Overall E"] == pytest.approx(3.0)  # uniform over 1..5


def test_the_summary_is_spearman_of_the_rows(store: Store) -> None:
    rows = as_dicts(reports.run_report(store, "judge-vs-haf"))
    (summary,) = as_dicts(reports.run_report(store, "judge-vs-haf-summary"))
    assert summary["run"] == JUDGE_RUN and summary["instances"] == 6
    assert summary["Supports ≠ stance"] == 2
    for judge, haf in (("Overall", "SoS"), ("Overall", "DiS"), ("mean", "SoS"), ("mean", "DiS")):
        heading = f"ρ({judge}, {haf})"
        expected = spearman([r[judge] for r in rows], [r[haf] for r in rows])
        assert expected is not None
        assert summary[heading] == pytest.approx(expected) and summary[f"{heading} n"] == 6
    # by hand: SoS falls with n, so its ranks are 6..1; Overall 1, 1, 3, 4, 5, 1 has ranks
    # 2, 2, 4, 5, 6, 2: ρ = Pearson of the ranks
    ranks_sos, ranks_overall = [6, 5, 4, 3, 2, 1], [2, 2, 4, 5, 6, 2]
    mean = 3.5
    cov = sum((a - mean) * (b - mean) for a, b in zip(ranks_sos, ranks_overall, strict=True))
    var_a = sum((a - mean) ** 2 for a in ranks_sos)
    var_b = sum((b - mean) ** 2 for b in ranks_overall)
    assert summary["ρ(Overall, SoS)"] == pytest.approx(cov / math.sqrt(var_a * var_b))


# ---------------------------------------------------------------- the command line


def test_haf_report_judge(judge_db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--db", str(judge_db), "report", "--report", "judge", "--format", "json"]) == 0
    out = capsys.readouterr().out
    assert '"% Supports ≠ stance": 33.33' in out and '"Overall": 0.375' in out
    argv = ["--db", str(judge_db), "report", "--run", JUDGE_RUN, "--report", "judge"]
    assert main([*argv, "--columns", "all"]) == 0  # (by default: the columns that fit)
    out = capsys.readouterr().out
    assert "Judge — ACORN criteria" in out and "0.375" in out and "33.333" in out
    assert f"haf report --run {JUDGE_RUN} --report judge" in out  # what to look at next


def test_haf_report_judge_vs_haf_prints_its_summary(
    judge_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--db", str(judge_db), "report", "--report", "judge-vs-haf", "--format", "csv"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.count("model,judged,source run,run") == 2  # the rows, then the summary
    assert "ρ(Overall, SoS)" in out and "i5" in out


class EditAwareJudge(VaryingJudge):
    """Reacts to the explanation like a careful rater: Related = no when the explanation
    lacks the first sentence of this text's reasons (a borrowed explanation), New information = none
    for a single sentence (a truncated one), else some; every other label as VaryingJudge."""

    def score(
        self,
        messages: Sequence[ChatMessage],
        forced: str,
        settings: DecodingSettings,
        *,
        on_token: TokenCallback | None = None,
        reply_prefix: str = "",
    ) -> Generation:
        n = instance_number(messages)
        number = int(reply_prefix.splitlines()[-1].split(".")[0])
        content = "\n".join(m.content for m in messages)
        explanation = content[content.rfind("EXPLANATION:") :]
        if number == 4:
            own = REASONS[n % 3][0].split(".")[0]  # the first sentence of its own reasons
            liked = forced == ("yes" if own in explanation else "no")
        elif number == 6:
            one = len(re.findall(r"[A-Za-z][.!?](?=\s|$)", explanation)) == 1  # not "1. "
            liked = forced == ("none" if one else "some")
        else:
            liked = forced == favourite(number, n)
        logprob = math.log(0.8) if liked else math.log(0.05)
        token = GeneratedToken(1, forced.encode(), forced, 0, 0, logprob)
        return Generation("p" + reply_prefix, 10, forced, [token], "forced", 0.0)


@pytest.fixture(scope="module")
def edits_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("edits") / "e.duckdb"
    judge_store(path, JudgeSettings(prompt="default"), edits=True, model=EditAwareJudge()).close()
    return path


def test_the_sensitivity_matrix_of_an_edits_run(edits_db: Path) -> None:
    with open_store(edits_db, read_only=True) as store:
        result = sensitivity_table(store, JUDGE_RUN)
        (judge_row,) = as_dicts(reports.run_report(store, "judge"))
    assert judge_row["instances"] == 6  # the edited copies are not counted
    rows = {row[0]: dict(zip(result.columns, row, strict=True)) for row in result.rows}
    assert list(rows) == ["related", "new_info"]
    # every explanation borrows another text's reasons; the two of 4 sentences are cut
    assert rows["related"]["pairs"] == 6 and rows["new_info"]["pairs"] == 2
    for edit in ("related", "new_info"):
        for crit in CRITERION_IDS:
            cell = rows[edit][SHORT_NAMES[crit]]
            if crit == edit:
                assert cell == f"100.0 {TARGET_MARK}"
            else:
                assert cell == "0.0", (edit, crit)


def test_haf_judge_sensitivity(
    edits_db: Path, judge_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--db", str(edits_db), "judge", "sensitivity", "--run", JUDGE_RUN]) == 0
    out = capsys.readouterr().out
    assert "Sensitivity to explanation edits" in out
    assert f"100.0 {TARGET_MARK}" in out and "new_info" in out and "related" in out
    # a judge run without edits, a run without the judge, no such run: one line each
    assert main(["--db", str(judge_db), "judge", "sensitivity", "--run", JUDGE_RUN]) == 2
    assert "edits:RUN_ID" in one_line_error(capsys)
    assert main(["--db", str(judge_db), "judge", "sensitivity", "--run", SOURCE_RUN]) == 2
    assert "holds no judge suite" in one_line_error(capsys)
    assert main(["--db", str(judge_db), "judge", "sensitivity", "--run", "nope"]) == 2
    assert "nope" in one_line_error(capsys)
