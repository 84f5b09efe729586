"""Issue 27 §1–§2: a rationales run on HateXplain scores every post (normal and undecided ones
too), a post with a bad mask is a skipped row, the edge cases are counted in the report, both
span conventions of IoU-F1 are offered, the answer parser reads bulleted lists and phrases as
§3.4 says, and flips and the RANDOM and EVERYTHING baselines agree with hand computation."""

from __future__ import annotations

import math
import statistics
from pathlib import Path
from typing import Any

import pytest

from haf_tui import reports
from haf_tui.config import RunConfig
from haf_tui.datasets import load_paper_dataset
from haf_tui.datasets.stored import store_dataset
from haf_tui.methods.base import Reply, Task
from haf_tui.methods.classify.core.labels import SPELLINGS
from haf_tui.methods.rationales.core.metrics import random_mask
from haf_tui.methods.rationales.core.parsing import BEYOND_K, HEADING, OUTSIDE_LIST, parse_rationale
from haf_tui.methods.rationales.settings import RationaleSettings, rationale_settings
from haf_tui.methods.rationales.suite.plan import PROMPT, RationalePlan
from haf_tui.methods.rationales.suite.records import RationaleRecord, rows_of
from haf_tui.methods.rationales.tui.data import rationale_data
from haf_tui.methods.rationales.tui.view import rationale_lines
from haf_tui.methods.registry import settle_config
from haf_tui.pipeline.runner import HafRunner
from haf_tui.pipeline.runs import DatasetChoice, paper_selection, resolve_dataset
from haf_tui.store import open_store
from haf_tui.store.dataset_catalog import skipped_rows
from haf_tui.store.db import Store
from haf_tui.store.records import InstanceRecord, RunRecord
from tests.hatexplain_files import edge_case_posts
from tests.support.rationale_runs import ScriptedRationaleModel
from tests.test_rationales_suite import by_source, finish, text_of
from tests.test_scheduler import FlatSimilarity

CONFIG = RunConfig(
    suites=("rationales",), rationales=RationaleSettings(strategy="top_k", k=3, random_seeds=4)
)


def records(store: Store, name: str, **params: Any) -> list[dict[str, Any]]:
    columns, rows = reports.run_named(store, name, params)
    return [dict(zip(columns, row, strict=True)) for row in rows]


def run_scripted(store: Store, dataset: Any, config: RunConfig, run_id: str = "edge") -> str:
    """A rationales run of the scripted model over a dataset, through the real runner."""
    store_dataset(store, dataset)
    config = config.model_copy(update={"dataset_id": dataset.dataset_id})
    config = settle_config(config, store.instances(dataset.dataset_id, None))
    store.create_run(
        RunRecord(
            run_id=run_id,
            status="created",
            dataset_id=dataset.dataset_id,
            n_planned=len(dataset.instances),
            config_json=config.model_dump_json(),
            model_file="scripted-rationales.gguf",
            similarity_model="flat",
            similarity_kind="bi-encoder",
        )
    )
    runner = HafRunner(store, ScriptedRationaleModel(), FlatSimilarity(), config)
    assert runner.run(run_id).status == "finished"
    return run_id


