"""The judge's sensitivity edits (spec JUDGE.md §5.6), its answer grammar (§4.3) and
single-criterion calls (§1): pure parts, the edits dataset, the suite on a scripted judge and
the grammar on the real llama.cpp."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from haf_tui.methods.judge.core.criteria import CRITERION_IDS
from haf_tui.methods.judge.core.grammar import answer_grammar
from haf_tui.methods.judge.core.parsing import parse_judgement
from haf_tui.methods.judge.core.prompts import numbered_criteria, toxicity_item
from haf_tui.methods.judge.core.sensitivity import (
    borrowed,
    edited_id,
    sensitivity_matrix,
    sentences,
    split_edited_id,
    truncated,
)
from haf_tui.methods.judge.settings import JudgeSettings
from tests.support.judge_runs import JUDGE_RUN, REASONS, judge_store
from tests.test_judge_suite import FAVOURITE, ScriptedJudge


def test_sentences_and_the_new_info_truncation() -> None:
    four = ["It calls people names. It is rude! Is it hostile?", "It demeans a group."]
    assert sentences(four) == [
        "It calls people names.", "It is rude!", "Is it hostile?", "It demeans a group.",
    ]  # fmt: skip
    assert truncated(four) == ["It calls people names."]
    assert truncated(four[:1]) is None  # 3 sentences: not a candidate
    long_first = ["x" * 150 + ". b. c. d."]
    assert truncated(long_first) is None  # a first sentence of 150 characters or more


def test_related_edits_borrow_another_text_s_reasons() -> None:
    reasons = {"a": ["r1"], "b": ["r2"], "c": ["r2"], "d": ["r4"]}
    texts = {"a": "t1", "b": "t2", "c": "t3", "d": "t1"}
    edited = borrowed(reasons, texts, seed=3)
    assert edited == borrowed(reasons, texts, seed=3)  # seeded
    for item_id, new in edited.items():
        assert new != reasons[item_id]
    assert edited["a"] in (["r2"],)  # d shares a's text; b and c give r2
    assert edited["d"] == ["r2"]
    assert "b" in edited and edited["b"] != ["r2"]
    assert borrowed({"a": ["r"]}, {"a": "t"}) == {}  # no partner: no edit


def test_edited_ids_round_trip() -> None:
    assert split_edited_id(edited_id("i0", "related")) == ("i0", "related")
    assert split_edited_id("i0~other") == ("i0~other", None)
    assert split_edited_id("i0") == ("i0", None)


def test_the_matrix_counts_changed_labels_per_edit_and_criterion() -> None:
    base = dict.fromkeys(CRITERION_IDS, 1)
    codes: dict[str, dict[str, int | None]] = {
        "a": dict(base), "a~related": {**base, "related": 0},
        "b": dict(base), "b~related": {**base, "related": 1, "overall": None},
        "b~new_info": {**base, "new_info": 0, "overall": 3},
        "orphan~new_info": dict(base),
    }  # fmt: skip
    rows = {(r.edit, r.criterion): r for r in sensitivity_matrix(codes)}
    assert rows[("related", "related")].changed == 50.0 and rows[("related", "related")].targeted
    assert rows[("related", "overall")].n == 1 and rows[("related", "overall")].changed == 0.0
    assert rows[("new_info", "new_info")].changed == 100.0
    assert rows[("new_info", "overall")].changed == 100.0  # invariance broken
    assert rows[("new_info", "supports")].n == 1  # the orphan has no original
    assert not rows[("new_info", "overall")].targeted
    assert len(rows) == 2 * len(CRITERION_IDS)


def test_a_runs_explanations_are_the_judges_dataset_named_by_its_prefix(tmp_path: Path) -> None:
    from haf_tui.datasets import DatasetError
    from haf_tui.pipeline.runs import choice_by_name, resolve_dataset

    store = judge_store(tmp_path / "j.duckdb")
    choice = choice_by_name("run:source", None, store)
    assert (choice.kind, choice.name, choice.format) == ("run", "source", "run")
    dataset = resolve_dataset(dataclasses.replace(choice, seed=7), store)
    assert dataset.dataset_id == "explanations-source" and dataset.meta["seed"] == 0
    assert not any("~" in i.instance_id for i in dataset.instances)
    with pytest.raises(DatasetError) as error:
        choice_by_name("nothing", None, store)
    assert (
        "run:RUN_ID (its explanations), edits:RUN_ID (its explanations and their edits) or --file"
        in str(error.value)
    )
    with pytest.raises(DatasetError, match="no run 'absent' to judge"):
        resolve_dataset(choice_by_name("run:absent", None, store), store)


def test_the_edits_dataset_pairs_each_explanation_with_its_edits(tmp_path: Path) -> None:
    from haf_tui.pipeline.runs import choice_by_name, resolve_dataset

    store = judge_store(tmp_path / "j.duckdb")
    choice = choice_by_name("edits:source", None, store)  # (the judge's run dataset)
    assert (choice.kind, choice.name, choice.format) == ("run", "source", "edits")
    dataset = resolve_dataset(dataclasses.replace(choice, seed=1), store)
    assert dataset.meta["seed"] == 1
    assert dataset.dataset_id == "explanation-edits-source"
    by_id = {i.instance_id: i for i in dataset.instances}
    assert {i for i in by_id if "~" not in i} == {f"i{n}" for n in range(6)}
    assert sum(1 for i in by_id if i.endswith("~related")) == 6
    # only the four-sentence explanation (instances 1 and 4) is cut
    assert sorted(i for i in by_id if i.endswith("~new_info")) == ["i1~new_info", "i4~new_info"]
    cut = by_id["i1~new_info"].extra["judge_item"]["explanation"]
    assert cut == f"1. {REASONS[1][0].split('. ')[0]}."
    related = by_id["i0~related"]
    assert related.text == by_id["i0"].text and related.extra["judge_edit"] == {
        "edit": "related", "of": "i0",
    }  # fmt: skip
    assert (
        related.extra["judge_item"]["explanation"] != by_id["i0"].extra["judge_item"]["explanation"]
    )
    store.close()


def test_the_grammar_lists_each_slot_s_labels() -> None:
    grammar = answer_grammar(numbered_criteria("default"), n_choices=2)
    lines = grammar.splitlines()
    assert lines[0].startswith('root ::= "1. " supports "\\n2. " overall')
    assert 'supports ::= "a" | "b" | "none"' in lines
    assert 'factual ::= "N/A" | "no" | "yes"' in lines
    assert 'new-info ::= "none" | "some" | "sufficient" | "ample"' in lines
    shuffled = answer_grammar(numbered_criteria("shuffled"))
    assert shuffled.startswith('root ::= "1. " new-info "\\n2. " contrastive')
    assert 'supports ::= "a" | "b" | "c" | "d" | "e" | "none"' in shuffled
    single = answer_grammar(numbered_criteria("default", "related"))
    assert single.splitlines()[0] == 'root ::= "4. " related'


def test_single_criterion_calls_need_a_one_criterion_prompt() -> None:
    JudgeSettings(calls="single", prompt="verbatim")
    with pytest.raises(ValueError, match="default or verbatim"):
        JudgeSettings(calls="single", prompt="shuffled")


def _single_run(tmp_path: Path, mode: str) -> tuple[Any, Any]:
    judge = ScriptedJudge()
    settings = JudgeSettings(calls="single", prompt="default", mode=mode)  # type: ignore[arg-type]
    store = judge_store(tmp_path / "s.duckdb", judge=settings, model=judge)
    return store, judge


def test_single_calls_ask_each_criterion_alone(tmp_path: Path) -> None:
    store, judge = _single_run(tmp_path, "constrained")
    # each label follows only its own line number: no earlier slots in the reply
    prefixes = {prefix for prefix, _ in judge.scored}
    assert prefixes == {f"{n}. " for n in range(1, 9)}
    assert len(judge.scored) == 6 * (3 + 5 + 2 + 2 + 3 + 4 + 2 + 2)
    prompts = store.query(
        "SELECT DISTINCT sub_index // 10, prompt_text FROM generations WHERE run_id = ? "
        "AND instance_id = 'i0'",
        [JUDGE_RUN],
    )[1]
    assert len(prompts) == 8  # one conversation per criterion
    for slot, prompt in prompts:
        assert f"{slot + 1}. " in prompt and prompt.count("(no, yes)") <= 1
    metrics = dict(
        store.query(
            "SELECT metric, value FROM instance_metrics WHERE run_id = ? AND instance_id = 'i2'",
            [JUDGE_RUN],
        )[1]
    )
    assert metrics["judge_overall"] == int(FAVOURITE[2])
    assert metrics["judge_new_info"] == 1  # some
    assert metrics["judge_supports_matches"] == 1.0
    store.close()


def test_single_free_calls_parse_each_answer(tmp_path: Path) -> None:
    store, _ = _single_run(tmp_path, "free")
    rows = store.query(
        "SELECT count(*) FROM generations WHERE run_id = ? AND instance_id = 'i0'", [JUDGE_RUN]
    )[1]
    assert rows == [(8,)]
    metrics = dict(
        store.query(
            "SELECT metric, value FROM instance_metrics WHERE run_id = ? AND instance_id = 'i0'",
            [JUDGE_RUN],
        )[1]
    )
    # ScriptedJudge answers every call with the full eight-line answer; each call reads
    # its own criterion's line
    assert metrics["judge_overall"] == 3 and metrics["judge_new_info"] == 2
    assert metrics["judge_contrastive_failed"] == 1.0  # "Somewhat"
    store.close()


@pytest.mark.real_model
def test_llama_cpp_decodes_under_the_grammar_into_a_parseable_answer(
    embedded_backend: Any,
) -> None:
    import llama_cpp

    from haf_tui.methods.judge.core.prompts import judge_messages

    item = toxicity_item("you are a worthless idiot", ["It insults the reader directly."])
    numbering = numbered_criteria("default")
    grammar = llama_cpp.LlamaGrammar.from_string(answer_grammar(numbering, 2), verbose=False)
    _, prompt_tokens = embedded_backend.prepare_prompt(judge_messages(item, "default"))
    llm = embedded_backend.llm
    llm.reset()
    answer: list[int] = []
    for token_id in llm.generate(prompt_tokens, temp=0.0, top_k=1, grammar=grammar):
        if llm.token_eos() == token_id or len(answer) >= 64:
            break
        answer.append(token_id)
    text = llm.detokenize(answer).decode()
    parsed = parse_judgement(text, numbering, n_choices=2)
    assert parsed.failures == (), text
    assert len(text.splitlines()) == 8
