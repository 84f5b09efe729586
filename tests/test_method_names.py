"""A method lives in its package (issue 35 §2): outside ``haf_tui/methods/<name>/`` at most two
places of ``haf_tui/`` name each of the built-in methods ``classify``, ``rationales`` and
``judge`` (:data:`ALLOWED`).

What "names" means: the code, read with :mod:`tokenize`, holds an identifier or a string
literal (f-strings included) containing the method's stem (``classif``, ``rationale``,
``judg``; case ignored). Comments and docstrings are prose, not code, and are not counted: a
face may say in words that a method exists, it may not reach for one.

One exception, exact (:data:`NOT_THE_METHOD`): words that are someone else's and only share a
method's stem. The English words HAF's parser looks for in a model's answer ("classify",
"classified", "classification" and the "classif" word of its strict decision pattern: the verb of
"I classify this text as toxic"), transformers' own names of a cross-encoder's architecture
(``AutoModelForSequenceClassification``, which the similarity model g checks a cross-encoder
against), and HateXplain's own words (its JSON field ``rationales``, the
annotators' token masks, read and kept under that key; its description and the reason a post with
a mask of the wrong length is skipped, both stored with an imported dataset). Those string
literals, token for token and in those files alone, are not counted; any other word of the file
is, and the test fails when one of them is no longer there (the exception cannot outlive what it
excuses). They were kept as they are rather than respelled (``"class" + "ify"``), which would hide
the word from the count without changing what it is, or renamed, which would change what an
imported dataset stores.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "haf_tui"

STEMS = {"classify": "classif", "rationales": "rationale", "judge": "judg"}
"""Each built-in method and the stem its words share (``rationale_view``, ``JudgeView``,
``classifier``)."""

MOST = 2

RE_EXPORTS = frozenset({"judge", "rationales", "metrics.py", "parsing.py", "prompts.py"})
"""The three-line re-exports at ``haf_tui/<name>`` that issue 35 §4 removes (another branch):
they are the method's own public path, not a face naming it."""

NOT_THE_METHOD: dict[str, frozenset[str]] = {
    "datasets/paper.py": frozenset(
        {'"Twitter and Gab posts with per-annotator labels, targets and rationales"'}
    ),
    "datasets/preprocess.py": frozenset({'"rationales"'}),
    "datasets/validation.py": frozenset({'"a rationale mask of the wrong length"'}),
    "similarity.py": frozenset(
        {'"ForSequenceClassification"', "AutoModelForSequenceClassification"}
    ),
    "methods/haf/core/parsing.py": frozenset(
        {
            '"classify"',
            '"classified"',
            '"classification"',
            r'r"\b(?:determin\w*|decision\w*|decid\w*|classif\w*|categori[sz]\w*|consider\w*|identif\w*)"',
        }
    ),
}
"""Words of a model's English answer or of HateXplain's data that share a method's stem without
naming the method: the exact string literals (as written in the file) the count skips there."""

ALLOWED: dict[str, frozenset[str]] = {
    "classify": frozenset({"methods/__init__.py", "methods/rationales/"}),
    "rationales": frozenset({"methods/__init__.py", "store/migrations.py"}),
    "judge": frozenset({"methods/__init__.py", "store/migrations.py"}),
}
"""Where a method may be named (at most :data:`MOST` places): the list of built-ins (their
modules, which the loader imports, and their own commands, which ``haf --help`` lists without
loading them);
the rationales method, which scores its texts with classify's label scores (its package is one
place: ``methods/rationales/``); the released core migrations, never edited, whose migration 8
moved each method's settings under ``settings.<name>``."""


def docstring_lines(source: str) -> set[int]:
    """The lines of every docstring (a string alone as a statement) in ``source``."""
    lines: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return lines


def code_words(source: str, others: frozenset[str] = frozenset()) -> list[str]:
    """The identifiers and string literals of ``source``'s code (no comments, no docstrings,
    none of the string literals ``others``)."""
    skipped = docstring_lines(source)
    words = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.start[0] in skipped or token.string in others:
            continue
        kind = token.type
        if kind in (tokenize.NAME, tokenize.STRING) or kind in _FSTRING_KINDS:
            words.append(token.string)
    return words