def test_a_rationales_run_scores_every_post_and_counts_the_edge_cases(tmp_path: Path) -> None:
    path = edge_case_posts(tmp_path / "Data")
    assert paper_selection(("rationales",)) == "every_post"
    assert paper_selection(("haf", "rationales")) == "paper"
    choice = DatasetChoice("paper", "hate_explain", files=(str(path),))
    dataset = resolve_dataset(choice, None, suites=("rationales",))
    labels = sorted(str(i.label) for i in dataset.instances)
    assert labels == ["hatespeech", "normal", "normal", "offensive", "offensive", "undecided"]
    # the HAF paper's selection is unchanged: toxic posts of more than 64 characters
    haf = resolve_dataset(choice, None, suites=("haf", "rationales"))
    assert sorted(i.extra["post_id"] for i in haf.instances) == ["hate", "insult"]
    assert haf.skipped == [] and haf.dataset_id != dataset.dataset_id
    with open_store(tmp_path / "haf.duckdb") as store:
        run_id = run_scripted(store, dataset, CONFIG)
        # the bad mask: a skipped row with its reason (haf datasets show … --skipped)
        [(row, reason, excerpt)] = skipped_rows(store, dataset.dataset_id)
        assert row == 7 and reason.startswith("a rationale mask of the wrong length")
        assert "(masks of 5, 4 values for 5 tokens)" in reason
        assert excerpt == "you are a worthless idiot"
        # normal posts are scored: faithfulness and complexity, no plausibility
        by_post = {str(i.extra["post_id"]): i.instance_id for i in dataset.instances}
        columns, rows = store.query(
            "SELECT source, comp, flip, cpx_entropy, token_f1 FROM rationales "
            "WHERE run_id = ? AND instance_id = ?",
            [run_id, by_post["normal"]],
        )
        scored = {r[0]: dict(zip(columns, r, strict=True)) for r in rows}
        assert set(scored) == {"prompt_gold", "prompt_predicted", "occlusion", "everything"}
        assert scored["occlusion"]["comp"] is not None and scored["everything"]["flip"] == 0
        assert all(r["token_f1"] is None for r in scored.values())
        diagnostics = store.query(
            "SELECT instance_id, detail FROM parse_diagnostics WHERE kind = 'no gold rationale'"
        )[1]
        assert diagnostics == [(by_post["spaced"], "text is not the post tokens joined by spaces")]
        # the report: instances per gold label and the edge cases
        summary = records(store, "rationale_summary")
        assert len(summary) == 2
        for line in summary:
            assert line["n"] == 6 and line["n_gold"] == 2
            assert line["n_by_label"] == "hatespeech 1, normal 2, offensive 2, undecided 1"
            assert (line["n_undecided"], line["n_tokens_mismatch"], line["n_bad_mask"]) == (1, 1, 1)


def test_a_paper_selection_run_counts_labels_as_toxic_or_not(tmp_path: Path) -> None:
    path = edge_case_posts(tmp_path / "Data")
    dataset = load_paper_dataset("hate_explain", files=[path])  # the HAF paper's selection
    with open_store(tmp_path / "haf.duckdb") as store:
        run_scripted(store, dataset, CONFIG)
        [first, _] = records(store, "rationale_summary")
        assert first["n_by_label"] == "toxic 2" and first["n_bad_mask"] == 0


# ------------------------------------------------------------------ span conventions


def _spans_instance(name: str, n: int, gold: list[int]) -> InstanceRecord:
    tokens = [f"{name}{i}" for i in range(n)]
    extra = {"post_tokens": tokens, "rationales": [gold]}
    return InstanceRecord(
        instance_id=name, position=0, text=" ".join(tokens), label="hatespeech", extra=extra
    )


def _answered(plan: RationalePlan, answer: str) -> list[tuple[Task, Reply]]:
    """Every task of the plan answered: the rationale prompts with ``answer``, every text
    scored as non-toxic (no listed word is toxic)."""
    pending, made = list(plan.start()), []
    while pending:
        task = pending.pop(0)
        if task.stage == PROMPT:
            reply = Reply(answer)
        else:
            spelling, label = SPELLINGS[task.sub_index % 4]
            p = 0.2 if label == "toxic" else 0.8
            reply = Reply(spelling, math.log(p * (0.9 if spelling.islower() else 0.05)))
        made.append((task, reply))
        pending += plan.advance(task, reply)[0]
    return made


