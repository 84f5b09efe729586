"""Why a row is not an instance: the skip reasons, and the checks that give them.

Two kinds of exclusion are kept apart, and neither is silent:

- a row is *skipped* when it cannot be evaluated (holding NUL bytes, empty, whitespace-only,
  over-long, not UTF-8, a duplicate, or without a label where a label column is mapped; a JSON
  Lines line that is not valid JSON or not an object); each skipped row is
  stored with its row number, its reason and a short excerpt (``haf datasets show``);
- a row is *filtered* when the paper's preprocessing (spec §8) leaves it out (length window,
  score band, ...) or the seeded sample does not draw it; those are counted per reason.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, Final, NamedTuple

CONTAINS_NUL: Final = "contains NUL bytes"
EMPTY: Final = "empty text"
WHITESPACE: Final = "whitespace-only text"
TOO_LONG: Final = "text too long"
NOT_UTF8: Final = "not UTF-8"
DUPLICATE_ID: Final = "duplicate id"
DUPLICATE_TEXT: Final = "duplicate text"
NO_LABEL: Final = "no label"
BAD_LABEL: Final = "label the label rule does not read"
"""A label the dataset's label rule gives no gold for (the reason goes on: which value)."""
NOT_JSON: Final = "not valid JSON"
NOT_OBJECT: Final = "not a JSON object"

SKIP_REASONS: Final = (
    CONTAINS_NUL,
    EMPTY,
    WHITESPACE,
    TOO_LONG,
    NOT_UTF8,
    DUPLICATE_ID,
    DUPLICATE_TEXT,
    NO_LABEL,
)
"""Every reason a row can be skipped for, in the order the checks run."""

# the paper's preprocessing (filters: counted, not stored row by row)
FILTER_NO_TEXT: Final = "no text"
FILTER_SHORT: Final = "64 characters or fewer"
FILTER_LONG: Final = "1024 characters or more"
FILTER_NO_SCORE: Final = "no toxicity score"
FILTER_BAND: Final = "score neither mild (0.5-0.6) nor toxic (> 0.75)"
FILTER_NOT_TOXIC: Final = "label is not toxic (1)"
FILTER_FEW_ANNOTATORS: Final = "fewer than 2 annotators say hate or offensive"
FILTER_NOT_SAMPLED: Final = "not drawn by the seeded sample"
SKIP_BAD_MASK: Final = "a rationale mask of the wrong length"
"""A HateXplain post one of whose annotator masks is not as long as its tokens
(docs/methods/rationales.md §5: skipped with an error record)."""

DEFAULT_MAX_CHARS: Final = 20_000
KEY_BYTES: Final = 16
_EMPTY: Final = bytes(KEY_BYTES)
EXCERPT_CHARS: Final = 80
_UNDECODABLE: Final = re.compile("[\udc80-\udcff]")


class SkippedRow(NamedTuple):
    """A row left out: its number in the source (1-based), why, and the start of its text."""

    row: int
    reason: str
    excerpt: str = ""


def excerpt(value: Any, limit: int = EXCERPT_CHARS) -> str:
    """A one-line start of a value (undecodable and NUL bytes shown as U+FFFD)."""
    text = "" if value is None else str(value)
    text = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    text = text.replace("\x00", "\ufffd")
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def has_undecodable(value: Any) -> bool:
    """Whether a decoded value still holds bytes that were not UTF-8 (lone surrogates)."""
    return isinstance(value, str) and _UNDECODABLE.search(value) is not None


def text_key(text: str) -> bytes:
    """What a duplicate id or text is told by: a 128-bit digest of it, not the text (an
    import keeps one per instance: a file's texts are never all held, issue 42 §6)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class DigestSet:
    """A set of 16-byte digests (:func:`text_key`) in one byte array: open addressing with
    linear probing, at most three quarters full, 16 to 32 bytes a digest (a Python set of
    them took about 90: a million rows' ids and texts, 200 MB). The all-zero digest, which
    marks an empty slot, is kept aside."""

    def __init__(self, slots: int = 1024) -> None:
        self._slots = slots  # (a power of two)
        self._table = bytearray(KEY_BYTES * slots)
        self._n = 0
        self._zero = False

    def __len__(self) -> int:
        return self._n + self._zero

    def __contains__(self, key: bytes) -> bool:
        if key == _EMPTY:
            return self._zero
        at = self._find(key)
        return self._table[at : at + KEY_BYTES] == key

    def _find(self, key: bytes) -> int:
        """The offset of ``key``'s slot, or of the empty slot where it would go."""
        mask = self._slots - 1
        slot = int.from_bytes(key[:8], "little") & mask
        table = self._table
        while True:
            at = slot * KEY_BYTES
            held = table[at : at + KEY_BYTES]
            if held in (key, _EMPTY):
                return at
            slot = (slot + 1) & mask

    def add(self, key: bytes) -> None:
        """Add a digest (a second add of it changes nothing)."""
        if key == _EMPTY:
            self._zero = True
            return
        at = self._find(key)
        if self._table[at : at + KEY_BYTES] == key:
            return
        self._table[at : at + KEY_BYTES] = key
        self._n += 1
        if 4 * self._n > 3 * self._slots:
            self._grow()

    def _grow(self) -> None:
        old = self._table
        self._slots *= 2
        self._table = bytearray(KEY_BYTES * self._slots)
        for at in range(0, len(old), KEY_BYTES):
            key = bytes(old[at : at + KEY_BYTES])
            if key != _EMPTY:
                new = self._find(key)
                self._table[new : new + KEY_BYTES] = key


class RowValidator:
    """Checks rows one by one, remembering the digests of ids and texts (:func:`text_key`, in
    a :class:`DigestSet`) to catch duplicates."""

    def __init__(self, *, max_chars: int = DEFAULT_MAX_CHARS, label_required: bool = False):
        self.max_chars = max_chars
        self.label_required = label_required
        self._ids = DigestSet()
        self._texts = DigestSet()

    def reason(self, text: Any, instance_id: str, label: Any, *others: Any) -> str | None:
        """Why this row must be skipped, or None (then its id and text count as seen)."""
        values = (text, instance_id, label, *others)
        if any(isinstance(v, str) and "\x00" in v for v in values):
            return CONTAINS_NUL
        if any(has_undecodable(v) for v in values):
            return NOT_UTF8
        value = "" if text is None else str(text)
        if not value:
            return EMPTY
        if not value.strip():
            return WHITESPACE
        if len(value) > self.max_chars:
            return TOO_LONG
        if self.label_required and (label is None or not str(label).strip()):
            return NO_LABEL
        id_key, key = text_key(instance_id), text_key(value)
        if id_key in self._ids:
            return DUPLICATE_ID
        if key in self._texts:
            return DUPLICATE_TEXT
        self._ids.add(id_key)
        self._texts.add(key)
        return None
