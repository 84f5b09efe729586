"""ACORN, the human-rated explanations the judge is meta-evaluated on
(``docs/methods/judge.md#5-meta-evaluation`` "Data"): ``ACORN.jsonl`` (GitHub ``a-brassard/ACORN``,
Hugging Face ``anab/ACORN``, MIT) read into a :class:`Dataset` whose instances carry the judge item,
the five workers' ratings and the voted ratings as §2 codes.

Each row holds ``question``, ``choices``, ``label`` (the correct answer's index),
``explanation``, the voted ratings (top-level ``supports`` … ``contrastive``, or a
``voted_ratings`` dict in the newer card), ``worker_ratings`` (worker id → rating dict), ``id``,
``q_source``, ``e_source`` and more. An instance is::

    instance_id = the ACORN id (the row number when there is none), text = the explanation,
    label = None, extra = {
        "judge_item": {"question": str, "choices": [str, ...], "explanation": str},
        "human_ratings": {criterion id: [code or None per worker, in worker order]},
        "workers": [worker id, ...],          # the file's order
        "voted": {criterion id: code or None},
        "q_source": ..., "e_source": ...,
        "answer": the correct answer's 0-based index or None,
    }

Reading is liberal (:func:`rating_code`): Supports as ``a``/``a)``/``(a)``/``A``, ``none``/
``neither``, the choice's text or an index; Overall as ``4``, ``4/5``, ``★★★★``, ``4 stars``;
``yes``/``no``, booleans, 0/1; ``N/A``; ``none``/``some``/``sufficient``/``ample`` or 0–3.
Integer encodings are checked once per file (:class:`Encoding`): an index equal to the item's
number of choices can only be 1-based, so indices are 0-based unless one is; Overall is 1–5
unless 0 occurs and 5 never does. What was decided is kept in ``meta['acorn']``.

A rating that cannot be read becomes None (counted per criterion in
``meta['acorn']['unreadable']``); a row that cannot be read (not JSON, no question or choices,
an empty explanation, no readable rating at all, a duplicate id, ...) is a skipped row with its
reason, never an exception. Explanations are kept however short (no length window); a voted
rating the row lacks is the workers' majority vote, ties broken by a seed derived from the
id and criterion (counted in ``meta['acorn']['voted_computed']``).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from haf_tui.datasets.formats import DatasetFormat
from haf_tui.datasets.model import Dataset, DatasetError
from haf_tui.datasets.readers import BROKEN_LINE
from haf_tui.datasets.validation import (
    DEFAULT_MAX_CHARS,
    DUPLICATE_ID,
    EMPTY,
    NOT_JSON,
    NOT_OBJECT,
    NOT_UTF8,
    TOO_LONG,
    WHITESPACE,
    SkippedRow,
    excerpt,
    has_undecodable,
)
from haf_tui.methods.judge.core.criteria import CRITERION_IDS, LETTERS
from haf_tui.methods.judge.core.metrics import majority_vote
from haf_tui.methods.judge.core.prompts import JudgeItem
from haf_tui.methods.judge.datasets.acorn_files import (
    ACORN_FILE,
    ACORN_HOME,
    acorn_file,
    is_acorn_file,
    read_rows,
)
from haf_tui.methods.judge.datasets.acorn_ratings import (
    Encoding,
    UnreadableRatingError,
    code_of,
    criterion_key,
    integer_of,
    is_missing,
    rating_code,
)
from haf_tui.store.records import InstanceRecord

ACORN_NAME: Final = "acorn"

NO_ITEM: Final = "no question or answer choices (1 to 5)"
NO_RATINGS: Final = "no readable rating"
NOT_TEXT: Final = "explanation is not text"


def is_acorn_name(name: str) -> bool:
    """Whether ``name`` names ACORN (``acorn``, ``anab/ACORN``, ``a-brassard/ACORN``)."""
    return ACORN_FORMAT.named(name)


# ---------------------------------------------------------------- rows


def _decoded(value: Any) -> Any:
    """A field a converter may have written as a JSON string (``"{...}"``, ``"[...]"``)."""
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _choices(value: Any) -> list[str] | None:
    value = _decoded(value)
    if isinstance(value, Mapping):  # CommonsenseQA's {"label": [...], "text": [...]}
        value = value.get("text")
    if not isinstance(value, list | tuple) or not 1 <= len(value) <= len(LETTERS):
        return None
    texts = [" ".join(str(v).split()) if v is not None else "" for v in value]
    return texts if all(texts) else None


def _ratings_of(record: Mapping[str, Any]) -> dict[str, Any]:
    """A rating dict's values by criterion id (other keys dropped)."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        crit = criterion_key(key)
        if crit is not None and crit not in out:
            out[crit] = value
    return out