@pytest.mark.parametrize(("spans", "expected"), [("runs", 6 / 7), ("tokens", 0.4)])
def test_both_span_conventions_give_the_spec_s_iou_f1(spans: str, expected: float) -> None:
    """RATIONALES.md §8 example 4: runs 0.857143, each predicted token its own span 0.4."""
    config = RunConfig(
        suites=("rationales",),
        rationales=RationaleSettings(strategy="unbound", random_seeds=0, spans=spans),
    )
    cases = [
        (_spans_instance("w", 8, [0, 1, 1, 0, 0, 0, 1, 0]), "w1 | w6 | w7"),
        (_spans_instance("v", 10, [0, 0, 1, 1, 1, 1, 0, 0, 0, 0]), "v2 | v3 | v9"),
    ]
    precisions, recalls = [], []
    for record, answer in cases:
        outcome = finish(_answered(RationalePlan(record, config), answer), record, config)
        row = by_source(rows_of(outcome))["prompt_gold"]
        assert row.iou_precision is not None and row.iou_recall is not None
        precisions.append(row.iou_precision)
        recalls.append(row.iou_recall)
    precision, recall = statistics.mean(precisions), statistics.mean(recalls)
    assert 2 * precision * recall / (precision + recall) == pytest.approx(expected)


def test_the_span_convention_is_stored_with_the_run_and_old_runs_read_runs() -> None:
    from haf_tui.cli import build_parser
    from haf_tui.cli.run_command import _config

    args = build_parser().parse_args(
        ["run", "--suite", "rationales", "--rationale-spans", "tokens"]
    )
    config = _config(args)
    assert (
        rationale_settings(RunConfig.model_validate_json(config.model_dump_json())).spans
        == "tokens"
    )
    old = RunConfig(suites=("rationales",)).model_dump(mode="json")
    del old["settings"]["rationales"]["spans"]  # a run stored before the option
    assert rationale_settings(RunConfig.model_validate(old)).spans == "runs"


# ------------------------------------------------------------------ the answer parser

CLOSING = (
    "Here are the top 3 key words:\n\n* vermin\n* those people\n* filth\n\n"
    "These key words are not only found in the text, but they also show contempt."
)
VERMIN = ["those", "people", "are", "vermin", "and", "filth", "and", "should", "leave"]


def test_a_bulleted_answer_s_closing_remark_is_not_read_as_words() -> None:
    parsed = parse_rationale(CLOSING, VERMIN, 3)
    assert parsed.words == ("vermin", "those", "people", "filth")
    assert parsed.out_of_text == ()
    assert [VERMIN[i] for i, v in enumerate(parsed.mask) if v] == [
        "those",
        "people",
        "vermin",
    ]  # fmt: skip  (the first 3 words in the model's order: vermin, those, people)
    assert not parsed.matches_k  # (4 in-text words named)
    dropped = {item.text[:9]: item.reason for item in parsed.items if not item.kept}
    assert dropped == {"Here are ": HEADING, "These key": OUTSIDE_LIST, "filth": BEYOND_K}


def test_a_phrase_gives_its_words_and_the_limit_counts_words() -> None:
    """§3.3-§3.4: "those people" gives two words; a top-3 mask marks at most 3 words (P2: no
    method could mask more than the specified number)."""
    tokens = ["those", "people", "are", "animals", "and", "vermin"]
    parsed = parse_rationale("those people | animals | vermin | and", tokens, 3)
    assert [tokens[i] for i, v in enumerate(parsed.mask) if v] == [
        "those", "people", "animals",
    ]  # fmt: skip
    assert parsed.in_text == 5 and not parsed.matches_k
    kept = [(item.text, item.words, item.reason) for item in parsed.items]
    assert kept == [
        ("those people", ("those", "people"), ""),
        ("animals", ("animals",), ""),
        ("vermin", ("vermin",), BEYOND_K),
        ("and", ("and",), BEYOND_K),
    ]


def test_the_explorer_shows_how_the_answer_was_read() -> None:

    parsed = parse_rationale(CLOSING, VERMIN, 3)
    row = RationaleRecord(
        "r", "i", "prompt_predicted", label_shown="toxic", k=3, mask=list(parsed.mask),
        words=list(parsed.words), out_of_text=[],
    )  # fmt: skip
    data = rationale_data("i", " ".join(VERMIN), {}, [row], {}, {0: CLOSING})
    text = "\n".join(t.plain for t in rationale_lines(data, 120))
    assert "read as:" in text
    assert "✓ those people → those people" not in text  # (a phrase's words as they are)
    assert "✓ those people" in text and "✓ vermin" in text
    assert "✗ Here are the top 3 key words: — a line ending with ':'" in text
    assert "✗ These key words are not only found in the text, but" in text
    assert "… — not a line of the list" in text


