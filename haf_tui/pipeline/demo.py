"""What ``haf run --demo`` (``make run``) runs, for both faces: the demo's texts, its decoding
and its stop rule. The CLI's ``--demo`` and the workbench's demo source take them from here, so
that the two cannot drift (the demo's numbers: :mod:`haf_tui.defaults`, docs/demo.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from haf_tui.defaults import (
    DEMO_MAX_NEW_TOKENS,
    DEMO_MAX_TEXTS,
    DEMO_SEED,
    DEMO_TEMPERATURE,
    DEMO_UNTIL_COMPLETE,
)
from haf_tui.vocabulary import HafError

DEMO_DECODING: dict[str, Any] = {
    "max_new_tokens": DEMO_MAX_NEW_TOKENS,
    "seed": DEMO_SEED,
    "temperature": DEMO_TEMPERATURE,
}
"""The demo's decoding fields (greedy; a value the user gives wins): ``DecodingSettings``'s."""


def demo_stop(limit: int | None = None, until_complete: int | None = None) -> dict[str, int]:
    """The demo's stop rule as ``RunConfig`` fields: its texts in order until
    ``until_complete`` (the demo's 3) went through every stage, at most ``limit`` (all 25);
    a value given (not None) is the user's."""
    return {
        "limit": DEMO_MAX_TEXTS if limit is None else limit,
        "until_complete": DEMO_UNTIL_COMPLETE if until_complete is None else until_complete,
    }


def demo_said(limit: int = DEMO_MAX_TEXTS, until_complete: int = DEMO_UNTIL_COMPLETE) -> str:
    """The rule in words: ``the demo's 25 texts in order until 3 go through every stage``
    (fewer: ``the demo's first 10 texts …``; no more texts than must go through: ``the
    demo's first 3 texts in order``, the rule then stops nothing)."""
    taken = min(limit, DEMO_MAX_TEXTS)
    if taken == DEMO_MAX_TEXTS:
        texts = f"the demo's {DEMO_MAX_TEXTS} texts"
    else:
        texts = "the demo's first text" if taken == 1 else f"the demo's first {taken} texts"
    if until_complete >= taken:
        return f"{texts} in order"
    go = "goes" if until_complete == 1 else "go"
    return f"{texts} in order until {until_complete} {go} through every stage"


class DemoModelError(HafError):
    """The demo's texts asked of a model other than the embedded one."""


def refuse_other_models(demo_named: str, other_models: Sequence[str], instead: str) -> None:
    """The demo's rule for both faces: it runs the embedded model alone (its texts, decoding
    and stop rule are chosen for that model's answers; another model would run the paper's
    decoding on them). ``demo_named``: what the face calls the demo (``--demo``, the wizard's
    demo source); ``other_models``: the models asked for besides the embedded one (none: no
    error); ``instead``: what to do, in the face's own terms. :class:`DemoModelError` says why
    and what to do, in one line."""
    if other_models:
        named = ", ".join(other_models)
        raise DemoModelError(
            f"{demo_named} runs the embedded model only (the demo's texts and decoding are "
            f"chosen for its answers), not {named}: {instead}"
        )
