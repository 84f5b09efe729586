"""The paper's preprocessing of its five datasets (spec §8), one function each.

Each function turns the source rows, in source order, into the *candidates* the paper samples
from, in the order the authors' reference code leaves them (so a candidate's position is the
paper's ``index``), and counts every row it leaves out by reason. The rules, as the reference
applies them: keep texts of more than 64 and fewer than 1024 characters; where a toxicity score
exists keep the mild (0.5 < t < 0.6) rows, then the toxic (t > 0.75) ones; RealToxicityPrompts
joins prompt and continuation (scored by the continuation's toxicity); Implicit Toxicity joins
context and response and keeps the toxic (label 1) rows; ToxiGen's human toxicity (1-5) is
min-max scaled to 0-1; HateXplain (train split) scores a post by the share of annotators who
say hate or offensive and keeps posts where more than one does (no score band). A run of the
rationales suite without HAF reads every HateXplain post instead (:func:`hate_explain_every_post`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np

from haf_tui.datasets.readers import Record
from haf_tui.datasets.validation import (
    FILTER_BAND,
    FILTER_FEW_ANNOTATORS,
    FILTER_LONG,
    FILTER_NO_SCORE,
    FILTER_NO_TEXT,
    FILTER_NOT_TOXIC,
    FILTER_SHORT,
    SKIP_BAD_MASK,
    SkippedRow,
    excerpt,
)

MIN_CHARS: Final = 64
"""Texts of this many characters or fewer are left out (the reference keeps ``len > 64``)."""
MAX_CHARS: Final = 1024
"""Texts of this many characters or more are left out (the reference keeps ``len < 1024``)."""
HATEXPLAIN_LABELS: Final = ("hatespeech", "normal", "offensive")
"""HateXplain's class names by the integer the Hub's Parquet stores."""

Rows = Iterable[tuple[int, Record]]


@dataclass
class Candidate:
    """A row the preprocessing keeps: its source row, text, score and label text, and the
    fields later features need (``extra``)."""

    row: int
    text: str
    score: float
    label: str
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Selection:
    """The candidates in the paper's order, and the rows left out per reason."""

    candidates: list[Candidate]
    filtered: Counter[str]
    n_rows: int
    skipped: list[SkippedRow] = field(default_factory=list)
    """Rows that cannot be evaluated (not a filter of the paper's): stored with their reason."""


Preprocess = Callable[[Rows], Selection]


def score_of(value: Any) -> float | None:
    """A toxicity score as a float (None when absent, not a number, or NaN)."""
    if isinstance(value, bool) or value is None or value == "":
        return None
    try:
        score = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(score) else score


def length_reason(text: str | None) -> str | None:
    """Why a text is outside the paper's 64-1024 character window (None: inside)."""
    if text is None:
        return FILTER_NO_TEXT
    if len(text) <= MIN_CHARS:
        return FILTER_SHORT
    if len(text) >= MAX_CHARS:
        return FILTER_LONG
    return None


def band(score: float) -> str | None:
    """``mild`` (0.5 < t < 0.6), ``toxic`` (t > 0.75), or None."""
    if 0.5 < score < 0.6:
        return "mild"
    return "toxic" if score > 0.75 else None


def _float32_text(score: float) -> str:
    return str(np.float32(score))


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _mild_then_toxic(
    scored: Iterable[tuple[int, str | None, float | None, str, dict[str, Any]]],
) -> Selection:
    """Length window, then score band; mild candidates first, then toxic (the reference's
    ``concat([mild, toxic])``)."""
    mild: list[Candidate] = []
    toxic: list[Candidate] = []
    filtered: Counter[str] = Counter()
    n_rows = 0
    for row, text, score, label, extra in scored:
        n_rows += 1
        reason = length_reason(text)
        if reason is None and score is None:
            reason = FILTER_NO_SCORE
        kind = band(score) if reason is None and score is not None else None
        if reason is None and kind is None:
            reason = FILTER_BAND
        if reason is not None or text is None or score is None:
            filtered[reason or FILTER_NO_TEXT] += 1
            continue
        (mild if kind == "mild" else toxic).append(Candidate(row, text, score, label, extra))
    return Selection(mild + toxic, filtered, n_rows)