_FSTRING_KINDS = frozenset(
    getattr(tokenize, kind)
    for kind in ("FSTRING_START", "FSTRING_MIDDLE")
    if hasattr(tokenize, kind)
)
"""An f-string's parts on Python 3.12 and later (one STRING token before)."""


def names(source: str, stem: str, others: frozenset[str] = frozenset()) -> bool:
    """Whether ``source``'s code (but the string literals ``others``) names the method whose
    words share ``stem``."""
    pattern = re.compile(re.escape(stem), re.IGNORECASE)
    return any(pattern.search(word) for word in code_words(source, others))


def files_naming(method: str, root: Path = PACKAGE) -> list[str]:
    """The places of ``root`` outside ``methods/<method>/`` (and the re-exports) whose code
    names ``method``: ``.py`` files as paths relative to ``root``, another method's package as
    one place (``methods/<other>/``)."""
    own = root / "methods" / method
    found: set[str] = set()
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if path.is_relative_to(own) or relative.parts[0] in RE_EXPORTS:
            continue
        others = NOT_THE_METHOD.get(relative.as_posix(), frozenset())
        if names(path.read_text(encoding="utf-8"), STEMS[method], others):
            parts = relative.parts
            inside = parts[0] == "methods" and len(parts) > 2
            found.add(f"methods/{parts[1]}/" if inside else relative.as_posix())
    return sorted(found)


@pytest.mark.parametrize("method", sorted(STEMS))
def test_a_method_is_named_only_where_it_may_be(method: str) -> None:
    found = set(files_naming(method))
    assert len(ALLOWED[method]) <= MOST
    assert found <= ALLOWED[method], sorted(found - ALLOWED[method])


@pytest.mark.parametrize("path", sorted(NOT_THE_METHOD))
def test_the_words_skipped_are_still_there(path: str) -> None:
    source = (PACKAGE / path).read_text(encoding="utf-8")
    literals = {t.string for t in tokenize.generate_tokens(io.StringIO(source).readline)}
    assert NOT_THE_METHOD[path] <= literals, sorted(NOT_THE_METHOD[path] - literals)


def test_the_count_reads_code_not_prose(tmp_path: Path) -> None:
    root = tmp_path / "haf_tui"
    (root / "methods" / "judge").mkdir(parents=True)
    (root / "judge").mkdir()
    files = {
        "prose.py": '"""The judge scores."""\n# judge\nx = 1\n',
        "name.py": "from x import JudgeView\n",
        "text.py": 'KIND = "judge"\n',
        "fstring.py": 'def f(n: int) -> str:\n    """Prose."""\n    return f"judge {n}"\n',
        "methods/judge/own.py": "judge = 1\n",
        "judge/__init__.py": "from haf_tui.methods.judge.core import judge\n",
    }
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    (root / "methods" / "rationales").mkdir()
    for n in (1, 2):  # (another method's package: one place)
        (root / "methods" / "rationales" / f"part{n}.py").write_text("JUDGE = 1\n")
    expected = ["fstring.py", "methods/rationales/", "name.py", "text.py"]
    assert files_naming("judge", root) == expected


def test_only_the_exact_words_of_others_are_skipped(tmp_path: Path) -> None:
    root = tmp_path / "haf_tui"
    (root / "datasets").mkdir(parents=True)
    (root / "methods" / "rationales").mkdir(parents=True)
    held = root / "datasets" / "preprocess.py"
    held.write_text('KEY = "rationales"\n', encoding="utf-8")  # (HateXplain's field)
    assert files_naming("rationales", root) == []
    held.write_text('KEY = "rationales"\nROWS = "rationales_rows"\n', encoding="utf-8")
    assert files_naming("rationales", root) == ["datasets/preprocess.py"]
    (root / "datasets" / "paper.py").write_text('KEY = "rationales"\n', encoding="utf-8")
    assert files_naming("rationales", root) == ["datasets/paper.py", "datasets/preprocess.py"]
