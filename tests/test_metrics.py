"""Hand-computed checks of :mod:`haf_tui.methods.haf.core.metrics` (spec HAF.md sections 4–6).

Each expected value is worked out in the test from the formula, with small numbers.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from haf_tui.methods.haf.core import metrics as m

approx = pytest.approx
nan = math.nan
unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


# ---------------------------------------------------------------- TokenSAR confidence


def test_tokensar_weights_by_normalised_relevance() -> None:
    # w = [1, 3] / 4 = [0.25, 0.75]; U = 0.25·1 + 0.75·2 = 1.75
    assert m.tokensar_confidence([1.0, 2.0], [1.0, 3.0]) == approx(math.exp(-1.75))


def test_tokensar_one_token_is_exp_of_its_nll() -> None:
    assert m.tokensar_confidence([0.5], [0.2]) == approx(math.exp(-0.5))


def test_tokensar_all_zero_relevance_uses_uniform_weights() -> None:
    # w = [0.5, 0.5]; U = (1 + 3) / 2 = 2
    assert m.tokensar_confidence([1.0, 3.0], [0.0, 0.0]) == approx(math.exp(-2.0))


def test_tokensar_empty_span_is_nan() -> None:
    assert math.isnan(m.tokensar_confidence([], []))
    assert math.isnan(m.tokensar_confidence(np.array([]), np.array([])))


def test_tokensar_length_mismatch_raises() -> None:
    with pytest.raises(ValueError):
        m.tokensar_confidence([1.0, 2.0], [1.0])


def test_tokensar_accepts_arrays_and_returns_plain_float() -> None:
    value = m.tokensar_confidence(np.array([1.0], dtype=np.float32), np.array([1.0]))
    assert type(value) is float


def test_relevance_from_similarities() -> None:
    # R = 1 − |g|
    assert m.relevance_from_similarities([0.2, -0.5, 1.0]) == approx([0.8, 0.5, 0.0])


nll_lists = st.lists(st.floats(min_value=0.0, max_value=100.0), min_size=1, max_size=20)
# Relevance is 0 or well away from 0: "ΣR = 0 -> uniform" is a deliberate discontinuity.
relevances = st.one_of(st.just(0.0), st.floats(min_value=1e-6, max_value=1.0))


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_tokensar_confidence_in_unit_interval_and_scale_invariant(data: st.DataObject) -> None:
    nll = data.draw(nll_lists)
    relevance = data.draw(st.lists(relevances, min_size=len(nll), max_size=len(nll)))
    scale = data.draw(st.floats(min_value=1e-3, max_value=1e3))
    confidence = m.tokensar_confidence(nll, relevance)
    assert 0.0 < confidence <= 1.0
    scaled = m.tokensar_confidence(nll, [r * scale for r in relevance])
    assert scaled == approx(confidence, rel=1e-9)


# ---------------------------------------------------------------- SoS


def test_strength_of_support_terms_and_mean() -> None:
    # 0.8·0.5 + 0.2·0.25 = 0.45; 0.8·1.0 + 0.2·0.75 = 0.95; mean 0.70
    terms = m.strength_of_support_terms([0.5, 1.0], [0.25, 0.75])
    assert terms == approx([0.45, 0.95])
    assert m.strength_of_support([0.5, 1.0], [0.25, 0.75]) == approx(0.70)


def test_strength_of_support_custom_weight() -> None:
    # 0.5·0.5 + 0.5·0.25 = 0.375; 0.5·1.0 + 0.5·0.75 = 0.875; mean 0.625
    assert m.strength_of_support([0.5, 1.0], [0.25, 0.75], w_conf=0.5) == approx(0.625)
    with pytest.raises(ValueError):
        m.strength_of_support([0.5], [0.25], w_conf=1.5)


def test_strength_of_support_nan_reason_left_out_of_mean() -> None:
    terms = m.strength_of_support_terms([nan, 1.0], [0.25, 0.75])
    assert math.isnan(terms[0]) and terms[1] == approx(0.95)
    assert m.strength_of_support([nan, 1.0], [0.25, 0.75]) == approx(0.95)
    assert math.isnan(m.strength_of_support([nan, nan], [0.25, 0.75]))


def test_strength_of_support_without_reasons_is_nan() -> None:
    assert math.isnan(m.strength_of_support([], []))
    with pytest.raises(ValueError):
        m.strength_of_support([0.5, 0.5], [0.1])


# ---------------------------------------------------------------- similarity matrix, DiS, DPP


def test_similarity_matrix_from_pairs_row_major_upper_triangle() -> None:
    matrix = m.similarity_matrix_from_pairs([0.1, 0.2, 0.3], 3)  # (0,1) (0,2) (1,2)
    expected = [[1.0, 0.1, 0.2], [0.1, 1.0, 0.3], [0.2, 0.3, 1.0]]
    np.testing.assert_allclose(matrix, expected)
    assert m.similarity_matrix_from_pairs([], 1).tolist() == [[1.0]]
    assert m.similarity_matrix_from_pairs([], 0).shape == (0, 0)
    with pytest.raises(ValueError):
        m.similarity_matrix_from_pairs([0.1, 0.2], 3)


THREE_CONF = [0.5, 1.0, 0.25]
THREE_PAIRS = [0.2, 0.6, 0.0]  # g(r0,r1) = 0.2, g(r0,r2) = 0.6, g(r1,r2) = 0.0


def test_diversity_of_support_three_reasons() -> None:
    # Σ_{i≠j} (1−S_ij)·C_j:
    #   i=0: 0.8·1.0 + 0.4·0.25 = 0.9;  i=1: 0.8·0.5 + 1.0·0.25 = 0.65;
    #   i=2: 0.4·0.5 + 1.0·1.0 = 1.2;  total 2.75, / (3·2) = 0.458333...
    matrix = m.similarity_matrix_from_pairs(THREE_PAIRS, 3)
    assert m.diversity_of_support(THREE_CONF, matrix) == approx(2.75 / 6)


def test_diversity_of_support_two_reasons_and_edge_cases() -> None:
    matrix = m.similarity_matrix_from_pairs([0.2], 2)
    # (0.8·1.0 + 0.8·0.5) / 2 = 0.6
    assert m.diversity_of_support([0.5, 1.0], matrix) == approx(0.6)
    assert m.diversity_of_support([0.0, 0.0], matrix) == 0.0
    assert math.isnan(m.diversity_of_support([0.7], [[1.0]]))
    assert math.isnan(m.diversity_of_support([], []))
    with pytest.raises(ValueError):
        m.diversity_of_support([0.5, 1.0], [[1.0]])


def test_diversity_of_support_nan_policies() -> None:
    matrix = m.similarity_matrix_from_pairs(THREE_PAIRS, 3)
    conf = [0.5, nan, 0.25]
    # omit: reasons 0 and 2 only, S = 0.6: (0.4·0.25 + 0.4·0.5) / 2 = 0.15
    assert m.diversity_of_support(conf, matrix) == approx(0.15)
    # reference: nansum over all 3 reasons, terms with C_1 dropped, / 6:
    #   i=0: 0.4·0.25 = 0.1;  i=1: 0.8·0.5 + 1.0·0.25 = 0.65;  i=2: 0.4·0.5 = 0.2  -> 0.95 / 6
    assert m.diversity_of_support(conf, matrix, nan_policy="reference") == approx(0.95 / 6)
    assert math.isnan(m.diversity_of_support([nan, 0.5], m.similarity_matrix_from_pairs([0.2], 2)))
    with pytest.raises(ValueError):
        m.diversity_of_support(conf, matrix, nan_policy="drop")  # type: ignore[arg-type]


def test_diversity_dpp_two_and_three_reasons() -> None:
    # [[1·0.5, 0.2·1.0], [0.2·0.5, 1·1.0]] -> 0.5·1.0 − 0.2·0.1 = 0.48
    assert m.diversity_dpp([0.5, 1.0], m.similarity_matrix_from_pairs([0.2], 2)) == approx(0.48)
    # det S = 1·(1 − 0) − 0.2·(0.2 − 0) + 0.6·(0 − 0.6) = 0.6;  Π C = 0.125 -> 0.075
    matrix = m.similarity_matrix_from_pairs(THREE_PAIRS, 3)
    assert m.diversity_dpp(THREE_CONF, matrix) == approx(0.075)
    np.fill_diagonal(matrix, 0.9)  # the diagonal is S_ii = 1 whatever is passed
    assert m.diversity_dpp(THREE_CONF, matrix) == approx(0.075)


def test_diversity_dpp_edge_cases() -> None:
    matrix = m.similarity_matrix_from_pairs(THREE_PAIRS, 3)
    assert math.isnan(m.diversity_dpp([0.7], [[1.0]]))
    assert m.diversity_dpp([0.0, 0.0, 0.0], matrix) == approx(0.0)
    # omit: S = [[1, 0.6], [0.6, 1]], det 0.64, · 0.5 · 0.25 = 0.08
    assert m.diversity_dpp([0.5, nan, 0.25], matrix) == approx(0.08)
    assert math.isnan(m.diversity_dpp([0.5, nan, 0.25], matrix, nan_policy="reference"))


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_dis_bounded_and_dpp_factorises(data: st.DataObject) -> None:
    n = data.draw(st.integers(min_value=2, max_value=5))
    conf = data.draw(st.lists(unit, min_size=n, max_size=n))
    pairs = data.draw(st.lists(unit, min_size=n * (n - 1) // 2, max_size=n * (n - 1) // 2))
    matrix = m.similarity_matrix_from_pairs(pairs, n)
    assert 0.0 <= m.diversity_of_support(conf, matrix) <= 1.0
    expected_dpp = float(np.linalg.det(matrix)) * float(np.prod(conf))
    assert m.diversity_dpp(conf, matrix) == approx(expected_dpp, abs=1e-12)


# ---------------------------------------------------------------- div, UII / UEI, Δ-PE


def test_weighted_diversity() -> None:
    # (0.8·1.0 + 0.4·0.5) / (1.0 + 0.5) = 1.0 / 1.5
    assert m.weighted_diversity([0.2, 0.6], [1.0, 0.5]) == approx(2 / 3)
    assert m.weighted_diversity([], []) == 0.0
    assert m.weighted_diversity([0.2, 0.6], [0.0, 0.0]) == 0.0
    assert m.weighted_diversity([0.2, 0.6, 0.1], [1.0, 0.5, nan]) == approx(2 / 3)
    with pytest.raises(ValueError):
        m.weighted_diversity([0.2], [1.0, 0.5])


NEW_CONF = [0.6, 0.2]
ORIGINAL_CONF = [1.0, 0.5]
NEW_TO_ORIGINAL = [[0.2, 0.6], [1.0, 0.0]]
# div(s0, R) = (0.8·1.0 + 0.4·0.5) / 1.5 = 2/3;  div(s1, R) = (0·1.0 + 1.0·0.5) / 1.5 = 1/3


def test_reliance_terms_and_mean() -> None:
    # 0.5·0.6 + 0.5·2/3 = 0.6333..;  0.5·0.2 + 0.5·1/3 = 0.2666..;  mean 0.45
    terms = m.reliance_terms(NEW_CONF, NEW_TO_ORIGINAL, ORIGINAL_CONF)
    assert terms == approx([0.3 + 1 / 3, 0.1 + 1 / 6])
    assert m.reliance(NEW_CONF, NEW_TO_ORIGINAL, ORIGINAL_CONF) == approx(0.45)


def test_reliance_custom_weight() -> None:
    # 0.8·0.6 + 0.2·2/3 = 0.61333..;  0.8·0.2 + 0.2·1/3 = 0.22666..;  mean 0.42
    value = m.reliance(NEW_CONF, NEW_TO_ORIGINAL, ORIGINAL_CONF, w_conf=0.8)
    assert value == approx(0.42)


def test_reliance_edge_cases() -> None:
    assert math.isnan(m.reliance([], [], ORIGINAL_CONF))  # no new reasons
    assert m.reliance_terms([], [], ORIGINAL_CONF) == []
    assert m.reliance([0.6], [[0.2, 0.6]], [0.0, 0.0]) == approx(0.3)  # ΣC = 0 -> div 0
    assert m.reliance([0.6], [[]], []) == approx(0.3)  # no original reasons -> div 0
    assert m.reliance([0.7], [[0.5]], [0.9]) == approx(0.35 + 0.25)  # one reason each
    # an empty-span new reason is left out of the mean; all undefined -> NaN
    assert m.reliance([nan, 0.2], NEW_TO_ORIGINAL, ORIGINAL_CONF) == approx(0.1 + 1 / 6)
    assert math.isnan(m.reliance([nan], [[0.2, 0.6]], ORIGINAL_CONF))
    with pytest.raises(ValueError):
        m.reliance(NEW_CONF, [[0.2, 0.6]], ORIGINAL_CONF)


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_reliance_in_unit_interval(data: st.DataObject) -> None:
    n_new = data.draw(st.integers(min_value=1, max_value=4))
    n_orig = data.draw(st.integers(min_value=0, max_value=4))
    new = data.draw(st.lists(unit, min_size=n_new, max_size=n_new))
    orig = data.draw(st.lists(unit, min_size=n_orig, max_size=n_orig))
    rows = st.lists(unit, min_size=n_orig, max_size=n_orig)
    sims = data.draw(st.lists(rows, min_size=n_new, max_size=n_new))
    assert 0.0 <= m.reliance(new, sims, orig) <= 1.0


def test_delta_predictive_entropy() -> None:
    # mean(1, 3) − mean(0.5, 1.5) = 2 − 1 = 1
    new = [math.exp(-1.0), math.exp(-3.0)]
    original = [math.exp(-0.5), math.exp(-1.5)]
    assert m.delta_predictive_entropy(new, original) == approx(1.0)
    assert math.isnan(m.delta_predictive_entropy([], original))
    assert math.isnan(m.delta_predictive_entropy(new, []))
    assert m.delta_predictive_entropy([math.exp(-1.0), nan], [math.exp(-1.0)]) == approx(0.0)
    assert m.delta_predictive_entropy([0.0], original) == math.inf


# ---------------------------------------------------------------- I_S, I_N, RS, RN


def test_informativeness_sufficiency() -> None:
    # same arithmetic as reliance: (0.6333.. + 0.2666..) / 2 = 0.45
    assert m.informativeness_sufficiency(NEW_CONF, NEW_TO_ORIGINAL, ORIGINAL_CONF) == approx(0.45)
    assert m.informativeness_sufficiency([], [], ORIGINAL_CONF) == 0.0  # no new reasons
    assert m.informativeness_sufficiency([0.4], [[]], []) == approx(0.2)  # R∖r_j empty
    assert math.isnan(m.informativeness_sufficiency([nan], [[0.2, 0.6]], ORIGINAL_CONF))


def test_informativeness_necessity() -> None:
    # 0.5·0.6 + 0.5·0.5·0.8 = 0.5;  0.5·0.2 + 0.5·0.25·0.8 = 0.2;  mean 0.35
    assert m.informativeness_necessity(NEW_CONF, [0.5, 0.25], 0.8) == approx(0.35)
    assert m.informativeness_necessity([], [], 0.8) == 0.01  # reference's value
    assert m.informativeness_necessity([], [], 0.8, empty_value=0.0) == 0.0
    assert m.informativeness_necessity(NEW_CONF, [0.5, 0.25], 0.0) == approx(0.2)  # C_j = 0
    # w_conf 0.8: 0.48 + 0.2·0.4 = 0.56;  0.16 + 0.2·0.2 = 0.2;  mean 0.38
    assert m.informativeness_necessity(NEW_CONF, [0.5, 0.25], 0.8, w_conf=0.8) == approx(0.38)
    with pytest.raises(ValueError):
        m.informativeness_necessity(NEW_CONF, [0.5], 0.8)


@pytest.mark.parametrize(
    ("decision", "expected"),
    [
        ("NO", 1.0 * 0.8 * 0.55),
        ("MAYBE", 0.5 * 0.8 * 0.55),
        ("YES", 0.1 * 0.8 * 0.55),
        ("UNCLEAR", 0.1 * 0.8 * 0.55),
    ],
)
def test_reason_sufficiency(decision: str, expected: float) -> None:
    # S(Y)·C(Y)·(1 − I_S) with C(Y) = 0.8, I_S = 0.45
    value = m.reason_sufficiency(decision, 0.8, NEW_CONF, NEW_TO_ORIGINAL, ORIGINAL_CONF)
    assert value == approx(expected)


def test_reason_sufficiency_edge_cases_and_options() -> None:
    assert m.reason_sufficiency("NO", 0.9, [], [], ORIGINAL_CONF) == approx(0.9)  # I_S = 0
    custom = m.reason_sufficiency(
        "NO", 0.8, NEW_CONF, NEW_TO_ORIGINAL, ORIGINAL_CONF, decision_weights={"NO": 0.25}
    )
    assert custom == approx(0.25 * 0.8 * 0.55)
    # w_conf 0.8 gives I_S = 0.42 (see test_reliance_custom_weight)
    weighted = m.reason_sufficiency("NO", 0.8, NEW_CONF, NEW_TO_ORIGINAL, ORIGINAL_CONF, w_conf=0.8)
    assert weighted == approx(0.8 * 0.58)
    assert math.isnan(m.reason_sufficiency("NO", nan, NEW_CONF, NEW_TO_ORIGINAL, ORIGINAL_CONF))
    for bad in ("PERHAPS", "no", "NO OR UNCLEAR DECISION"):
        with pytest.raises(ValueError):
            m.reason_sufficiency(bad, 0.8, NEW_CONF, NEW_TO_ORIGINAL, ORIGINAL_CONF)


@pytest.mark.parametrize(
    ("decision", "expected"),
    [
        ("YES", 1.0 * 0.9 * 0.35),
        ("MAYBE", 0.5 * 0.9 * 0.35),
        ("NO", 0.1 * 0.9 * 0.35),
        ("UNCLEAR", 0.1 * 0.9 * 0.35),
    ],
)
def test_reason_necessity(decision: str, expected: float) -> None:
    # N(Y)·C(Y)·I_N with C(Y) = 0.9, I_N = 0.35
    assert m.reason_necessity(decision, 0.9, NEW_CONF, [0.5, 0.25], 0.8) == approx(expected)


def test_reason_necessity_edge_cases_and_options() -> None:
    assert m.reason_necessity("YES", 0.5, [], [], 0.8) == approx(0.005)  # I_N = 0.01
    assert m.reason_necessity("YES", 0.5, [], [], 0.8, empty_value=0.2) == approx(0.1)
    custom = m.reason_necessity("NO", 0.9, NEW_CONF, [0.5, 0.25], 0.8, decision_weights={"NO": 1})
    assert custom == approx(0.9 * 0.35)
    with pytest.raises(ValueError):
        m.reason_necessity("MAYBE", 0.9, NEW_CONF, [0.5, 0.25], 0.8, decision_weights={"NO": 1})


def test_decision_weight_tables() -> None:
    assert m.SUFFICIENCY_WEIGHTS == {"NO": 1.0, "MAYBE": 0.5, "YES": 0.1, "UNCLEAR": 0.1}
    assert m.NECESSITY_WEIGHTS == {"YES": 1.0, "MAYBE": 0.5, "NO": 0.1, "UNCLEAR": 0.1}


# ---------------------------------------------------------------- aggregates


def test_pooled_mean_and_mean_of_means() -> None:
    values = [[1.0, 2.0, 3.0], [5.0]]
    assert m.pooled_mean(values) == approx((11 / 4, 4))  # every reason pooled
    assert m.mean_of_means(values) == approx(((2.0 + 5.0) / 2, 2))  # instance means


def test_aggregates_are_nan_aware() -> None:
    values: list[list[float] | float] = [[1.0, nan], [nan], [], 3.0]
    assert m.pooled_mean(values) == approx((2.0, 2))
    assert m.mean_of_means(values) == approx((2.0, 2))
    pooled, n = m.pooled_mean([])
    assert math.isnan(pooled) and n == 0
    mean, n = m.mean_of_means([[nan]])
    assert math.isnan(mean) and n == 0


def test_scalar_results_are_plain_floats() -> None:
    matrix = m.similarity_matrix_from_pairs([0.2], 2)
    results = [
        m.strength_of_support([0.5, 1.0], [0.2, 0.3]),
        m.diversity_of_support([0.5, 1.0], matrix),
        m.diversity_dpp([0.5, 1.0], matrix),
        m.reliance(NEW_CONF, NEW_TO_ORIGINAL, ORIGINAL_CONF),
        m.delta_predictive_entropy([0.5], [0.5]),
        m.reason_sufficiency("NO", 0.8, NEW_CONF, NEW_TO_ORIGINAL, ORIGINAL_CONF),
        m.reason_necessity("YES", 0.9, NEW_CONF, [0.5, 0.25], 0.8),
        m.pooled_mean([[1.0]])[0],
        m.mean_of_means([[1.0]])[0],
    ]
    assert all(type(value) is float for value in results)
    assert all(type(v) is float for v in m.reliance_terms(NEW_CONF, NEW_TO_ORIGINAL, ORIGINAL_CONF))