def civil_comments(rows: Rows) -> Selection:
    """CivilComments: ``text`` scored by ``toxicity`` (float32: labels keep its digits); the
    other columns (severe_toxicity, ..., identity_attack, identity columns) are kept."""

    def scored() -> Iterable[tuple[int, str | None, float | None, str, dict[str, Any]]]:
        for row, record in rows:
            score = score_of(record.get("toxicity"))
            extra = {k: v for k, v in record.items() if k not in ("text", "toxicity")}
            label = _float32_text(score) if score is not None else ""
            yield row, _text(record.get("text")), score, label, extra

    return _mild_then_toxic(scored())


def real_toxicity_prompts(rows: Rows) -> Selection:
    """RealToxicityPrompts: prompt text + continuation text, scored by the continuation's
    toxicity; both parts and their Perspective scores are kept."""

    def scored() -> Iterable[tuple[int, str | None, float | None, str, dict[str, Any]]]:
        for row, record in rows:
            prompt, continuation = record.get("prompt"), record.get("continuation")
            if not isinstance(prompt, dict) or not isinstance(continuation, dict):
                yield row, None, None, "", {}
                continue
            text = f"{prompt.get('text')}{continuation.get('text')}"
            score = score_of(continuation.get("toxicity"))
            extra = {k: v for k, v in record.items()}
            yield row, text, score, repr(score) if score is not None else "", extra

    return _mild_then_toxic(scored())


def toxigen(rows: Rows) -> Selection:
    """ToxiGen (annotated): ``text`` scored by ``toxicity_human`` min-max scaled to 0-1 over
    the whole split (as scikit-learn's MinMaxScaler computes it); target_group and the other
    annotations are kept."""
    materialized = list(rows)
    values = [score_of(r.get("toxicity_human")) for _, r in materialized]
    present = [v for v in values if v is not None]
    low, high = (min(present), max(present)) if present else (0.0, 1.0)
    scale = 1.0 / (high - low) if high != low else 1.0
    offset = 0.0 - low * scale

    def scored() -> Iterable[tuple[int, str | None, float | None, str, dict[str, Any]]]:
        for (row, record), value in zip(materialized, values, strict=True):
            score = value * scale + offset if value is not None else None
            extra = {k: v for k, v in record.items() if k != "text"}
            yield (
                row,
                _text(record.get("text")),
                score,
                repr(score) if score is not None else "",
                extra,
            )

    return _mild_then_toxic(scored())


def implicit_toxicity(rows: Rows) -> Selection:
    """Implicit Toxicity (aug-train): "CONTEXT:\\n{context}\\n\\nRESPONSE:\\n{response}", the
    toxic rows (label 1) only, then the length window; context and response are kept."""
    candidates: list[Candidate] = []
    filtered: Counter[str] = Counter()
    n_rows = 0
    for row, record in rows:
        n_rows += 1
        if score_of(record.get("label")) != 1.0:
            filtered[FILTER_NOT_TOXIC] += 1
            continue
        text = f"CONTEXT:\n{record.get('context')}\n\nRESPONSE:\n{record.get('response')}"
        reason = length_reason(text)
        if reason:
            filtered[reason] += 1
            continue
        extra = {k: v for k, v in record.items() if k != "label"}
        candidates.append(Candidate(row, text, 1.0, "1", extra))
    return Selection(candidates, filtered, n_rows)


