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
import math
import random
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from haf_tui.datasets.model import Dataset, DatasetError
from haf_tui.datasets.readers import BROKEN_LINE, decode_bytes, read_table
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
from haf_tui.methods.judge.core.criteria import CRITERION_IDS, LETTERS, criterion
from haf_tui.methods.judge.core.metrics import majority_vote
from haf_tui.methods.judge.core.parsing import parse_label
from haf_tui.methods.judge.core.prompts import JudgeItem
from haf_tui.store.records import InstanceRecord

ACORN_NAME: Final = "acorn"
ACORN_FILE: Final = "ACORN.jsonl"
ACORN_HOME: Final = "GitHub a-brassard/ACORN or Hugging Face anab/ACORN"
_ALIASES: Final = frozenset({"acorn", "anab/acorn", "abrassard/acorn"})
_SUFFIXES: Final = (".jsonl", ".ndjson", ".json", ".parquet")

NO_ITEM: Final = "no question or answer choices (1 to 5)"
NO_RATINGS: Final = "no readable rating"
NOT_TEXT: Final = "explanation is not text"

_KEY_ALIASES: Final[dict[str, str]] = {
    "support": "supports",
    "supported": "supports",
    "overall_rating": "overall",
    "rating": "overall",
    "wellwritten": "well_written",
    "well_writtenness": "well_written",
    "fluent": "well_written",
    "relevant": "related",
    "relevance": "related",
    "relatedness": "related",
    "facts": "factual",
    "factuality": "factual",
    "new_information": "new_info",
    "newinfo": "new_info",
    "unnecessary_information": "unnecessary_info",
    "unnecessary": "unnecessary_info",
    "unnecessaryinfo": "unnecessary_info",
    "contrast": "contrastive",
    "contrastiveness": "contrastive",
}
_TRUE: Final = frozenset({"true", "t", "y"})
_FALSE: Final = frozenset({"false", "f", "n"})
_NONE_SUPPORT: Final = frozenset({"none of the above", "none of them", "neither of them"})
_STARS_WORD = re.compile(r"\s*stars?$")
_INTEGER = re.compile(r"[+-]?[0-9]+(?:\.0*)?")


class _UnreadableError(Exception):
    """A rating value no rule maps to a code."""


def is_acorn_name(name: str) -> bool:
    """Whether ``name`` names ACORN (``acorn``, ``anab/ACORN``, ``a-brassard/ACORN``)."""
    return re.sub(r"[\s_\-]+", "", name.lower()) in _ALIASES


def criterion_key(key: str) -> str | None:
    """The criterion id a rating field names (case, spaces and dashes ignored; a few
    spellings such as ``new information`` accepted), or None."""
    norm = re.sub(r"[\s\-]+", "_", str(key).strip().lower())
    norm = _KEY_ALIASES.get(norm, _KEY_ALIASES.get(norm.replace("_", ""), norm))
    return norm if norm in CRITERION_IDS else None


@dataclass(frozen=True)
class Encoding:
    """How a file writes integers, decided once per file (§5 "check the label encoding"):
    ``label_base`` / ``supports_base`` 0 or 1 (the first answer choice's index), and
    ``overall_base`` 1 (stars 1–5) or 0 (0–4, shifted up)."""

    label_base: int = 0
    supports_base: int = 0
    overall_base: int = 1

    def describe(self) -> dict[str, str]:
        """The decisions, as kept in the dataset's metadata."""
        return {
            "label": f"{self.label_base}-based index",
            "supports": f"{self.supports_base}-based index"
            + (", 0 or -1 = none" if self.supports_base else ", -1 = none"),
            "overall": "1-5" if self.overall_base == 1 else "0-4 (shifted to 1-5)",
        }


# ---------------------------------------------------------------- values


def _integer(value: Any) -> int | None:
    """An integral number (int, integral float, or such a string), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if math.isfinite(value) and value.is_integer() else None
    if isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
        return int(float(value.strip()))
    return None


def _is_missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return isinstance(value, str) and not value.strip()


def _supports_index(number: int, n_choices: int, base: int) -> int:
    if base == 1 and number in (0, -1):
        return -1
    if base == 0 and number == -1:
        return -1
    index = number - base
    if 0 <= index < n_choices:
        return index
    raise _UnreadableError(number)


def rating_code(
    criterion_id: str,
    value: Any,
    choices: Sequence[str] = (),
    encoding: Encoding | None = None,
) -> int | None:
    """The §2 code of one rating value; None for a missing one (null, empty, NaN).
    Raises ``ValueError`` when no rule reads it (the importer then keeps None and counts it).

    ``choices`` are the item's answer choices (Supports: their number bounds the letters and
    indices, and a choice's text names it)."""
    try:
        return _code(criterion_id, value, choices, encoding or Encoding())
    except _UnreadableError as exc:
        raise ValueError(f"{criterion_id}: cannot read {value!r}") from exc


