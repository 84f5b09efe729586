"""Parse HAF model outputs: the JUSTIFY stance, follow-up decisions Y, and reasons with spans.

Pure text processing (stdlib only). Spec: ``docs/methods/haf.md#3-reading-an-answer``. The default
``rules="reference"`` reproduces the authors' reference parser (``uofthcdslab/HAF``,
``utils/helpers.py``) exactly: decision sentence, stance label and reason texts.

Every reason and decision sentence carries its character span in the ORIGINAL output text,
so the pipeline can find its tokens from the recorded token offsets.

``rules="strict"`` fixes the reference's known slips, and only these:

- Keywords match whole words (with common inflections) instead of substrings, so
  "someone", "contributes", "dismay" no longer hedge the stance, "intoxicated" is not "toxic",
  and "not only X but also toxic" is no hedge either:
  "The text insults someone and is toxic." -> reference ``maybe``, strict ``toxic``;
  "It contributes to racist hate, which is toxic." -> reference ``maybe``, strict ``toxic``.
- A negation counts only within three words before "toxic", and "no doubt" / bare "from" /
  "highly-toxic" are not negations: "There is no doubt it is toxic." -> reference
  ``non-toxic``, strict ``toxic``.
- A bare label sentence ("**Decision:**", "..., the decision is:") is skipped when looking
  for the decision sentence, so the verdict on the next line is used.
- In follow-up stages a sentence saying an additional reason is (not) required / sufficient /
  agreed also counts as the decision sentence ("No additional reasons are required." has no
  reference keyword).
- Reasons: only the decision sentence itself is cut out, where it stands, and it ends a list item
  like a blank line (so reason spans are always exact); not every copy of it, nor the
  reference's "NO OR UNCLEAR DECISION" placeholder. Every short "Reasons:" header is dropped,
  not only the first.

The follow-up decision Y (is an additional reason required?) is read from the decision sentence
by :mod:`haf_tui.methods.haf.core.followup` (its phrasing rules, then the reference's templates).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from haf_tui.methods.haf.core.followup import (
    DecisionSourceLiteral,
    Similarity,
    decide_followup,
)
from haf_tui.vocabulary import (
    FOLLOWUP_STAGES,
    RULES,
    Decision,
    Rules,
    Stance,
)
from haf_tui.vocabulary import (
    STAGES as STAGES,  # (public here before the vocabulary module: kept importable)
)

StanceLiteral = Stance
DecisionLiteral = Decision
RulesLiteral = Rules


REFERENCE_UNCLEAR_LABEL = "NO OR UNCLEAR DECISION"
"""The reference's label (and placeholder sentence) for an output without a decision."""

DECISION_KEYWORDS: tuple[str, ...] = (
    "determine", "decision", "decide", "classify", "classified", "classification",
    "categorize", "consider", "identify", "identified",
)  # fmt: skip
HEDGE_KEYWORDS: tuple[str, ...] = (
    "but", "mild", "partial", "may", "might", "could", "possibly", "some", "likely", "seem",
    "appear", "suggest", "probab", "potential", "neutral",
)  # fmt: skip
MIN_REASON_CHARS = 20
"""List items of at most this many characters (after stripping) are dropped."""

_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|\n+")
_LIST_ITEM = re.compile(
    r"(?:^\d+[.)]\s*|^[-*]\s*)([\s\S]+?)(?=\n^\d+[.)]\s*|\n^[-*]\s*|\Z)", re.MULTILINE
)
_REASON_HEADER = re.compile(r"\b(reason|reasons)\b", re.IGNORECASE)
_I = re.IGNORECASE

# Reference rules: case-insensitive substring matching, exactly as utils/helpers.py.
_REF_HEDGE = re.compile("(" + "|".join(HEDGE_KEYWORDS) + ")", _I)
_REF_DECISION = re.compile("(" + "|".join((*DECISION_KEYWORDS, *HEDGE_KEYWORDS, "toxic")) + ")", _I)
_REF_NEGATED = re.compile(
    r"(\b(not|no|non|never|from|without|lack)\b|n't)(?:\s+\w+)*\s+toxic|-toxic|nontoxic", _I
)
_REF_TOXIC = re.compile(r"(?:\b(?:is|as|be|was|were|being|been)\b|'s)?\s*toxic", _I)

# Strict rules: whole words with common inflections.
_STRICT_HEDGE = re.compile(
    r"\b(?:but(?!\s+also\b)|mild\w*|partial\w*|may|might|could|possibl\w*|some|somewhat|likely"
    r"|seem\w*|appear\w*|suggest\w*|probab\w*|potential\w*|neutral\w*|perhaps|maybe)\b",
    _I,
)
_STRICT_TOXIC_WORD = r"\b(?:non-?)?toxic\w*"
_STRICT_DECISION = re.compile(
    r"\b(?:determin\w*|decision\w*|decid\w*|classif\w*|categori[sz]\w*|consider\w*|identif\w*)"
    rf"|{_STRICT_HEDGE.pattern}|{_STRICT_TOXIC_WORD}",
    _I,
)
_STRICT_FOLLOWUP_DECISION = re.compile(
    r"\b(?:required|needed|necessary|sufficient|insufficient|agree)\b", _I
)
_STRICT_NEGATED = re.compile(
    r"(?:\b(?:not|never|without|lacks?|lacking|far\s+from)\b|\bno\b(?!\s+doubt)|n't)"
    r"(?:\s+\w+){0,3}?\s+toxic|\bnon-?toxic|\bnot-toxic",
    _I,
)
_STRICT_TOXIC = re.compile(r"\btoxic", _I)
_LABEL_ONLY = re.compile(r":\W*$")
_REFERENCE_STANCES: dict[str, StanceLiteral] = {
    "toxic": "toxic",
    "maybe": "maybe",
    "non-toxic": "non-toxic",
}


