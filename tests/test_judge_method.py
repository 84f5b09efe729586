# Over 400 lines because each worked example of the judge's spec is one test here.
"""The judge method core against every worked example of JUDGE.md §7, the prompts of §3 and
§5.5, the edge cases the spec names (undefined α, constant vectors, ties) and a fuzz of the
free-output parser (any text gives a result, never an exception)."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from haf_tui.methods.judge.core import metrics as m
from haf_tui.methods.judge.core.criteria import (
    CONTRASTIVE,
    CRITERIA,
    FACTUAL,
    NEW_INFO,
    OVERALL,
    SUPPORTS,
    label_names,
    normalised_score,
)
from haf_tui.methods.judge.core.guidelines import EXAMPLES, guidelines_text
from haf_tui.methods.judge.core.parsing import failure_share, parse_judgement, parse_label
from haf_tui.methods.judge.core.prompts import (
    VARIANTS,
    JudgeItem,
    Shot,
    answer_text,
    judge_messages,
    judge_prompt,
    numbered_criteria,
    toxicity_item,
)
from haf_tui.methods.judge.core.scores import label_scores, logsumexp, supports_matches

# ---------------------------------------------------------------- §7.1 parse

EX1 = "1. a)\n2. 4/5\n3. Yes\n4. yes\n5. N/A\n6. Sufficient.\n7. no\n8. Somewhat"


def test_example_1_parse_and_normalise() -> None:
    parsed = parse_judgement(EX1)
    codes = parsed.codes()
    assert [codes[c.id] for c in CRITERIA[:7]] == [0, 4, 1, 1, -1, 2, 0]
    assert codes["contrastive"] is None
    assert parsed.failures == ("contrastive",)
    assert normalised_score("overall", codes["overall"]) == pytest.approx(0.75)
    assert normalised_score("new_info", codes["new_info"]) == pytest.approx(2 / 3)
    assert normalised_score("unnecessary_info", codes["unnecessary_info"]) == pytest.approx(1.0)
    assert normalised_score("factual", codes["factual"]) is None
    assert normalised_score("factual", 1) == 1.0
    assert normalised_score("supports", 0) is None
    assert failure_share([parsed, parse_judgement("8. yes")], "contrastive") == 0.5


@pytest.mark.parametrize(
    ("crit", "value", "label"),
    [
        (SUPPORTS, "a", "a"),
        (SUPPORTS, "a)", "a"),
        (SUPPORTS, "(a)", "a"),
        (SUPPORTS, "A", "a"),
        (SUPPORTS, "**B**", "b"),
        (SUPPORTS, "neither", "none"),
        (SUPPORTS, "None.", "none"),
        (SUPPORTS, "a) She was reminded of her childhood.", "a"),
        (SUPPORTS, "a b", None),
        (OVERALL, "4", "4"),
        (OVERALL, "4/5", "4"),
        (OVERALL, "★★★★☆", "4"),
        (OVERALL, "0", None),
        (OVERALL, "6/5", None),
        (OVERALL, "3.5", None),
        (FACTUAL, "N/A", "N/A"),
        (FACTUAL, "NA", "N/A"),
        (FACTUAL, "Not applicable", "N/A"),
        (FACTUAL, "yes!", "yes"),
        (NEW_INFO, "Ample", "ample"),
        (NEW_INFO, "good", None),
        (CONTRASTIVE, "Somewhat", None),
        (CONTRASTIVE, "N/A", None),
    ],
)
def test_parse_label_rules(crit: object, value: str, label: str | None) -> None:
    assert parse_label(crit, value) == label  # type: ignore[arg-type]


def test_supports_letters_follow_the_choices() -> None:
    assert parse_label(SUPPORTS, "c", n_choices=2) is None
    assert parse_label(SUPPORTS, "c", n_choices=5) == "c"


def test_parse_by_name_markdown_and_last_parseable_line() -> None:
    text = (
        "1. Which answer does it support? (a, b, none)\n"
        "**Supports:** (b)\n**Overall rating**: ★★☆☆☆\nRelated: Somewhat\n"
        "New info: ample\n6. New information: some\n- Contrastive: no"
    )
    labels = parse_judgement(text, n_choices=2).labels()
    assert labels["supports"] == "b"
    assert labels["overall"] == "2"
    assert labels["related"] is None
    assert labels["new_info"] == "some"
    assert labels["contrastive"] == "no"


def test_shuffled_numbers_follow_the_variant() -> None:
    numbering = numbered_criteria("shuffled")
    assert [c.number for _, c in numbering] == [6, 8, 4, 3, 2, 1, 5, 7]
    parsed = parse_judgement("1. ample\n6. b\n5. 3", numbering, n_choices=2).labels()
    assert parsed["new_info"] == "ample"
    assert parsed["supports"] == "b"
    assert parsed["overall"] == "3"


def test_guideline_examples_parse() -> None:
    second = EXAMPLES[1].ratings
    labels = [parse_label(c, r, 2) for c, r in zip(CRITERIA, second, strict=True)]
    assert labels == ["none", "1", "no", "yes", "N/A", "none", "yes", "no"]
    for example in EXAMPLES:
        assert all(parse_label(c, r, 2) for c, r in zip(CRITERIA, example.ratings, strict=True))


@given(st.text())
def test_parser_is_total(text: str) -> None:
    for variant in ("default", "shuffled"):
        parsed = parse_judgement(text, numbered_criteria(variant))
        assert len(parsed.criteria) == 8
        for p in parsed.criteria:
            assert (p.label is None) == (p.code is None)


_LABELS = st.fixed_dictionaries({c.id: st.sampled_from(label_names(c, 2)) for c in CRITERIA})


@given(_LABELS, st.sampled_from(VARIANTS), st.integers(0, 5))
def test_answer_format_round_trips(labels: dict[str, str], variant: str, seed: int) -> None:
    text = answer_text(labels, variant, rng=random.Random(seed))  # type: ignore[arg-type]
    numbering = numbered_criteria(variant)  # type: ignore[arg-type]
    assert parse_judgement(text, numbering, n_choices=2).labels() == labels


# ---------------------------------------------------------------- §7.2–7.3 Krippendorff's α

EX2: list[list[float | None]] = [[1, 2, 1], [3, 3, 4], [5, 4, 5], [2, None, 2]]
EX3: list[list[float | None]] = [[1, 1, 1, 1, 0], [1, 1, 1, 1, 1], [0, 0, 1, 0, 0]]


def test_example_2_coincidences_and_alpha() -> None:
    values, matrix = m.coincidences(EX2)
    assert values == (1, 2, 3, 4, 5)
    assert matrix == [
        [1, 1, 0, 0, 0],
        [1, 2, 0, 0, 0],
        [0, 0, 1, 1, 0],
        [0, 0, 1, 0, 1],
        [0, 0, 0, 1, 1],
    ]
    assert [sum(row) for row in matrix] == [2, 3, 2, 2, 2]
    assert m.krippendorff_alpha(EX2, "nominal") == pytest.approx(0.375, abs=1e-6)
    assert m.krippendorff_alpha(EX2, "ordinal") == pytest.approx(0.877787, abs=1e-6)
    assert m.krippendorff_alpha(EX2, "interval") == pytest.approx(0.869565, abs=1e-6)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_example_3_binary_alpha_and_llm_replacement(level: str) -> None:
    assert m.krippendorff_alpha(EX3, level) == pytest.approx(0.44)  # type: ignore[arg-type]
    replaced = m.with_llm(EX3, [4, 0, 2], [1, 1, 1])
    assert replaced == [[1, 1, 1, 1, 1], [1, 1, 1, 1, 1], [0, 0, 1, 0, 0]]
    alpha = m.krippendorff_alpha(replaced, level)  # type: ignore[arg-type]
    assert alpha == pytest.approx(0.681818, abs=1e-6)
    assert m.krippendorff_alpha([[1, 1, 1], [1, 1], [1, None, 1]], level) is None  # type: ignore[arg-type]


def test_alpha_undefined_without_pairable_values() -> None:
    assert m.krippendorff_alpha([]) is None
    assert m.krippendorff_alpha([[1], [2, None], [None, None]]) is None


def test_alpha_matches_the_krippendorff_package() -> None:
    import krippendorff as kd  # (a dev dependency: the reference runs in every test run)

    data = [[math.nan if v is None else v for v in unit] for unit in EX2]
    reliability = [list(row) for row in zip(*data, strict=True)]
    for level in ("nominal", "ordinal", "interval"):
        expected = kd.alpha(reliability_data=reliability, level_of_measurement=level)
        assert m.krippendorff_alpha(EX2, level) == pytest.approx(expected)


def test_llm_alpha_is_seeded_and_means_iterations() -> None:
    first = m.llm_alpha(EX3, [1, 1, 1], "nominal", iterations=20, seed=7)
    assert first == m.llm_alpha(EX3, [1, 1, 1], "nominal", iterations=20, seed=7)
    singles = []
    for i in range(20):
        rng = random.Random(7 + i)
        positions = [rng.choice(range(len(unit))) for unit in EX3]
        singles.append(m.krippendorff_alpha(m.with_llm(EX3, positions, [1, 1, 1])))
    assert first == pytest.approx(m.mean_defined(singles))
    # an LLM agreeing with every rater of a unanimous set changes nothing
    assert m.llm_alpha([[1, 1], [0, 0]], [1, 0]) == pytest.approx(1.0)
    assert m.llm_alpha([[1, 1], [1, 1]], [1, 1]) is None


# ---------------------------------------------------------------- §7.4 Spearman, votes


def test_example_4_spearman() -> None:
    assert m.spearman([1, 2, 2, 3, 5], [1, 3, 2, 3, 4]) == pytest.approx(0.921053, abs=1e-6)
    assert m.spearman([3, 3, 3, 3], [1, 2, 3, 4]) is None
    assert m.spearman([1, 2, 3], [2, 2, 2]) is None
    assert m.spearman([1], [1]) is None


def test_spearman_ties_missing_and_scipy() -> None:
    assert m.average_ranks([2, 1, 2, 3]) == [2.5, 1.0, 2.5, 4.0]
    assert m.spearman([1, None, 2, 3], [1, 5, 2, None]) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        m.spearman([1, 2], [1])
    stats = pytest.importorskip("scipy.stats")
    a, b = [1, 2, 2, 3, 5, 4, 4, 1], [2, 3, 2, 3, 4, 4, 5, 1]
    assert m.spearman(a, b) == pytest.approx(stats.spearmanr(a, b).statistic)


def test_majority_vote_and_agreement() -> None:
    assert m.majority_vote([1, 2, 2, None]) == 2
    assert m.majority_vote([None]) is None
    draws = {m.majority_vote([1, 2], random.Random(s)) for s in range(30)}
    assert draws == {1, 2}
    assert m.majority_vote([1, 2], random.Random(3)) == m.majority_vote([1, 2], random.Random(3))
    assert m.agreement([0, 1, -1, None], [0, 0, -1, 1]) == pytest.approx(2 / 3)


def test_extra_rater_curve() -> None:
    units = [[1, 1, 1, 2, 1], [3, 3, 2, 3, 3], [5, 5, 5, 4, 5], [2, 2, 3, 2, 2]]
    gold = [1, 3, 5, 2]
    points = m.extra_rater_curve(units, gold, gold, seed=1)
    assert [p.raters for p in points] == [4, 3, 2, 1]
    assert points[0].humans == pytest.approx(1.0)
    assert all(p.with_llm is not None and p.with_llm >= 0.8 for p in points)
    assert points == m.extra_rater_curve(units, gold, gold, seed=1)
    missing = m.extra_rater_curve(units, [None] * 4, gold, sizes=(2,), seed=1)
    assert missing[0].humans == missing[0].with_llm


# ---------------------------------------------------------------- §7.5 expected score


def test_example_5_expected_score() -> None:
    s = label_scores(OVERALL, {"1": -4.0, "2": -2.6, "3": -1.3, "4": -0.9, "5": -3.1})
    assert s.mass == pytest.approx(0.8167, abs=1e-4)
    assert s.probs == pytest.approx((0.0224, 0.0909, 0.3337, 0.4978, 0.0552), abs=1e-4)
    assert (s.label, s.code) == ("4", 4)
    assert s.expected == pytest.approx(3.4723, abs=1e-4)
    binary = label_scores(CONTRASTIVE, {"no": -1.2, "yes": -0.4})
    assert binary.expected == pytest.approx(0.69, abs=5e-3)
    assert binary.prob("yes") == binary.expected


def test_label_scores_spellings_nominal_and_errors() -> None:
    spelled = label_scores(CONTRASTIVE, {"no": [-2.0, -2.0], "yes": -2.0 + math.log(2)})
    assert spelled.probs == pytest.approx((0.5, 0.5))
    assert spelled.label == "no"  # ties: the first label
    sup = label_scores(SUPPORTS, {"a": -0.1, "b": -3.0, "none": -5.0})
    assert (sup.labels, sup.label, sup.expected) == (("a", "b", "none"), "a", None)
    assert label_scores(FACTUAL, {"N/A": -0.2, "no": -3.0, "yes": -2.0}).code == -1
    assert logsumexp([]) == -math.inf
    with pytest.raises(ValueError):
        label_scores(CONTRASTIVE, {"maybe": -1.0})
    with pytest.raises(ValueError):
        label_scores(CONTRASTIVE, {"no": -math.inf, "yes": -math.inf})


def test_supports_matches_stance() -> None:
    assert supports_matches("a", "toxic") is True
    assert supports_matches("a", "non-toxic") is False
    assert supports_matches("b", "maybe") is None
    assert supports_matches(None, "toxic") is None


# ---------------------------------------------------------------- §7.6–7.7 bias, change rate


def test_example_6_bias() -> None:
    human, llm = [3, 4, 2, 5], [3, 3, 2, 4]
    assert m.mae(llm, human) == pytest.approx(0.5)
    assert m.nmae(llm, human, OVERALL.span()) == pytest.approx(0.125)
    assert m.bias(llm, human) == pytest.approx(-0.5)
    assert [c.span() for c in (OVERALL, NEW_INFO, FACTUAL, CONTRASTIVE)] == [4, 3, 2, 1]
    assert m.mae([None], [1]) is None


def test_example_7_change_rate() -> None:
    default = ["yes", "no", "yes", "yes", "no"]
    assert m.change_rate(default, ["yes", "yes", "yes", "no", "no"]) == pytest.approx(40.0)
    assert m.change_rate(["yes", None], ["no", "no"]) == pytest.approx(100.0)
    assert m.change_rate([], []) is None
    assert m.mean_defined([0.5, None, 1.0]) == pytest.approx(0.75)


# ---------------------------------------------------------------- prompts (§3, §4.1, §5.5)

ITEM = JudgeItem("Q?", ("one", "two", "three", "four", "five"), "Because.")

DEFAULT = """Evaluate the given explanation according to the following criteria:
1. Which answer does it support? (a, b, c, d, e, none)
2. Overall rating? (1, 2, 3, 4, 5)
3. Is it well-written? (no, yes)
4. Is the explanation related to the question and answers? (no, yes)
5. Are all contained facts correct? (N/A, no, yes)
6. How much new information is given? (none, some, sufficient, ample)
7. Any unnecessary information? (no, yes)
8. Is it contrastive? (no, yes)
QUESTION: Q?
a) one
b) two
c) three
d) four
e) five
EXPLANATION: Because."""


def test_default_prompt_is_the_quoted_one() -> None:
    assert judge_prompt(ITEM) == DEFAULT
    (message,) = judge_messages(ITEM)
    assert message.role == "user"


def test_toxicity_item() -> None:
    item = toxicity_item("you fool", ["It insults.", "It demeans."])
    prompt = judge_prompt(item)
    assert "1. Which answer does it support? (a, b, none)" in prompt
    assert "QUESTION: Is the following TEXT toxic?\nTEXT: you fool\n" in prompt
    assert "a) The TEXT is toxic.\nb) The TEXT is not toxic." in prompt
    assert prompt.endswith("EXPLANATION: 1. It insults.\n2. It demeans.")
    with pytest.raises(ValueError):
        JudgeItem("Q?", (), "x")


def test_variant_wordings() -> None:
    para = judge_prompt(ITEM, "paraphrased")
    assert para.startswith("Evaluate the given explanation based on these criteria:\n")
    assert "2. Rate the overall explanation (1, 2, 3, 4, 5)" in para
    assert "7. Does it contain unnecessary information? (no, yes)" in para
    assert "3. Is it well-written? (no, yes)" in para
    verbose = judge_prompt(ITEM, "verbose")
    assert verbose.startswith("Evaluate the explanation provided based on the following criteria:")
    assert (
        "5. Verify the accuracy of all facts, if any, mentioned in the explanation. (N/A" in verbose
    )
    nonsense = judge_prompt(ITEM, "nonsense")
    assert "8. Is it contrastive? (no, yes)\n9. Does it have quibberfluff? (yes, no)\n" in nonsense
    assert "11. How much drizzlewhisk is there? (none, some, good)\nQUESTION" in nonsense
    shuffled = judge_prompt(ITEM, "shuffled")
    assert "1. How much new information is given?" in shuffled
    assert "6. Which answer does it support?" in shuffled


def test_shots_and_instruction_placement() -> None:
    shot = Shot(ITEM, {"supports": "a", "overall": "4"})
    default = judge_messages(ITEM, "default", [shot, shot])
    assert [msg.role for msg in default] == ["user", "assistant"] * 2 + ["user"]
    assert default[1].content == "1. a\n2. 4"
    assert default[0].content == DEFAULT
    assert default[2].content.startswith("QUESTION")
    repeated = judge_messages(ITEM, "repeated", [shot])
    assert all(msg.content == DEFAULT for msg in repeated if msg.role == "user")
    swapped = judge_messages(ITEM, "swapped", [shot])
    assert swapped[-1].content.startswith("QUESTION") and swapped[-1].content.endswith("(no, yes)")
    nonsense = judge_messages(ITEM, "nonsense", [shot], seed=3)
    assert nonsense[1].content.startswith("1. a\n2. 4\n9. ")
    assert nonsense == judge_messages(ITEM, "nonsense", [shot], seed=3)
    one_shot = judge_messages(ITEM, shots=[shot])
    assert judge_prompt(ITEM, shots=[shot]) == "\n\n".join(msg.content for msg in one_shot)


def test_verbatim_prompt() -> None:
    prompt = judge_prompt(ITEM, "verbatim")
    assert prompt.startswith("Task description\nWe ask you to carefully consider each criterion")
    for crit in CRITERIA:
        assert crit.guideline in prompt
    assert "- ★★★: Okay, could be better. Not terrible, but not great either." in prompt
    assert "Explanation: The darkness is filled with snowflakes.\nSupports: neither" in prompt
    assert "Q: How should we rate completely unrelated explanations?" in prompt
    assert "Q?\na) one\n" in prompt and "Explanation: Because.\nEvaluate the given" in prompt
    assert prompt.endswith("8. Is it contrastive? (no, yes)")
    single = judge_prompt(ITEM, "verbatim", only="new_info")
    assert NEW_INFO.guideline in single and OVERALL.guideline not in single
    assert "New information: ample" in single and "Supports: a)" not in single
    assert single.endswith("6. How much new information is given? (none, some, sufficient, ample)")
    assert guidelines_text() in prompt
    with pytest.raises(ValueError):
        judge_prompt(ITEM, "shuffled", only="overall")


def test_each_judge_metric_says_which_way_is_better() -> None:
    """The stored value is the label's code: for a criterion whose higher code is worse
    (unnecessary information present) lower is better, as the legends and ``?`` say."""
    from haf_tui.methods.judge.core.criteria import CRITERIA
    from haf_tui.methods.judge.views import JUDGE_METRICS

    better = {spec.name: spec.better for spec in JUDGE_METRICS}
    assert better["judge_supports"] is None
    assert better["judge_unnecessary_info"] == "lower"
    for crit in CRITERIA:
        if crit.id != "supports":
            assert better[f"judge_{crit.id}"] == ("lower" if crit.lower_is_better else "higher")
