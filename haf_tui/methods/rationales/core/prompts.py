"""Prompting-based rationale prompts and selection rules
(``docs/methods/rationales.md#32-the-prompts``,
``docs/methods/rationales.md#33-selection-strategies``): pure, no I/O. The toxicity
prompts are modelled word for word on P2's Table 13; all of a prompt goes in the user message (as
HAF's)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

from haf_tui.messages import ChatMessage

Variant = Literal["normal", "short"]
VARIANTS: Final[tuple[Variant, ...]] = ("normal", "short")
Strategy = Literal["unbound", "top_var", "top_ratio", "top_k"]
STRATEGIES: Final[tuple[Strategy, ...]] = ("unbound", "top_var", "top_ratio", "top_k")
TOP_KS: Final[tuple[int, ...]] = (1, 2, 3, 4, 5, 10)
"""P2's Top-k values (App. A.1, Table 8)."""

_WHY = "most important key words from the text that indicate why the following text is labeled as"


def rationale_prompt(text: str, label: str, variant: Variant, k: int | None = None) -> str:
    """The prompt asking for the words that explain ``label`` (``k``: the Top-Var, Top-Ratio
    or Top-k versions; None: Unbound)."""
    top = f"top {k} " if k is not None else ""
    if variant == "short":
        closing = (
            "• Write the key words as a pipe-separated (|) list of single words and do not explain."
            if k is not None
            else "• Write the key words as a pipe-separated (|) list of single words."
        )
        lead = "Identify the " + top if k is not None else "Identify the "
        return f"{lead}{_WHY} {label}.\n{closing}\nText: ```{text}```"
    only = f"only output top {k} keyword tokens" if k is not None else "only output keyword tokens"
    return (
        "You will be provided a text which is delimited with triple backticks. Your task is to "
        f"identify the {top}{_WHY} {label}.\n"
        "• The key words should be copied verbatim from the text.\n"
        "• Write the key words as a pipe-separated (|) list of single words.\n"
        f"• Make sure to {only} and do not explain the answer.\n"
        "• Example output: <word1> | <word2> | <word3>\n"
        f"Text: ```{text}```"
    )


def rationale_messages(
    text: str, label: str, variant: Variant, k: int | None = None
) -> tuple[ChatMessage, ...]:
    """The rationale prompt as chat messages (one user message)."""
    return (ChatMessage("user", rationale_prompt(text, label, variant, k)),)


def top_ratio_k(n: int, ratio: float) -> int:
    """Top-Ratio's k: max(1, floor(ratio·n + 0.5)) (§3.3)."""
    return max(1, int(ratio * n + 0.5))


def strategy_k(
    strategy: Strategy, n: int, *, gold_size: int | None = None, ratio: float = 0.2, k: int = 5
) -> int | None:
    """How many words a strategy asks for: None for Unbound (the model decides) and for
    Top-Var without a human rationale (no run); Top-Var: the size of HARD; Top-Ratio: of the
    ratio; Top-k: ``k``."""
    if strategy == "unbound":
        return None
    if strategy == "top_var":
        return gold_size if gold_size else None
    if strategy == "top_ratio":
        return top_ratio_k(n, ratio)
    return k


def toxicity_ratio(golds: Sequence[Sequence[int]]) -> float | None:
    """Top-Ratio's ratio for toxicity: the mean of |HARD| / n over posts with a gold (§3.3;
    computed on HateXplain's train posts at import). None without any."""
    shares = [sum(1 for v in gold if v) / len(gold) for gold in golds if gold and any(gold)]
    return sum(shares) / len(shares) if shares else None