def _workers(value: Any) -> list[tuple[str, dict[str, Any]]]:
    """(worker id, ratings by criterion) in the file's order; a list of dicts is accepted
    too (ids from ``worker_id``/``worker``/``id``, else the position)."""
    value = _decoded(value)
    pairs: list[tuple[str, Any]] = []
    if isinstance(value, Mapping):
        pairs = [(str(k), _decoded(v)) for k, v in value.items()]
    elif isinstance(value, list | tuple):
        for position, entry in enumerate(value):
            entry = _decoded(entry)
            if isinstance(entry, Mapping):
                wid = next(
                    (entry[k] for k in ("worker_id", "worker", "id") if entry.get(k) is not None),
                    position,
                )
                pairs.append((str(wid), entry))
    return [(wid, _ratings_of(r)) for wid, r in pairs if isinstance(r, Mapping)]


def _voted_raw(record: Mapping[str, Any]) -> dict[str, Any]:
    voted = _decoded(record.get("voted_ratings"))
    if isinstance(voted, Mapping):
        return _ratings_of(voted)
    return _ratings_of({k: v for k, v in record.items() if k not in _NOT_RATINGS})


_NOT_RATINGS: Final = frozenset({"worker_ratings", "voted_ratings", "id", "label", "choices"})


def _answer_index(value: Any, choices: Sequence[str], base: int) -> int | None:
    if isinstance(value, str) and len(value.strip()) == 1 and value.strip().isalpha():
        index = LETTERS.find(value.strip().lower())
        return index if 0 <= index < len(choices) else None
    number = integer_of(value)
    if number is None or not 0 <= number - base < len(choices):
        return None
    return number - base


def detect_encoding(records: Iterable[Mapping[str, Any]]) -> Encoding:
    """The file's integer encoding (:class:`Encoding`) from all its rows: an index equal to
    its item's number of choices only exists 1-based; Overall is 0–4 when 0 occurs and 5
    never does."""
    label_one = supports_one = False
    overall_seen: set[int] = set()
    for record in records:
        choices = _choices(record.get("choices"))
        n = len(choices) if choices else None
        label = integer_of(record.get("label"))
        label_one |= n is not None and label == n
        values = [_voted_raw(record), *(r for _, r in _workers(record.get("worker_ratings")))]
        for ratings in values:
            supports = integer_of(ratings.get("supports"))
            supports_one |= n is not None and supports == n
            overall = integer_of(ratings.get("overall"))
            if overall is not None:
                overall_seen.add(overall)
    overall_base = 0 if 0 in overall_seen and 5 not in overall_seen else 1
    return Encoding(int(label_one), int(supports_one), overall_base)


@dataclass
class _Tally:
    unreadable: Counter[str]
    voted_computed: Counter[str]


def _codes(
    ratings: Mapping[str, Any], choices: Sequence[str], encoding: Encoding, tally: _Tally
) -> dict[str, int | None]:
    codes: dict[str, int | None] = {}
    for crit in CRITERION_IDS:
        try:
            codes[crit] = code_of(crit, ratings.get(crit), choices, encoding)
        except UnreadableRatingError:
            tally.unreadable[crit] += 1
            codes[crit] = None
    return codes


def _instance_extra(
    record: Mapping[str, Any], item_id: str, choices: list[str], encoding: Encoding, tally: _Tally
) -> dict[str, Any] | None:
    """The instance's ``extra``, or None when it holds no readable rating."""
    workers = _workers(record.get("worker_ratings"))
    worker_codes = [_codes(r, choices, encoding, tally) for _, r in workers]
    human = {c: [codes[c] for codes in worker_codes] for c in CRITERION_IDS}
    raw_voted = _voted_raw(record)
    voted = _codes(raw_voted, choices, encoding, tally)
    for crit in CRITERION_IDS:
        if crit not in raw_voted and any(v is not None for v in human[crit]):
            vote = majority_vote(human[crit], random.Random(f"{item_id}:{crit}"))
            voted[crit] = None if vote is None else int(vote)
            tally.voted_computed[crit] += 1
    if all(v is None for v in voted.values()) and not any(
        v is not None for codes in human.values() for v in codes
    ):
        return None
    return {
        "judge_item": JudgeItem(
            " ".join(str(record["question"]).split()),
            tuple(choices),
            str(record["explanation"]).strip(),
        ).as_extra(),
        "human_ratings": human,
        "workers": [wid for wid, _ in workers],
        "voted": voted,
        "q_source": record.get("q_source"),
        "e_source": record.get("e_source"),
        "answer": _answer_index(record.get("label"), choices, encoding.label_base),
    }


