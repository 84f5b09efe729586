"""The domain's words, in one place and one order: stages, stances, follow-up decisions,
parser rule sets, prompting styles, HAF's metric names and labels, the NaN ↔ NULL rule for
stored numbers, and the root of haf-tui's errors (pure: no imports beyond typing and math).

Every layer takes these names from here; HAF's ``core.parsing`` and ``core.prompts`` keep
their public aliases (``StanceLiteral``, ``Stance``, ...) for researchers' code.
"""

from __future__ import annotations

import math
from typing import Final, Literal

Stage = Literal["justify", "internal", "external", "individual"]
STAGES: Final[tuple[Stage, ...]] = ("justify", "internal", "external", "individual")
"""HAF's stages in run order: JUSTIFY, UPHOLD-REASON internal and external, UPHOLD-STANCE."""
FOLLOWUP_STAGES: Final[tuple[Stage, ...]] = ("internal", "external", "individual")
"""The stages that follow JUSTIFY (an instance with an unclear stance or no reasons stops)."""

Stance = Literal["toxic", "maybe", "non-toxic", "unclear"]
STANCES: Final[tuple[Stance, ...]] = ("toxic", "maybe", "non-toxic", "unclear")
"""JUSTIFY's stance on the text."""

Decision = Literal["NO", "YES", "MAYBE", "UNCLEAR"]
DECISIONS: Final[tuple[Decision, ...]] = ("NO", "YES", "MAYBE", "UNCLEAR")
"""A follow-up's decision Y: is an additional reason required?"""

Rules = Literal["reference", "strict"]
RULES: Final[tuple[Rules, ...]] = ("reference", "strict")
"""The parser's rule sets: the authors' reference parser, or whole-word keywords."""

Prompting = Literal["explicit", "naive"]
PROMPTINGS: Final[tuple[Prompting, ...]] = ("explicit", "naive")
"""JUSTIFY's instruction: the paper's explicit one (reasons non-redundant and jointly
sufficient), or the naive one without that sentence."""

Metric = Literal["sos", "dis", "uii", "uei", "rs", "rn"]
METRIC_LABELS: Final[dict[Metric, str]] = {
    "sos": "SoS",
    "dis": "DiS",
    "uii": "UII",
    "uei": "UEI",
    "rs": "RS",
    "rn": "RN",
}
"""HAF's six metrics: the stored name and the paper's label, in the paper's order."""


def nan_for_null(value: object) -> float:
    """A stored number as a float: SQL NULL (undefined) is NaN."""
    return math.nan if value is None else float(value)  # type: ignore[arg-type]


def null_for_nan(value: float | None) -> float | None:
    """A number to store: NaN (undefined) is SQL NULL."""
    return None if value is None or math.isnan(value) else float(value)


class HafError(Exception):
    """The root of every error haf-tui reports as one clear line (a bad model, dataset,
    database, query or similarity model): the faces catch this one class."""


_CONTROLS: Final = [*range(0x20), *range(0x7F, 0xA0)]
_VISIBLE: Final = {code: f"\\x{code:02x}" for code in _CONTROLS}
"""Each control character (C0, DEL, C1: ESC among them) as its visible escape, ``\\x1b``."""
_VISIBLE_KEEPING_LINES: Final = {c: v for c, v in _VISIBLE.items() if c not in (0x09, 0x0A)}


def shown_text(text: str, *, keep_lines: bool = False) -> str:
    """Text from outside (a server's error, a model's answer, a dataset's or model's name)
    as it may reach a terminal: every control character written as its escape (``\\x1b``),
    so that none moves the cursor, colours the screen or rewrites what is shown;
    ``keep_lines``: tabs and line breaks stay (a multi-line answer)."""
    return text.translate(_VISIBLE_KEEPING_LINES if keep_lines else _VISIBLE)


def first_line(exc: BaseException) -> str:
    """An error as one line: its message's first line, or its type's name when it has none
    (DuckDB's messages run on with context; some errors carry no message), its control
    characters shown as escapes (:func:`shown_text`: a server's text may carry them)."""
    text = str(exc).strip()
    return shown_text(text.splitlines()[0]) if text else type(exc).__name__


def error_line(exc: BaseException) -> str:
    """An error as one line for a user: haf's own errors say it all; another (a plug-in's
    bug) is named by its type too."""
    if isinstance(exc, HafError):
        return first_line(exc)
    return f"{type(exc).__name__}: {first_line(exc)}"
