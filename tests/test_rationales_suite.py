"""The rationales suite's plan and results with a scripted model (pure, fast): which texts it
scores and when, that none is scored twice, that a replay in any order gives the same
results, and that each rationale's numbers follow the spec from the scores. The real path
(llama.cpp, DuckDB, a HateXplain file) is ``test_rationales_real``."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, cast

import pytest

from haf_tui.config import RunConfig
from haf_tui.methods.base import Answer, Reply, SuiteContext, Task
from haf_tui.methods.classify.core.labels import SPELLINGS
from haf_tui.methods.rationales.core.metrics import token_f1
from haf_tui.methods.rationales.core.prompts import rationale_prompt
from haf_tui.methods.rationales.settings import RationaleSettings, rationale_settings
from haf_tui.methods.rationales.suite.plan import (
    CLASSIFY,
    OCCLUSION,
    PERTURB,
    PROMPT,
    RationalePlan,
)
from haf_tui.methods.rationales.suite.records import RationaleRecord, rows_of
from haf_tui.methods.registry import SUITES, settle_config
from haf_tui.store.records import InstanceRecord
from tests.hatexplain_files import P1_MARKED, P1_TOKENS, mask

SUITE = SUITES["rationales"]
# P1 Table 5 (spec §8 example 2) with its three annotators
TOKENS = P1_TOKENS
MASKS = [mask(TOKENS, marked) for marked in P1_MARKED]
HARD = {4, 5, 7, 12, 13, 15}
TOXIC_WORDS = {"idiot": 2.0, "illegal": 1.0, "globalists": 0.5}


def instance(label: str | None = "hatespeech", masks: list[list[int]] | None = None) -> Any:
    extra = {"post_tokens": TOKENS, "rationales": MASKS if masks is None else masks}
    return InstanceRecord(
        instance_id="p1", position=0, text=" ".join(TOKENS), label=label, extra=extra
    )


def text_of(task: Task) -> str:
    content = task.messages[-1].content
    return content.split("```")[1]


def p_toxic(text: str) -> float:
    """The scripted model: each toxic word present raises the log-odds of toxic."""
    logit = -1.0 + sum(w for word, w in TOXIC_WORDS.items() if word in text.split())
    return 1 / (1 + math.exp(-logit))


def reply_to(task: Task, answer: str) -> Reply:
    if task.stage == PROMPT:
        return Reply(answer)
    p = p_toxic(text_of(task))
    spelling, label = SPELLINGS[task.sub_index % 4]
    share = 0.9 if spelling.islower() else 0.05
    return Reply(spelling, math.log((p if label == "toxic" else 1 - p) * share))


def drive(
    plan: RationalePlan, answer: str = "idiot | illegal | liberals", lifo: bool = False
) -> list[tuple[Task, Reply]]:
    """Answer every task the plan asks for (first in first out, or last in first out)."""
    pending = list(plan.start())
    made = []
    while pending:
        task = pending.pop() if lifo else pending.pop(0)
        reply = reply_to(task, answer)
        made.append((task, reply))
        more, _ = plan.advance(task, reply)
        pending += more
    return made


def finish(made: list[tuple[Task, Reply]], record: Any, config: RunConfig) -> Any:
    answers = [Answer(t.stage, t.sub_index, "", 0.0, (), r.logprob_sum, r.text) for t, r in made]
    context = SuiteContext("run", config, cast(Any, None))
    return SUITE.finish(context, record, answers)


def by_source(rows: list[RationaleRecord]) -> dict[str, RationaleRecord]:
    return {r.source: r for r in rows if r.source != "random"}


CONFIG = RunConfig(
    suites=("rationales",), rationales=RationaleSettings(strategy="top_k", k=2, random_seeds=5)
)


def test_every_text_is_scored_once_and_the_plan_counts_what_it_asked() -> None:
    plan = RationalePlan(instance(), CONFIG)
    made = drive(plan)
    forced = [t for t, _ in made if t.forced is not None]
    texts = [text_of(t) for t in forced]
    assert len(forced) == 4 * len(set(texts))  # four spellings per text, no text twice
    assert len({(t.stage, t.sub_index) for t, _ in made}) == len(made)
    counts = {s: sum(1 for t, _ in made if t.stage == s) for s in (CLASSIFY, OCCLUSION, PERTURB)}
    assert plan.planned() == {**counts, PROMPT: 1}
    assert counts[CLASSIFY] == 4 and counts[OCCLUSION] == 4 * 17
    prompts = [t for t, _ in made if t.stage == PROMPT]
    assert len(prompts) == 1 and prompts[0].greedy  # gold = predicted: one call serves both
    assert prompts[0].messages[-1].content == rationale_prompt(
        " ".join(TOKENS), "toxic", "normal", 2
    )


def test_occlusion_finds_the_words_the_model_reads_and_removing_them_flips_it() -> None:
    record = instance()
    outcome = finish(drive(RationalePlan(record, CONFIG)), record, CONFIG)
    rows = by_source(rows_of(outcome))
    occlusion = rows["occlusion"]
    assert occlusion.k == 2 and {i for i, v in enumerate(occlusion.mask) if v} == {4, 11}
    assert occlusion.scores is not None
    p_full = p_toxic(record.text)
    p_without_idiot = p_toxic(" ".join(t for t in TOKENS if t != "idiot"))
    log_odds = math.log(p_full / (1 - p_full)) - math.log(p_without_idiot / (1 - p_without_idiot))
    assert occlusion.scores[11] == pytest.approx(log_odds)
    assert occlusion.scores[0] == pytest.approx(0.0, abs=1e-12)
    without = " ".join(t for t in TOKENS if t not in ("idiot", "illegal"))
    assert occlusion.text_without == without and occlusion.text_only == "illegal idiot"
    assert occlusion.comp == pytest.approx(p_full - p_toxic(without))
    assert occlusion.suff == pytest.approx(p_full - p_toxic("illegal idiot"))
    assert occlusion.flip == 1 and occlusion.predicted_without == "non-toxic"
    # plausibility: top-2 {illegal, idiot} against HARD
    gold = [1 if i in HARD else 0 for i in range(17)]
    assert occlusion.token_f1 == pytest.approx(token_f1(occlusion.mask, gold))
    assert occlusion.gold_size == 6 and occlusion.true_positives == 1
    # the prompted answer: "liberals" is out of the text, k = 2 keeps illegal and idiot
    prompted = rows["prompt_predicted"]
    assert prompted.out_of_text == ["liberals"] and prompted.words == [
        "idiot",
        "illegal",
        "liberals",
    ]
    assert prompted.mask == occlusion.mask
    metrics = {name: value for name, value, _ in outcome.instance_metrics}
    assert metrics["rationale_alignment_f1"] == 1.0
    assert metrics["rationale_annotator_iou"] == pytest.approx(
        (5 / 9 + 5 / 6 + 4 / 9) / 3
    )  # pairwise token IoU of the three annotators
    assert metrics["rationale_has_gold"] == 1.0 and metrics["rationale_toxic"] == 1.0
    assert metrics["rationale_label_mass"] == pytest.approx(0.95)


def test_baselines_human_random_everything() -> None:
    record = instance()
    outcome = finish(drive(RationalePlan(record, CONFIG)), record, CONFIG)
    rows = by_source(rows_of(outcome))
    assert {i for i, v in enumerate(rows["human"].mask) if v} == HARD
    randoms = [r for r in rows_of(outcome) if r.source == "random"]
    assert [r.seed for r in randoms] == list(range(5))
    assert all(r.size == 6 and r.suff is None and r.flip in (0, 1) for r in randoms)
    everything = rows["everything"]
    assert everything.text_without == "" and everything.suff == 0.0
    assert everything.p_without == pytest.approx(p_toxic(""))
    assert everything.cpx_entropy == pytest.approx(math.log(17)) and everything.spr_gini == 0.0


def test_a_replay_in_another_order_gives_the_same_results() -> None:
    record = instance()
    fifo = finish(drive(RationalePlan(record, CONFIG)), record, CONFIG)
    lifo = finish(drive(RationalePlan(record, CONFIG), lifo=True), record, CONFIG)
    assert rows_of(fifo) == rows_of(lifo)
    assert fifo.instance_metrics == lifo.instance_metrics


def test_an_empty_rationale_changes_nothing_without_a_call() -> None:
    record = instance()
    plan = RationalePlan(record, CONFIG)
    made = drive(plan, answer="Sorry, none.")
    prompted = by_source(rows_of(finish(made, record, CONFIG)))["prompt_predicted"]
    assert prompted.size == 0 and prompted.comp == 0.0 and prompted.flip == 0
    assert prompted.text_only == "" and prompted.suff == pytest.approx(
        p_toxic(record.text) - p_toxic("")
    )


def test_the_gold_and_the_predicted_label_each_get_a_prompt_when_they_differ() -> None:
    record = instance(label="normal")  # gold non-toxic, the model says toxic
    made = drive(RationalePlan(record, CONFIG))
    prompts = sorted((t.sub_index, t.messages[-1].content) for t, _ in made if t.stage == PROMPT)
    assert [s for s, _ in prompts] == [0, 1]
    assert "labeled as non-toxic" in prompts[0][1] and "labeled as toxic." in prompts[1][1]
    rows = by_source(rows_of(finish(made, record, CONFIG)))
    assert rows["prompt_gold"].label_shown == "non-toxic"
    assert rows["prompt_predicted"].label_shown == "toxic"


def test_without_annotators_plausibility_and_top_var_are_skipped() -> None:
    record = InstanceRecord(instance_id="x", position=0, text="you are an idiot", label=None)
    config = RunConfig(suites=("rationales",), rationales=RationaleSettings(strategy="top_var"))
    plan = RationalePlan(record, config)
    made = drive(plan)
    assert not [t for t, _ in made if t.stage == PROMPT]  # Top-Var needs a human rationale
    outcome = finish(made, record, config)
    sources = sorted(r.source for r in rows_of(outcome))
    assert sources == ["everything", "occlusion"]
    assert all(r.token_f1 is None for r in rows_of(outcome))
    metrics = {name: value for name, value, _ in outcome.instance_metrics}
    assert metrics["rationale_has_gold"] == 0.0


def test_the_run_stores_the_dataset_s_ratio() -> None:
    config = settle_config(RunConfig(suites=("rationales",)), [instance()])
    assert rationale_settings(config).ratio == pytest.approx(6 / 17)
    given = RunConfig(suites=("rationales",), rationales=RationaleSettings(ratio=0.1))
    assert rationale_settings(settle_config(given, [instance()])).ratio == 0.1
    assert rationale_settings(settle_config(RunConfig(suites=("rationales",)), [])).ratio == 0.2


def test_underscore_removal_keeps_the_word_count() -> None:
    config = RunConfig(suites=("rationales",), rationales=RationaleSettings(removal="underscore"))
    plan = RationalePlan(instance(), config)
    texts = {text_of(t) for t in plan.start() if t.stage == OCCLUSION}
    assert all(len(t.split()) == 17 and t.count("_") == 1 for t in texts)


def test_a_rationales_run_through_the_runner_stores_every_rationale_and_resumes(
    tmp_path: Path,
) -> None:
    from haf_tui.pipeline.runner import HafRunner
    from haf_tui.store import open_store
    from tests.support.rationale_runs import (
        RATIONALE_CONFIG,
        RUN_ID,
        ScriptedRationaleModel,
        store_rationale_run,
    )
    from tests.test_scheduler import FlatSimilarity

    with open_store(tmp_path / "r.duckdb") as store:
        store_rationale_run(store)
        counts = dict(store.query("SELECT source, count(*) FROM rationales GROUP BY 1")[1])
        # h0, h1 with gold (human, 4 random seeds), h2 without; ŷ = gold label: one prompt each
        assert counts == {
            "prompt_gold": 3, "prompt_predicted": 3, "occlusion": 3, "everything": 3,
            "human": 2, "random": 8,
        }  # fmt: skip
        before = store.query("SELECT * FROM rationales ORDER BY ALL")[1]
        for table in ("instance_results", "instance_metrics", "rationales"):
            store.connection.execute(f"DELETE FROM {table} WHERE instance_id = 'h1'")
        for table in ("generations", "tokens", "parse_diagnostics"):
            store.connection.execute(
                f"DELETE FROM {table} WHERE instance_id = 'h1' "
                "AND stage IN ('rationale_prompt', 'rationale_perturb')"
            )
        model = ScriptedRationaleModel()
        runner = HafRunner(store, model, FlatSimilarity(), RATIONALE_CONFIG)
        assert runner.run(RUN_ID).status == "finished"
        assert len(model.prompts) == 1  # h1's prompt, nothing already stored
        assert {text for text, _ in model.scored} <= {
            r[0] for r in store.query("SELECT text_without FROM rationales")[1]
        } | {r[0] for r in store.query("SELECT text_only FROM rationales")[1]}
        assert store.query("SELECT * FROM rationales ORDER BY ALL")[1] == before
        keys = store.query("SELECT instance_id, stage, sub_index FROM generations")[1]
        assert len(keys) == len(set(keys))


def test_annotators_who_agree_on_nothing_give_no_gold_and_no_baselines() -> None:
    disjoint = [mask(TOKENS, {0}), mask(TOKENS, {1}), mask(TOKENS, {2})]  # SOFT 1/3: HARD empty
    record = instance(masks=disjoint)
    outcome = finish(drive(RationalePlan(record, CONFIG)), record, CONFIG)
    sources = sorted({r.source for r in rows_of(outcome)})
    assert sources == ["everything", "occlusion", "prompt_gold", "prompt_predicted"]
    assert all(r.token_f1 is None for r in rows_of(outcome))
    metrics = {name: value for name, value, _ in outcome.instance_metrics}
    assert metrics["rationale_has_gold"] == 0.0  # counted as skipped


def test_a_mask_of_the_wrong_length_is_an_error_record() -> None:
    from haf_tui.inference.base import Generation

    record = instance(masks=[[1, 0, 1]])
    task = next(iter(RationalePlan(record, CONFIG).start()))
    generation = Generation("p", 3, "toxic", [], "forced", 0.0)
    context = SuiteContext("run", CONFIG, cast(Any, None))
    stored = SUITE.record(context, record, task, 0, generation, None)
    assert stored.diagnostics == [("no gold rationale", "a rationale mask of the wrong length")]


def test_haf_and_rationales_in_one_run(tmp_path: Path) -> None:
    from haf_tui.store import open_store
    from tests.support.rationale_runs import RATIONALE_CONFIG, store_rationale_run

    config = RATIONALE_CONFIG.model_copy(update={"suites": ("haf", "rationales")})
    with open_store(tmp_path / "both.duckdb") as store:
        store_rationale_run(store, config)
        stages = dict(store.query("SELECT stage, count(*) FROM generations GROUP BY 1")[1])
        assert stages["justify"] == 3 and stages["rationale_classify"] == 12
        results = store.query("SELECT count(*), count(stance) FROM instance_results")[1]
        assert results == [(3, 3)]  # HAF decides each stance
        assert store.query("SELECT count(DISTINCT instance_id) FROM rationales")[1] == [(3,)]