def hatexplain_annotators(record: Record) -> list[dict[str, Any]]:
    """A post's annotators as ``{label, annotator_id, target}`` dicts, from the original
    JSON (a list of dicts, labels as names) or the Hub's Parquet (a dict of lists, labels as
    integers)."""
    raw = record.get("annotators")
    if isinstance(raw, dict):
        labels = raw.get("label") or []
        ids = raw.get("annotator_id") or [None] * len(labels)
        targets = raw.get("target") or [[] for _ in labels]
        raw = [
            {"label": lab, "annotator_id": aid, "target": tgt}
            for lab, aid, tgt in zip(labels, ids, targets, strict=False)
        ]
    annotators: list[dict[str, Any]] = []
    for item in raw if isinstance(raw, list) else []:
        label = item.get("label")
        if isinstance(label, int) and 0 <= label < len(HATEXPLAIN_LABELS):
            label = HATEXPLAIN_LABELS[label]
        annotators.append({**item, "label": label})
    return annotators


def hate_explain(rows: Rows) -> Selection:
    """HateXplain (train split, in ``post_id_divisions.json`` order): the post's tokens joined
    by spaces, scored by the share of annotators saying hate or offensive, kept when more than
    one does; per-annotator labels, targets and token rationales are kept."""
    candidates: list[Candidate] = []
    filtered: Counter[str] = Counter()
    n_rows = 0
    for row, record in rows:
        n_rows += 1
        annotators = hatexplain_annotators(record)
        non_normal = sum(a["label"] != "normal" for a in annotators)
        if non_normal <= 1:
            filtered[FILTER_FEW_ANNOTATORS] += 1
            continue
        tokens = record.get("post_tokens") or []
        text = " ".join(str(t) for t in tokens)
        reason = length_reason(text)
        if reason:
            filtered[reason] += 1
            continue
        score = non_normal / len(annotators)
        extra = {
            "post_id": record.get("post_id") or record.get("id") or record.get("_key"),
            "annotators": annotators,
            "rationales": record.get("rationales") or [],
            "post_tokens": list(tokens),
        }
        candidates.append(Candidate(row, text, score, repr(score), extra))
    return Selection(candidates, filtered, n_rows)


UNDECIDED: Final = "undecided"
"""A HateXplain post's label when no two annotators agree
(docs/methods/rationales.md#5-ground-truth)."""


def majority_label(annotators: list[dict[str, Any]]) -> str:
    """The label of at least two annotators (``hatespeech``, ``offensive``, ``normal``), else
    ``undecided``."""
    counts = Counter(str(a.get("label")) for a in annotators)
    label, count = counts.most_common(1)[0] if counts else (UNDECIDED, 0)
    return label if count >= 2 else UNDECIDED


def hate_explain_every_post(rows: Rows) -> Selection:
    """HateXplain for the rationales suite: every post of the split (normal and undecided ones
    too, no length window), labelled by its annotators' majority (``undecided`` when all three
    differ); a post one of whose rationale masks is not as long as its tokens is a skipped row
    (docs/methods/rationales.md#5-ground-truth), a post without tokens
    is left out."""
    candidates: list[Candidate] = []
    filtered: Counter[str] = Counter()
    skipped: list[SkippedRow] = []
    n_rows = 0
    for row, record in rows:
        n_rows += 1
        tokens = [str(t) for t in record.get("post_tokens") or []]
        text = " ".join(tokens)
        if not text.strip():
            filtered[FILTER_NO_TEXT] += 1
            continue
        masks = record.get("rationales") or []
        lengths = [len(m) if isinstance(m, list | tuple) else -1 for m in masks]
        if any(length != len(tokens) for length in lengths):
            detail = ", ".join(str(length) for length in lengths)
            reason = f"{SKIP_BAD_MASK} (masks of {detail} values for {len(tokens)} tokens)"
            skipped.append(SkippedRow(row, reason, excerpt(text)))
            continue
        annotators = hatexplain_annotators(record)
        non_normal = sum(a["label"] != "normal" for a in annotators)
        score = non_normal / len(annotators) if annotators else 0.0
        extra = {
            "post_id": record.get("post_id") or record.get("id") or record.get("_key"),
            "annotators": annotators,
            "rationales": list(masks),
            "post_tokens": tokens,
        }
        candidates.append(Candidate(row, text, score, majority_label(annotators), extra))
    return Selection(candidates, filtered, n_rows, skipped)
