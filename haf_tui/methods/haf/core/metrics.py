"""HAF metrics as pure functions over numbers (docs/methods/haf.md).

Inputs are sequences of floats or numpy arrays; scalar results are plain Python floats and
per-reason results are ``list[float]``. Similarities ``g`` are in [0, 1]; diversity is ``1 − g``.

NaN handling (a reason whose span had no tokens has confidence NaN):

* Per-reason terms (``*_terms``) are NaN for such a reason, so lists stay aligned with reasons.
* Instance means (SoS, UII/UEI, I_S, I_N, Δ-PE) leave NaN terms out (nan-aware mean); when every
  term is NaN the result is NaN. "No reasons at all" keeps the value the spec gives (NaN, or
  0 / 0.01 for I_S / I_N), which is distinct from "all reasons undefined" (NaN).
* ``div(x, T)`` leaves out targets whose confidence or similarity is NaN (the reference would
  return 0 for the whole div as soon as one target confidence is NaN).
* DiS and DiS-dpp by default drop reasons with NaN confidence (rows and columns) before
  computing; ``nan_policy="reference"`` reproduces the reference: DiS is a ``nansum`` over all
  n reasons divided by n(n−1), DiS-dpp is NaN.
* A NaN NLL, decision confidence or left-out confidence propagates (the value is undefined).

Everything is computed in float64; the reference used float32 for confidence and Δ-PE, which
agrees to within 1e-5 on the conformance fixtures. The reference's decision label
``"NO OR UNCLEAR DECISION"`` is ``"UNCLEAR"`` here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Final, Literal

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
NanPolicy = Literal["omit", "reference"]

SUFFICIENCY_WEIGHTS: Final[dict[str, float]] = {"NO": 1.0, "MAYBE": 0.5, "YES": 0.1, "UNCLEAR": 0.1}
"""S(Y) of RS: the reasons given suffice (NO) scores highest."""
NECESSITY_WEIGHTS: Final[dict[str, float]] = {"YES": 1.0, "MAYBE": 0.5, "NO": 0.1, "UNCLEAR": 0.1}
"""N(Y) of RN: an additional reason is required (YES) scores highest."""

# Default weights of the spec (section 5); every function takes them as parameters.
SOS_CONFIDENCE_WEIGHT: Final = 0.8
RELIANCE_CONFIDENCE_WEIGHT: Final = 0.5
NECESSITY_EMPTY_VALUE: Final = 0.01


# ---------------------------------------------------------------- helpers


def _vector(values: npt.ArrayLike, name: str) -> FloatArray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {array.shape}")
    return array


def _matrix(values: npt.ArrayLike, rows: int, cols: int, name: str) -> FloatArray:
    array = np.asarray(values, dtype=np.float64)
    if array.size == 0 and rows * cols == 0:
        return np.zeros((rows, cols), dtype=np.float64)
    if array.shape != (rows, cols):
        raise ValueError(f"{name} must have shape {(rows, cols)}, got {array.shape}")
    return array


def _same_length(first: FloatArray, second: FloatArray, what: str) -> None:
    if first.shape != second.shape:
        raise ValueError(f"{what}: lengths differ ({first.size} vs {second.size})")


def _check_weight(weight: float) -> None:
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"weight must be in [0, 1], got {weight}")


def _nan_mean(values: npt.ArrayLike) -> float:
    array = np.asarray(values, dtype=np.float64).ravel()
    defined = array[~np.isnan(array)]
    return float(defined.mean()) if defined.size else math.nan


def _decision_weight(decision: str, table: Mapping[str, float]) -> float:
    try:
        return float(table[decision])
    except KeyError:
        raise ValueError(
            f"unknown decision {decision!r}; expected one of {sorted(table)}"
        ) from None


def _diversity(similarities: FloatArray, confidences: FloatArray) -> float:
    defined = ~(np.isnan(similarities) | np.isnan(confidences))
    total_confidence = float(confidences[defined].sum())
    if not total_confidence > 0.0:
        return 0.0
    weighted = (1.0 - similarities[defined]) * confidences[defined]
    return float(weighted.sum()) / total_confidence


def _square(
    confidences: npt.ArrayLike, similarity_matrix: npt.ArrayLike
) -> tuple[FloatArray, FloatArray]:
    conf = _vector(confidences, "confidences")
    sims = _matrix(similarity_matrix, conf.size, conf.size, "similarity_matrix")
    return conf, sims


def _apply_nan_policy(
    conf: FloatArray, sims: FloatArray, nan_policy: NanPolicy
) -> tuple[FloatArray, FloatArray]:
    if nan_policy == "reference":
        return conf, sims
    if nan_policy != "omit":
        raise ValueError(f"nan_policy must be 'omit' or 'reference', got {nan_policy!r}")
    keep = ~np.isnan(conf)
    return conf[keep], sims[np.ix_(keep, keep)]


# ---------------------------------------------------------------- confidence (section 4)


def relevance_from_similarities(similarities: npt.ArrayLike) -> list[float]:
    """TokenSAR relevance per token: ``R_i = 1 − |g(s, s without z_i)|``."""
    return [float(x) for x in 1.0 - np.abs(_vector(similarities, "similarities"))]


def tokensar_confidence(nll: npt.ArrayLike, relevance: npt.ArrayLike) -> float:
    """``C = exp(−Σ NLL_i·w_i)``, ``w_i = R_i/ΣR`` (uniform if ΣR = 0); NaN for an empty span.

    Raises ValueError when ``nll`` and ``relevance`` differ in length.
    """
    nll_values = _vector(nll, "nll")
    relevance_values = _vector(relevance, "relevance")
    _same_length(nll_values, relevance_values, "nll and relevance")
    if nll_values.size == 0:
        return math.nan
    total = float(relevance_values.sum())
    if total == 0.0:
        weights = np.full(nll_values.size, 1.0 / nll_values.size)
    else:
        weights = relevance_values / total
    return math.exp(-float(np.dot(nll_values, weights)))


# ---------------------------------------------------------------- relevance (SoS, DiS)


def strength_of_support_terms(
    confidences: npt.ArrayLike,
    input_similarities: npt.ArrayLike,
    w_conf: float = SOS_CONFIDENCE_WEIGHT,
) -> list[float]:
    """Per reason ``w_conf·C_j + (1−w_conf)·g(r_j, d_in)``; NaN where C_j or g is NaN."""
    _check_weight(w_conf)
    conf = _vector(confidences, "confidences")
    sims = _vector(input_similarities, "input_similarities")
    _same_length(conf, sims, "confidences and input_similarities")
    return [float(x) for x in w_conf * conf + (1.0 - w_conf) * sims]


def strength_of_support(
    confidences: npt.ArrayLike,
    input_similarities: npt.ArrayLike,
    w_conf: float = SOS_CONFIDENCE_WEIGHT,
) -> float:
    """Instance SoS: nan-aware mean of the per-reason terms; NaN with no (defined) reasons."""
    return _nan_mean(strength_of_support_terms(confidences, input_similarities, w_conf))


def similarity_matrix_from_pairs(pairs: npt.ArrayLike, n: int) -> FloatArray:
    """Symmetric n×n matrix, unit diagonal, from the row-major upper-triangle pair list
    ``[g(r0,r1), g(r0,r2), ..., g(r1,r2), ...]``."""
    values = _vector(pairs, "pairs")
    if n < 0 or values.size != n * (n - 1) // 2:
        raise ValueError(f"{values.size} pairs do not fit {n} reasons (need {n * (n - 1) // 2})")
    matrix = np.eye(n, dtype=np.float64)
    upper = np.triu_indices(n, k=1)
    matrix[upper] = values
    matrix[(upper[1], upper[0])] = values
    return matrix


def diversity_of_support(
    confidences: npt.ArrayLike,
    similarity_matrix: npt.ArrayLike,
    *,
    nan_policy: NanPolicy = "omit",
) -> float:
    """DiS = Σ_{i≠j} (1−S_ij)·C_j / (n(n−1)); NaN for n < 2 (see module doc for NaN)."""
    conf, sims = _apply_nan_policy(*_square(confidences, similarity_matrix), nan_policy)
    n = conf.size
    if n < 2:
        return math.nan
    off_diagonal = ~np.eye(n, dtype=bool)
    terms = (1.0 - sims) * conf[np.newaxis, :]
    return float(np.nansum(terms[off_diagonal])) / (n * (n - 1))


def diversity_dpp(
    confidences: npt.ArrayLike,
    similarity_matrix: npt.ArrayLike,
    *,
    nan_policy: NanPolicy = "omit",
) -> float:
    """DiS-dpp = det(S ∘ W), S_ii = 1 (the diagonal given is ignored), W_ij = C_j; NaN for n < 2."""
    conf, sims = _apply_nan_policy(*_square(confidences, similarity_matrix), nan_policy)
    n = conf.size
    if n < 2:
        return math.nan
    kernel = sims.copy()
    np.fill_diagonal(kernel, 1.0)
    kernel = kernel * conf[np.newaxis, :]
    if np.isnan(kernel).any():
        return math.nan
    return float(np.linalg.det(kernel))


# ---------------------------------------------------------------- reliance (UII, UEI, Δ-PE)


def weighted_diversity(
    similarities_to_targets: npt.ArrayLike, target_confidences: npt.ArrayLike
) -> float:
    """div(x, T) = Σ_k (1−g(x,t_k))·C(t_k) / Σ_k C(t_k); 0 when T is empty or ΣC = 0.

    Targets whose similarity or confidence is NaN are left out.
    """
    sims = _vector(similarities_to_targets, "similarities_to_targets")
    conf = _vector(target_confidences, "target_confidences")
    _same_length(sims, conf, "similarities_to_targets and target_confidences")
    return _diversity(sims, conf)


def reliance_terms(
    new_confidences: npt.ArrayLike,
    new_to_original_similarity: npt.ArrayLike,
    original_confidences: npt.ArrayLike,
    w_conf: float = RELIANCE_CONFIDENCE_WEIGHT,
) -> list[float]:
    """Per new reason s_i: ``w_conf·C(s_i) + (1−w_conf)·div(s_i, R)``.

    ``new_to_original_similarity`` is the m×n matrix ``g(s_i, r_k)``.
    """
    _check_weight(w_conf)
    new = _vector(new_confidences, "new_confidences")
    original = _vector(original_confidences, "original_confidences")
    sims = _matrix(
        new_to_original_similarity, new.size, original.size, "new_to_original_similarity"
    )
    return [
        float(w_conf * confidence + (1.0 - w_conf) * _diversity(row, original))
        for confidence, row in zip(new, sims, strict=True)
    ]


def reliance(
    new_confidences: npt.ArrayLike,
    new_to_original_similarity: npt.ArrayLike,
    original_confidences: npt.ArrayLike,
    w_conf: float = RELIANCE_CONFIDENCE_WEIGHT,
) -> float:
    """UII (internal reasons) / UEI (external reasons): nan-aware mean of
    :func:`reliance_terms`; NaN with no new reasons."""
    return _nan_mean(
        reliance_terms(new_confidences, new_to_original_similarity, original_confidences, w_conf)
    )


def delta_predictive_entropy(
    new_confidences: npt.ArrayLike, original_confidences: npt.ArrayLike
) -> float:
    """Δ-PE = mean_s −log C(s) − mean_j −log C_j (nan-aware means, float64).

    NaN when either side has no (defined) reasons; a zero confidence gives +inf.
    """
    new = _vector(new_confidences, "new_confidences")
    original = _vector(original_confidences, "original_confidences")
    with np.errstate(divide="ignore", invalid="ignore"):
        return _nan_mean(-np.log(new)) - _nan_mean(-np.log(original))


# ---------------------------------------------------------------- individual (RS, RN)


def informativeness_sufficiency(
    new_confidences: npt.ArrayLike,
    new_to_others_similarity: npt.ArrayLike,
    others_confidences: npt.ArrayLike,
    w_conf: float = RELIANCE_CONFIDENCE_WEIGHT,
) -> float:
    """I_S = mean_k [w_conf·C(s_k) + (1−w_conf)·div(s_k, R∖r_j)]; 0 with no new reasons.

    ``new_to_others_similarity`` is the m×(n−1) matrix ``g(s_k, r)`` for r in R∖r_j.
    """
    terms = reliance_terms(new_confidences, new_to_others_similarity, others_confidences, w_conf)
    return _nan_mean(terms) if terms else 0.0


def informativeness_necessity(
    new_confidences: npt.ArrayLike,
    new_to_left_out_similarity: npt.ArrayLike,
    left_out_confidence: float,
    w_conf: float = RELIANCE_CONFIDENCE_WEIGHT,
    empty_value: float = NECESSITY_EMPTY_VALUE,
) -> float:
    """I_N = mean_k [w_conf·C(s_k) + (1−w_conf)·g(s_k, r_j)·C_j]; ``empty_value`` (0.01, as
    the reference) with no new reasons."""
    _check_weight(w_conf)
    new = _vector(new_confidences, "new_confidences")
    sims = _vector(new_to_left_out_similarity, "new_to_left_out_similarity")
    _same_length(new, sims, "new_confidences and new_to_left_out_similarity")
    if new.size == 0:
        return float(empty_value)
    return _nan_mean(w_conf * new + (1.0 - w_conf) * sims * float(left_out_confidence))


def reason_sufficiency(
    decision: str,
    decision_confidence: float,
    new_confidences: npt.ArrayLike,
    new_to_others_similarity: npt.ArrayLike,
    others_confidences: npt.ArrayLike,
    *,
    w_conf: float = RELIANCE_CONFIDENCE_WEIGHT,
    decision_weights: Mapping[str, float] | None = None,
) -> float:
    """RS_j = S(Y)·C(Y)·(1 − I_S); ValueError for a decision missing from the S table."""
    table = SUFFICIENCY_WEIGHTS if decision_weights is None else decision_weights
    weight = _decision_weight(decision, table)
    informativeness = informativeness_sufficiency(
        new_confidences, new_to_others_similarity, others_confidences, w_conf
    )
    return weight * float(decision_confidence) * (1.0 - informativeness)


def reason_necessity(
    decision: str,
    decision_confidence: float,
    new_confidences: npt.ArrayLike,
    new_to_left_out_similarity: npt.ArrayLike,
    left_out_confidence: float,
    *,
    w_conf: float = RELIANCE_CONFIDENCE_WEIGHT,
    empty_value: float = NECESSITY_EMPTY_VALUE,
    decision_weights: Mapping[str, float] | None = None,
) -> float:
    """RN_j = N(Y)·C(Y)·I_N; ValueError for a decision missing from the N table."""
    table = NECESSITY_WEIGHTS if decision_weights is None else decision_weights
    weight = _decision_weight(decision, table)
    informativeness = informativeness_necessity(
        new_confidences, new_to_left_out_similarity, left_out_confidence, w_conf, empty_value
    )
    return weight * float(decision_confidence) * informativeness


# ---------------------------------------------------------------- aggregates (section 6)


def pooled_mean(per_instance_values: Sequence[npt.ArrayLike]) -> tuple[float, int]:
    """Mean over every defined (non-NaN) value of every instance pooled, as the reference's
    tables; returns (mean, number of values pooled). A scalar counts as one value."""
    pooled = [np.asarray(values, dtype=np.float64).ravel() for values in per_instance_values]
    flat = np.concatenate(pooled) if pooled else np.zeros(0)
    defined = flat[~np.isnan(flat)]
    return (float(defined.mean()) if defined.size else math.nan), int(defined.size)


def mean_of_means(per_instance_values: Sequence[npt.ArrayLike]) -> tuple[float, int]:
    """Mean of the instance (nan-aware) means; returns (mean, number of instances defined)."""
    means = np.array([_nan_mean(values) for values in per_instance_values], dtype=np.float64)
    defined = means[~np.isnan(means)]
    return (float(defined.mean()) if defined.size else math.nan), int(defined.size)