# ------------------------------------------------------------------ flips and baselines

WEIGHTS = {"idiot": 2.0, "illegal": 1.0}
BIAS = -1.5
FLIP_TOKENS = ["idiot", "and", "illegal", "people"]


def _logit(text: str) -> float:
    return BIAS + sum(w for word, w in WEIGHTS.items() if word in text.split())


def _sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


def test_flips_and_the_random_and_everything_baselines_by_hand() -> None:
    """p(toxic) = σ(−1.5 + 2·[idiot] + 1·[illegal]): the full text is toxic (σ(1.5)); removing
    idiot flips it (−0.5 or −1.5), removing anything else does not."""
    seeds = 12
    record = InstanceRecord(
        instance_id="f",
        position=0,
        text=" ".join(FLIP_TOKENS),
        label="hatespeech",
        extra={"post_tokens": FLIP_TOKENS, "rationales": [[1, 0, 0, 0], [1, 0, 0, 1]]},
    )  # fmt: skip  (HARD = {idiot, people}: SOFT 1, 0, 0, 0.5)
    config = RunConfig(
        suites=("rationales",),
        rationales=RationaleSettings(strategy="top_k", k=1, random_seeds=seeds),
    )
    plan = RationalePlan(record, config)
    pending, made = list(plan.start()), []
    while pending:
        task = pending.pop(0)
        if task.stage == PROMPT:
            reply = Reply("illegal")
        else:
            p = _sigmoid(_logit(text_of(task)))
            spelling, label = SPELLINGS[task.sub_index % 4]
            share = 0.9 if spelling.islower() else 0.05
            reply = Reply(spelling, math.log((p if label == "toxic" else 1 - p) * share))
        made.append((task, reply))
        pending += plan.advance(task, reply)[0]
    outcome = finish(made, record, config)
    rows = by_source(rows_of(outcome))
    p_full = _sigmoid(1.5)
    # EVERYTHING: the empty text, σ(−1.5): a flip, comp = σ(1.5) − σ(−1.5)
    everything = rows["everything"]
    assert everything.flip == 1 and everything.predicted_without == "non-toxic"
    assert everything.comp == pytest.approx(p_full - _sigmoid(-1.5))
    # HUMAN removes idiot and people: σ(−0.5), a flip
    assert rows["human"].flip == 1
    assert rows["human"].comp == pytest.approx(p_full - _sigmoid(-0.5))
    # the prompted rationale (illegal) does not flip: σ(0.5) is still toxic
    prompted = rows["prompt_predicted"]
    assert prompted.flip == 0 and prompted.comp == pytest.approx(p_full - _sigmoid(0.5))
    # occlusion top-1 is idiot (a = L(x) − L(x without idiot) = 2): a flip
    assert rows["occlusion"].mask == [1, 0, 0, 0] and rows["occlusion"].flip == 1
    # RANDOM: 2 of 4 words per seed; a flip exactly when idiot is among them
    randoms = sorted((r for r in rows_of(outcome) if r.source == "random"), key=lambda r: r.seed)
    assert len(randoms) == seeds
    expected_flips = []
    for seed, row in enumerate(randoms):
        mask = random_mask(4, 2, seed)
        assert row.mask == list(mask) and row.size == 2
        removed_logit = BIAS + 2.0 * (1 - mask[0]) + 1.0 * (1 - mask[2])
        expected_flips.append(1 if mask[0] else 0)
        assert row.flip == expected_flips[-1]
        assert row.comp == pytest.approx(p_full - _sigmoid(removed_logit))
    assert 0 < sum(expected_flips) < seeds  # flips occur, and not on every seed
