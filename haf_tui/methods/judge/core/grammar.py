"""The judge's answer format as a GBNF grammar
(``docs/methods/judge.md#43-constrained-answers``): one ``n. label`` line per
criterion of a prompt's numbering, each label one of the criterion's allowed labels (Supports: one
letter per answer choice and ``none``). Constrained judging decides each slot by the teacher-forced
log-probabilities of exactly these labels, so the format holds by construction; the grammar states
it for llama.cpp (``LlamaGrammar.from_string``) and for a server that takes GBNF. Pure: no llama.cpp
here."""

from __future__ import annotations

from collections.abc import Sequence

from haf_tui.methods.judge.core.criteria import LETTERS, Criterion, label_names
from haf_tui.methods.judge.core.parsing import DEFAULT_NUMBERING


def _literal(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def answer_grammar(
    numbering: Sequence[tuple[int, Criterion]] = DEFAULT_NUMBERING,
    n_choices: int = len(LETTERS),
) -> str:
    """The GBNF grammar of an answer to a prompt with ``numbering`` (number in the prompt,
    criterion) for an item of ``n_choices`` answer choices: ``root`` is the lines in order,
    separated by newlines; one rule per criterion, named by its id."""
    root: list[str] = []
    rules: dict[str, str] = {}
    for position, (number, crit) in enumerate(numbering):
        lead = ("\n" if position else "") + f"{number}. "
        name = crit.id.replace("_", "-")
        root.append(f"{_literal(lead)} {name}")
        rules[name] = " | ".join(_literal(label) for label in label_names(crit, n_choices))
    lines = ["root ::= " + " ".join(root)]
    lines += [f"{name} ::= {alternatives}" for name, alternatives in rules.items()]
    return "\n".join(lines) + "\n"