@dataclass(frozen=True)
class Span:
    """A piece of an output text: ``text == output[start:end]``."""

    text: str
    start: int
    end: int


@dataclass(frozen=True)
class TextPiece:
    """A stretch of a reason's text that lies unbroken in the output text:
    ``output[start:end] == reason.text[offset : offset + end - start]``."""

    start: int
    end: int
    offset: int


@dataclass(frozen=True)
class Reason(Span):
    """One listed reason and its character span in the parsed output text.

    ``pieces`` is set only when the reason's text is not contiguous in the output (reference
    rules cut a copy of the decision sentence out of the middle of its list item): then
    ``start``/``end`` cover the whole item, copy included, and each piece is one unbroken
    stretch of the text, stripped of the whitespace around the cut."""

    pieces: tuple[TextPiece, ...] = ()

    def stretches(self) -> tuple[TextPiece, ...]:
        """The unbroken stretches of the reason's text in the output (one if contiguous)."""
        return self.pieces or (TextPiece(self.start, self.end, 0),)


@dataclass(frozen=True)
class JustifyParse:
    """What a JUSTIFY output says: stance, decision sentence (span -1/-1 if none), reasons."""

    stance: StanceLiteral
    decision_sentence: str
    decision_start: int
    decision_end: int
    reasons: tuple[Reason, ...]


@dataclass(frozen=True)
class FollowupParse:
    """What a follow-up output says: decision Y, its sentence and span, and the new reasons."""

    stage: str
    decision: DecisionLiteral
    decision_source: DecisionSourceLiteral
    decision_sentence: str
    decision_start: int
    decision_end: int
    reasons: tuple[Reason, ...]


def stance_from_reference_label(label: str) -> StanceLiteral:
    """Map the reference's stance label ('NO OR UNCLEAR DECISION' -> 'unclear')."""
    return _REFERENCE_STANCES.get(label, "unclear")


def split_sentences(text: str) -> list[Span]:
    """Sentences of the stripped text (split after ``.!?`` + whitespace, or at newlines).

    Each sentence is stripped; spans index ``text``. Empty pieces are left out.
    """
    body = text.strip()
    offset = len(text) - len(text.lstrip())
    sentences: list[Span] = []
    breaks = [(match.start(), match.end()) for match in _SENTENCE_BREAK.finditer(body)]
    breaks.append((len(body), len(body)))
    piece_start = 0
    for piece_end, next_start in breaks:
        piece = body[piece_start:piece_end]
        stripped = piece.strip()
        if stripped:
            start = offset + piece_start + len(piece) - len(piece.lstrip())
            sentences.append(Span(stripped, start, start + len(stripped)))
        piece_start = next_start
    return sentences


def find_decision_sentence(
    text: str, *, rules: RulesLiteral = "reference", followup: bool = False
) -> Span | None:
    """The first sentence naming toxicity or a decision (a keyword), or None."""
    _check_rules(rules)
    for sentence in split_sentences(text):
        if rules == "reference":
            if _REF_DECISION.search(sentence.text):
                return sentence
            continue
        keyword = _STRICT_DECISION.search(sentence.text) or (
            followup and _STRICT_FOLLOWUP_DECISION.search(sentence.text)
        )
        bare_label = _LABEL_ONLY.search(sentence.text) and not _STRICT_TOXIC.search(sentence.text)
        if keyword and not bare_label:
            return sentence
    return None


def stance_of(sentence: str, *, rules: RulesLiteral = "reference") -> StanceLiteral:
    """Stance of a decision sentence: hedge -> maybe, negated toxic -> non-toxic, toxic, unclear."""
    _check_rules(rules)
    strict = rules == "strict"
    if not sentence:
        return "unclear"
    if (_STRICT_HEDGE if strict else _REF_HEDGE).search(sentence):
        return "maybe"
    if (_STRICT_NEGATED if strict else _REF_NEGATED).search(sentence):
        return "non-toxic"
    if (_STRICT_TOXIC if strict else _REF_TOXIC).search(sentence):
        return "toxic"
    return "unclear"


