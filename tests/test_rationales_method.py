"""The rationale method core against every worked example of RATIONALES.md §8, the prompts of
§3.2, and a fuzz of the answer parser (any text gives a mask, never an exception)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from haf_tui.methods.rationales.core import metrics as m
from haf_tui.methods.rationales.core.parsing import answer_items, parse_rationale
from haf_tui.methods.rationales.core.prompts import rationale_prompt, strategy_k, top_ratio_k
from haf_tui.methods.rationales.core.words import norm, presence_mask, word_tokens

EX1 = [[0, 1, 1, 0, 0, 0, 1, 0], [0, 1, 0, 0, 0, 0, 1, 1], [0, 1, 1, 1, 0, 0, 0, 0]]
TABLE5 = [
    "those",
    "that",
    "are",
    "for",
    "illegal",
    "immigration",
    "and",
    "islamic",
    "culture",
    "refugees",
    "are",
    "idiot",
    "liberal",
    "progressives",
    "and",
    "globalists",
    "skills",
]
ANNOTATORS = [
    {"illegal", "immigration", "islamic", "liberal", "progressives", "globalists"},
    {"immigration", "islamic", "culture", "refugees", "idiot", "liberal", "progressives",
     "globalists"},
    {"illegal", "immigration", "islamic", "progressives", "globalists"},
]  # fmt: skip


def _mask(indices: set[int], n: int) -> list[int]:
    return [1 if i in indices else 0 for i in range(n)]


def test_example_1_ground_truth() -> None:
    assert m.soft_truth(EX1) == pytest.approx([0, 1, 2 / 3, 1 / 3, 0, 0, 2 / 3, 1 / 3])
    assert m.hard_truth(EX1) == [0, 1, 1, 0, 0, 0, 1, 0]
    assert m.union_truth(EX1) == [0, 1, 1, 1, 0, 0, 1, 1]
    assert [m.token_iou(EX1[a], EX1[b]) for a, b in ((0, 1), (0, 2), (1, 2))] == pytest.approx(
        [0.5, 0.5, 0.2]
    )
    assert m.annotator_iou(EX1) == pytest.approx(0.4)
    assert m.soft_truth([[1, 0, 1], [0, 0, 1]]) == [0.5, 0, 1]
    assert m.hard_truth([[1, 0, 1], [0, 0, 1]]) == [1, 0, 1]  # (≥ 0.5: matters for k = 2)


def test_example_2_p1_table_5() -> None:
    masks = [presence_mask(words, TABLE5) for words in ANNOTATORS]
    hard, union = m.hard_truth(masks), m.union_truth(masks)
    assert hard == _mask({4, 5, 7, 12, 13, 15}, 17)
    assert union == _mask({4, 5, 7, 8, 9, 11, 12, 13, 15}, 17)
    assert m.token_f1(hard, hard) == 1.0 and m.token_f1(hard, union) == pytest.approx(0.8)
    assert m.token_f1(union, hard) == pytest.approx(0.8) and m.token_f1(union, union) == 1.0
    assert m.token_iou(hard, union) == pytest.approx(2 / 3)


def test_example_3_parsing() -> None:
    answer = (
        'Here are the key words: illegal | immigration | Islamic | "idiot" | liberals | globalists.'
    )
    parsed = parse_rationale(answer, TABLE5)
    assert parsed.words == ("illegal", "immigration", "islamic", "idiot", "liberals", "globalists")
    assert parsed.out_of_text == ("liberals",)
    mask = list(parsed.mask)
    assert mask == _mask({4, 5, 7, 11, 15}, 17)
    hard = _mask({4, 5, 7, 12, 13, 15}, 17)
    prf = m.token_prf(mask, hard)
    assert (prf.precision, prf.recall) == pytest.approx((0.8, 2 / 3))
    assert prf.f1 == pytest.approx(0.727273, abs=1e-6)
    assert m.entropy(mask) == pytest.approx(math.log(5))
    assert m.gini(mask) == pytest.approx(12 / 17) and m.spr_ratio(mask) == pytest.approx(12 / 17)
    assert m.cpx_ratio(mask) == pytest.approx(5 / 17)


def test_example_4_iou_f1() -> None:
    a_pred, a_gold = [0, 1, 0, 0, 0, 0, 1, 1], [0, 1, 1, 0, 0, 0, 1, 0]
    b_pred, b_gold = [0, 0, 1, 1, 0, 0, 0, 0, 0, 1], [0, 0, 1, 1, 1, 1, 0, 0, 0, 0]
    assert m.token_f1(a_pred, a_gold) == pytest.approx(2 / 3)
    assert m.spans(a_pred) == [(1, 2), (6, 8)] and m.spans(a_gold) == [(1, 3), (6, 7)]
    a = m.iou_f1([a_pred], [a_gold])
    assert (a.precision, a.recall) == (1.0, 1.0)
    assert m.token_f1(b_pred, b_gold) == pytest.approx(4 / 7)
    b = m.iou_f1([b_pred], [b_gold])
    assert (b.precision, b.recall) == (0.5, 1.0)
    both = m.iou_f1([a_pred, b_pred], [a_gold, b_gold])
    assert (both.precision, both.recall) == (0.75, 1.0)
    assert both.f1 == pytest.approx(0.857143, abs=1e-6)
    single = m.iou_f1([a_pred, b_pred], [a_gold, b_gold], pred_spans="single_token")
    assert single.f1 == pytest.approx(0.4)
    macro = (m.token_f1(a_pred, a_gold) + m.token_f1(b_pred, b_gold)) / 2
    assert macro == pytest.approx(0.619048, abs=1e-6)
    assert m.micro_token_f1([a_pred, b_pred], [a_gold, b_gold]) == pytest.approx(8 / 13)


def test_example_5_auprc() -> None:
    hard = [0, 1, 1, 0, 0, 0, 1, 0]
    scores = [0.05, 0.9, 0.3, 0.4, 0.1, 0.0, 0.6, 0.2]
    assert m.auprc(hard, scores) == pytest.approx(0.902778, abs=1e-6)
    assert m.auprc(hard, [0.5] * 8) == pytest.approx((1 + 3 / 8) / 2)
    assert m.auprc(hard, [0, 1, 0, 0, 0, 0, 1, 1]) == pytest.approx(0.729167, abs=1e-6)
    assert m.auprc(m.soft_truth(EX1), scores) == pytest.approx(0.838889, abs=1e-6)
    assert m.auprc([0] * 8, scores) is None


def test_example_6_faithfulness() -> None:
    assert m.comprehensiveness(0.92, 0.35) == pytest.approx(0.57)
    assert m.sufficiency(0.92, 0.81) == pytest.approx(0.11)
    before = ["toxic", "toxic", "non-toxic", "toxic"]
    after = ["non-toxic", "toxic", "toxic", "toxic"]
    assert m.flip_rate([m.flip(b, a) for b, a in zip(before, after, strict=True)]) == 50.0
    assert m.flip_rate([]) is None


def test_example_7_occlusion() -> None:
    assert m.log_odds(0.92) == pytest.approx(2.4423, abs=1e-4)
    a = m.occlusion_scores(0.92, [0.90, 0.41, 0.88, 0.93, 0.62])
    assert a == pytest.approx([0.2451, 2.8063, 0.4499, -0.1443, 1.9528], abs=1e-4)
    assert sorted(range(5), key=lambda i: (-a[i], i)) == [1, 4, 2, 0, 3]
    assert m.top_k(a, 2) == [0, 1, 0, 0, 1]


def test_top_k_breaks_ties_to_the_earlier_token() -> None:
    """RATIONALES.md §4.2: sort by (−a_i, i), so among equal scores the earlier tokens win."""
    assert m.top_k([0.5, 0.9, 0.5, 0.5, 0.9], 1) == [0, 1, 0, 0, 0]
    assert m.top_k([0.5, 0.9, 0.5, 0.5, 0.9], 3) == [1, 1, 0, 0, 1]
    assert m.top_k([0.2, 0.2, 0.2, 0.2], 2) == [1, 1, 0, 0]
    assert m.top_k([-1.0, 0.0, 0.0, -1.0], 3) == [1, 1, 1, 0]
    assert m.top_k([0.3, 0.3], 5) == [1, 1] and m.top_k([0.3, 0.3], 0) == [0, 0]


def test_example_8_complexity() -> None:
    scores = [0.5, 0.3, 0.2, 0, 0]
    assert m.entropy(scores) == pytest.approx(1.029653, abs=1e-6)
    assert m.entropy_norm(scores) == pytest.approx(0.639759, abs=1e-6)
    assert m.gini(scores) == pytest.approx(0.52)
    assert m.gini([0, 0, 1, 0, 0]) == pytest.approx(0.8)
    assert m.gini([1] * 5) == pytest.approx(0.0)
    assert m.entropy([1] * 5) == pytest.approx(math.log(5))
    assert m.entropy([0] * 5) is None and m.gini([0] * 5) is None


def test_example_9_k_rules_and_the_random_baseline() -> None:
    assert [top_ratio_k(n, 0.2) for n in (3, 7, 12, 23, 30)] == [1, 1, 2, 5, 6]
    hard = m.hard_truth(EX1)
    k = sum(hard)
    assert strategy_k("top_var", 8, gold_size=k) == 3
    assert strategy_k("top_var", 8, gold_size=0) is None  # no human rationale: no run
    assert strategy_k("unbound", 8) is None and strategy_k("top_k", 8, k=10) == 10
    f1s = [m.token_f1(m.random_mask(8, k, seed), hard) for seed in range(2000)]
    assert sum(f1s) / len(f1s) == pytest.approx(k / 8, abs=0.02)  # expected token-F1 k/n


def test_example_10_label_scores_live_in_the_classify_suite() -> None:
    from haf_tui.methods.classify.core.labels import label_scores

    scores = label_scores({"toxic": -0.105, "non-toxic": -2.9})
    assert (scores.p_toxic, scores.label_mass) == pytest.approx((0.942405, 0.955348), abs=1e-6)


def test_the_prompts_are_the_spec_s() -> None:
    normal = rationale_prompt("you fool", "toxic", "normal")
    assert normal == (
        "You will be provided a text which is delimited with triple backticks. Your task is to "
        "identify the most important key words from the text that indicate why the following "
        "text is labeled as toxic.\n"
        "• The key words should be copied verbatim from the text.\n"
        "• Write the key words as a pipe-separated (|) list of single words.\n"
        "• Make sure to only output keyword tokens and do not explain the answer.\n"
        "• Example output: <word1> | <word2> | <word3>\n"
        "Text: ```you fool```"
    )
    assert rationale_prompt("you fool", "non-toxic", "short") == (
        "Identify the most important key words from the text that indicate why the following "
        "text is labeled as non-toxic.\n"
        "• Write the key words as a pipe-separated (|) list of single words.\n"
        "Text: ```you fool```"
    )
    top = rationale_prompt("you fool", "toxic", "normal", k=3)
    assert "identify the top 3 most important key words" in top
    assert "• Make sure to only output top 3 keyword tokens and do not explain the answer." in top
    short = rationale_prompt("you fool", "toxic", "short", k=3)
    assert short.startswith("Identify the top 3 most important key words")
    assert "list of single words and do not explain.\n" in short


def test_parsing_rules() -> None:
    tokens = ["you", "are", "a", "stupid", "idiot", "and", "a", "fool"]
    assert answer_items("stupid; idiot") == ["stupid", " idiot"]
    assert answer_items("Key words:\n- stupid\n- idiot\n2) fool") == ["stupid", "idiot", "fool"]
    assert answer_items("stupid idiot") == ["stupid", "idiot"]
    assert answer_items("Answer: stupid, idiot") == [" stupid", " idiot"]
    limited = parse_rationale("fool | a | idiot", tokens, k=2)
    assert limited.mask == (0, 0, 1, 0, 0, 0, 1, 1)  # every occurrence of "a" marks
    assert limited.in_text == 3 and not limited.matches_k
    assert parse_rationale("", tokens).mask == (0,) * 8
    assert (
        norm("«Idiot»") == "idiot" and norm("`<fool>`") == "fool" and norm("ＩＤＩＯＴ") == "idiot"
    )
    assert [(w.text, w.start) for w in word_tokens(" a  bc\td ")] == [("a", 1), ("bc", 4), ("d", 7)]


@given(st.text(), st.lists(st.text(min_size=1).filter(lambda t: not t.isspace()), max_size=12))
def test_any_answer_gives_a_mask(answer: str, tokens: list[str]) -> None:
    parsed = parse_rationale(answer, tokens, k=3)
    assert len(parsed.mask) == len(tokens) and set(parsed.mask) <= {0, 1}
    assert set(parsed.out_of_text) <= set(parsed.words)


def test_gold_from_a_hatexplain_record() -> None:
    from haf_tui.methods.rationales.core.truth import (
        BAD_LENGTH,
        NO_MASKS,
        TEXT_MISMATCH,
        gold_rationale,
    )

    text = " ".join(TABLE5)
    masks = [presence_mask(words, TABLE5) for words in ANNOTATORS]
    extra = {"post_tokens": TABLE5, "rationales": masks, "annotators": []}
    gold = gold_rationale(text, extra)
    assert not isinstance(gold, str)
    assert gold.hard == _mask({4, 5, 7, 12, 13, 15}, 17)
    assert gold.union == _mask({4, 5, 7, 8, 9, 11, 12, 13, 15}, 17)
    assert gold.soft[11] == pytest.approx(1 / 3)
    assert gold_rationale(text, {**extra, "rationales": []}) == NO_MASKS
    assert gold_rationale(text + " !", extra) == TEXT_MISMATCH
    assert gold_rationale(text, {**extra, "rationales": [[1, 0]]}) == BAD_LENGTH


def test_removing_and_keeping_tokens() -> None:
    from haf_tui.methods.rationales.core.prompts import toxicity_ratio
    from haf_tui.methods.rationales.core.words import only, without

    tokens = ["you", "are", "a", "stupid", "idiot"]
    mask = [0, 0, 0, 1, 1]
    assert without(tokens, mask) == "you are a"
    assert without(tokens, mask, "underscore") == "you are a _ _"
    assert only(tokens, mask) == "stupid idiot"
    assert without(tokens, [1] * 5) == "" and only(tokens, [0] * 5) == ""
    with pytest.raises(ValueError, match="removal mode"):
        without(tokens, mask, "mask")
    assert toxicity_ratio([[0, 1, 1, 0], [1, 0, 0, 0, 0], [0, 0]]) == pytest.approx((0.5 + 0.2) / 2)
    assert toxicity_ratio([]) is None