def load_acorn(
    path: str | Path,
    *,
    name: str | None = None,
    encoding: str | None = None,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> Dataset:
    """ACORN read from ``path`` (``ACORN.jsonl``; a JSON or Parquet export works too): every
    readable row an instance, the others skipped with why. DatasetError only when the file
    itself cannot be read."""
    file_path = acorn_file([path])
    fmt, used, rows = read_rows(file_path, encoding)
    if not rows:
        raise DatasetError(f"ACORN file {file_path} has no rows")
    objects = [r for _, r in rows if isinstance(r, dict) and BROKEN_LINE not in r]
    enc = detect_encoding(objects)
    tally = _Tally(Counter(), Counter())
    instances: list[InstanceRecord] = []
    skipped: list[SkippedRow] = []
    seen: set[str] = set()
    for number, record in rows:
        if isinstance(record, dict) and BROKEN_LINE in record:
            skipped.append(SkippedRow(number, NOT_JSON, excerpt(record.get("text"))))
            continue
        if not isinstance(record, dict):
            skipped.append(SkippedRow(number, NOT_OBJECT, excerpt(json.dumps(record))))
            continue
        explanation = record.get("explanation")
        raw_id = record.get("id")
        item_id = str(number) if is_missing(raw_id) else str(raw_id)
        choices = _choices(record.get("choices"))
        question = record.get("question")
        reason = _row_reason(explanation, question, choices, item_id, seen, max_chars)
        extra = None
        if reason is None and choices is not None:
            extra = _instance_extra(record, item_id, choices, enc, tally)
            reason = NO_RATINGS if extra is None else None
        if reason is not None or extra is None:
            skipped.append(SkippedRow(number, reason or NO_RATINGS, excerpt(explanation)))
            continue
        seen.add(item_id)
        instances.append(
            InstanceRecord(
                instance_id=item_id,
                position=len(instances),
                text=extra["judge_item"]["explanation"],
                label=None,
                extra=extra,
            )
        )
    digest = hashlib.sha256(file_path.read_bytes())
    digest.update(f"|acorn|{max_chars}".encode())
    meta: dict[str, Any] = {
        "kind": "acorn",
        "format": fmt,
        "encoding": used,
        "max_chars": max_chars,
        "n_rows": len(rows),
        "origin": {"files": [str(file_path)], "home": ACORN_HOME},
        "acorn": {
            "encoding": enc.describe(),
            "unreadable": dict(tally.unreadable),
            "voted_computed": dict(tally.voted_computed),
            "workers": len({w for i in instances for w in i.extra["workers"]}),
        },
    }
    return Dataset(
        f"acorn-{digest.hexdigest()[:12]}",
        name or ACORN_NAME,
        str(file_path),
        instances,
        skipped,
        meta,
    )


def _row_reason(
    explanation: Any,
    question: Any,
    choices: list[str] | None,
    item_id: str,
    seen: set[str],
    max_chars: int,
) -> str | None:
    """Why a row cannot be an instance (before its ratings are read), or None."""
    if any(has_undecodable(v) for v in (explanation, question, item_id)):
        return NOT_UTF8
    if choices is not None and any(has_undecodable(c) for c in choices):
        return NOT_UTF8
    if explanation is None or explanation == "":
        return EMPTY
    if not isinstance(explanation, str):
        return NOT_TEXT
    if not explanation.strip():
        return WHITESPACE
    if len(explanation) > max_chars:
        return TOO_LONG
    if not isinstance(question, str) or not question.strip() or choices is None:
        return NO_ITEM
    if item_id in seen:
        return DUPLICATE_ID
    return None


def _read(
    paths: Sequence[Path],
    *,
    name: str | None = None,
    encoding: str | None = None,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> Dataset:
    """ACORN from its file (or a folder holding it)."""
    return load_acorn(acorn_file(paths), name=name, encoding=encoding, max_chars=max_chars)


ACORN_FORMAT: Final = DatasetFormat(
    ACORN_NAME,
    "ACORN, human-rated explanations (the judge's meta-evaluation)",
    _read,
    recognises=is_acorn_file,
    without_file=(
        f"ACORN is read from its file: download {ACORN_FILE} ({ACORN_HOME}), then "
        f"haf datasets import acorn --file {ACORN_FILE}"
    ),
    aliases=("anab/ACORN", "a-brassard/ACORN"),
)
"""ACORN as the judge's own dataset format (``Method.dataset_formats``)."""


__all__ = [
    "ACORN_FILE",
    "ACORN_FORMAT",
    "ACORN_NAME",
    "NOT_OBJECT",
    "NOT_TEXT",
    "NO_ITEM",
    "NO_RATINGS",
    "Encoding",
    "acorn_file",
    "criterion_key",
    "detect_encoding",
    "is_acorn_file",
    "is_acorn_name",
    "load_acorn",
    "rating_code",
]