def extract_reasons(
    text: str,
    decision: Span | None,
    *,
    drop_additional: bool,
    rules: RulesLiteral = "reference",
) -> tuple[Reason, ...]:
    """Listed reasons (``1.``/``1)``/``-``/``*`` items) once the decision sentence is removed.

    Spans index ``text``. ``text[r.start:r.end] == r.text`` always holds under strict rules
    (the sentence ends a list item like a blank line). Under reference rules (every copy of
    the sentence is deleted) it fails only where a deleted copy lay inside the reason: the
    span then covers the reason with that copy, ``r.text`` is the reference's text, and
    ``r.pieces`` are its unbroken stretches in ``text`` (the pipeline scores the longest).
    """
    _check_rules(rules)
    if rules == "reference":
        cleaned, origin = _remove_all(text, decision.text if decision else REFERENCE_UNCLEAR_LABEL)
    else:  # blank the sentence out in place, as a paragraph break: spans stay exact
        cut_start, cut_end = (decision.start, decision.end) if decision else (0, 0)
        blank = ("\n\n" + " " * (cut_end - cut_start))[: cut_end - cut_start]
        cleaned = text[:cut_start] + blank + text[cut_end:]
        origin = list(range(len(text)))
    items: list[tuple[str, int, int]] = []
    for match in _LIST_ITEM.finditer(cleaned):
        raw = match.group(1)
        body = raw.strip()
        if len(body) <= MIN_REASON_CHARS:  # also drops "" and a bare "*"
            continue
        first_paragraph = body.split("\n\n", 1)[0]
        if rules == "strict":  # (the space before a cut-out decision sentence is not the reason's)
            first_paragraph = first_paragraph.rstrip()
        start = match.start(1) + len(raw) - len(raw.lstrip())
        items.append((first_paragraph, start, start + len(first_paragraph)))
    headers = [
        i
        for i, (item, _, _) in enumerate(items)
        if _REASON_HEADER.search(item) and len(item) < MIN_REASON_CHARS
    ]
    dropped = set(headers[:1] if rules == "reference" else headers)
    reasons: list[Reason] = []
    for i, (item, start, end) in enumerate(items):
        if i in dropped or (drop_additional and "additional reason" in item.lower()):
            continue
        pieces = _pieces(item, origin[start:end])
        reasons.append(Reason(item, origin[start], origin[end - 1] + 1, pieces))
    return tuple(reasons)


def _pieces(item: str, origin: list[int]) -> tuple[TextPiece, ...]:
    """The unbroken stretches of ``item`` in the output (``origin``: each character's index
    there), whitespace at the cuts stripped; () when the item is contiguous in the output."""
    if not origin or origin[-1] - origin[0] == len(origin) - 1:
        return ()
    pieces = []
    first = 0
    for index in range(1, len(origin) + 1):
        if index < len(origin) and origin[index] == origin[index - 1] + 1:
            continue
        stretch = item[first:index]
        lead = len(stretch) - len(stretch.lstrip())
        kept = stretch.strip()
        if kept:
            offset = first + lead
            pieces.append(TextPiece(origin[offset], origin[offset] + len(kept), offset))
        first = index
    return tuple(pieces)


def parse_justify(text: str, *, rules: RulesLiteral = "reference") -> JustifyParse:
    """Parse a JUSTIFY output into stance, decision sentence (with span) and reasons."""
    sentence = find_decision_sentence(text, rules=rules)
    return JustifyParse(
        stance=stance_of(sentence.text, rules=rules) if sentence else "unclear",
        decision_sentence=sentence.text if sentence else "",
        decision_start=sentence.start if sentence else -1,
        decision_end=sentence.end if sentence else -1,
        reasons=extract_reasons(text, sentence, drop_additional=False, rules=rules),
    )


def parse_followup(
    text: str,
    stage: str,
    *,
    rules: RulesLiteral = "reference",
    similarity: Similarity | None = None,
) -> FollowupParse:
    """Parse an UPHOLD-REASON (``internal``/``external``) or UPHOLD-STANCE (``individual``) output.

    The decision sentence is found as in JUSTIFY; Y comes from :func:`decide_followup`.
    Reasons that announce "additional reason(s)" are dropped.
    """
    if stage not in FOLLOWUP_STAGES:
        raise ValueError(f"stage must be one of {FOLLOWUP_STAGES}, got {stage!r}")
    sentence = find_decision_sentence(text, rules=rules, followup=True)
    decision, source = decide_followup(sentence.text if sentence else "", similarity)
    return FollowupParse(
        stage=stage,
        decision=decision,
        decision_source=source,
        decision_sentence=sentence.text if sentence else "",
        decision_start=sentence.start if sentence else -1,
        decision_end=sentence.end if sentence else -1,
        reasons=extract_reasons(text, sentence, drop_additional=True, rules=rules),
    )


def _remove_all(text: str, needle: str) -> tuple[str, list[int]]:
    """``text.replace(needle, "")`` and, per kept character, its index in ``text``."""
    if not needle:
        return text, list(range(len(text)))
    pieces: list[str] = []
    origin: list[int] = []
    position = 0
    while (found := text.find(needle, position)) >= 0:
        pieces.append(text[position:found])
        origin.extend(range(position, found))
        position = found + len(needle)
    pieces.append(text[position:])
    origin.extend(range(position, len(text)))
    return "".join(pieces), origin


def _check_rules(rules: str) -> None:
    if rules not in RULES:
        raise ValueError(f"rules must be one of {RULES}, got {rules!r}")