def _code(criterion_id: str, value: Any, choices: Sequence[str], encoding: Encoding) -> int | None:
    if _is_missing(value):
        return None
    crit = criterion(criterion_id)
    n_choices = len(choices) or len(LETTERS)
    if isinstance(value, bool):
        if crit.names[-2:] == ("no", "yes"):  # binary criteria and Factual
            return int(value)
        raise _UnreadableError(value)
    number = _integer(value)
    if number is not None:
        if criterion_id == "supports":
            return _supports_index(number, n_choices, encoding.supports_base)
        if criterion_id == "overall":
            number += 1 - encoding.overall_base
        if number in {label.code for label in crit.labels}:
            return number
        raise _UnreadableError(value)
    if not isinstance(value, str):
        raise _UnreadableError(value)
    text = " ".join(value.split())
    low = text.lower().strip(" .!*")
    if criterion_id == "supports":
        for index, choice in enumerate(choices):
            if low and low == " ".join(str(choice).split()).lower().strip(" .!*"):
                return index
        if low in _NONE_SUPPORT:
            return -1
    if criterion_id == "overall":
        text = _STARS_WORD.sub("", text)
    if crit.names[-2:] == ("no", "yes"):
        if low in _TRUE:
            return 1
        if low in _FALSE:
            return 0
    label = parse_label(crit, text, n_choices)
    if label is None:
        raise _UnreadableError(value)
    return crit.code(label)


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
    number = _integer(value)
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
        label = _integer(record.get("label"))
        label_one |= n is not None and label == n
        values = [_voted_raw(record), *(r for _, r in _workers(record.get("worker_ratings")))]
        for ratings in values:
            supports = _integer(ratings.get("supports"))
            supports_one |= n is not None and supports == n
            overall = _integer(ratings.get("overall"))
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
            codes[crit] = _code(crit, ratings.get(crit), choices, encoding)
        except _UnreadableError:
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


# ---------------------------------------------------------------- files


def _jsonl_rows(text: str) -> Iterator[tuple[int, Any]]:
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as exc:
            yield number, {BROKEN_LINE: f"{exc.msg} at column {exc.colno}", "text": line}


def _read_rows(path: Path, encoding: str | None) -> tuple[str, str | None, list[tuple[int, Any]]]:
    """The file's format, encoding and numbered rows (a JSON Lines line that is not an
    object stays a row, to be skipped; other formats through :func:`read_table`)."""
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise DatasetError(f"cannot read {path}: {exc.strerror or exc}") from exc
        text, used = decode_bytes(raw, path, encoding)
        return "jsonl", used, list(_jsonl_rows(text))
    table = read_table(path, encoding=encoding)
    return table.format, table.encoding, list(table.rows)


def is_acorn_file(path: str | Path) -> bool:
    """Whether a file looks like ACORN: a JSON Lines/JSON/Parquet file whose first object has
    ``question``, ``choices``, ``explanation`` and worker or voted ratings."""
    file_path = Path(path).expanduser()
    if file_path.suffix.lower() not in _SUFFIXES or not file_path.is_file():
        return False
    try:
        if file_path.suffix.lower() in (".jsonl", ".ndjson"):
            with file_path.open(encoding="utf-8", errors="replace") as handle:
                first = next((json.loads(line) for line in handle if line.strip()), None)
        else:
            rows = read_table(file_path, limit=1).rows
            first = rows[0][1] if rows else None
    except (DatasetError, json.JSONDecodeError, OSError, UnicodeError):
        return False
    if not isinstance(first, dict) or not {"question", "choices", "explanation"} <= set(first):
        return False
    return "worker_ratings" in first or "voted_ratings" in first or "supports" in first


def acorn_file(files: Sequence[str | Path]) -> Path:
    """The one ACORN file ``files`` names: a file, or a folder holding ``ACORN.jsonl``
    (DatasetError otherwise)."""
    if len(files) != 1:
        raise DatasetError(f"ACORN is one file ({ACORN_FILE}): give one --file, not {len(files)}")
    path = Path(files[0]).expanduser()
    if path.is_dir():
        found = sorted(p for p in path.rglob("*") if p.name.lower() == ACORN_FILE.lower())
        if not found:
            raise DatasetError(f"no {ACORN_FILE} in folder {path}")
        return found[0]
    if not path.is_file():
        raise DatasetError(f"ACORN file not found: {path} (download {ACORN_FILE}: {ACORN_HOME})")
    return path


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
    fmt, used, rows = _read_rows(file_path, encoding)
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
        item_id = str(number) if _is_missing(raw_id) else str(raw_id)
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


__all__ = [
    "ACORN_FILE",
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
