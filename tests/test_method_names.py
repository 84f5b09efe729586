"""A method lives in its package (issue 35 §2): outside ``haf_tui/methods/<name>/`` at most two
files of ``haf_tui/`` name each of the built-in methods ``classify``, ``rationales`` and
``judge`` (the registry's list of built-ins; rationales' documented use of classify's label
scores).

What "names" means: the code, read with :mod:`tokenize`, holds an identifier or a string
literal (f-strings included) containing the method's stem (``classif``, ``rationale``,
``judg``; case ignored). Comments and docstrings are prose, not code, and are not counted: a
face may say in words that a method exists, it may not reach for one.
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


def code_words(source: str) -> list[str]:
    """The identifiers and string literals of ``source``'s code (no comments, no docstrings)."""
    skipped = docstring_lines(source)
    words = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.start[0] in skipped:
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


def names(source: str, stem: str) -> bool:
    """Whether ``source``'s code names the method whose words share ``stem``."""
    pattern = re.compile(re.escape(stem), re.IGNORECASE)
    return any(pattern.search(word) for word in code_words(source))


def files_naming(method: str, root: Path = PACKAGE) -> list[str]:
    """The ``.py`` files of ``root`` outside ``methods/<method>/`` (and the re-exports) whose
    code names ``method``, as paths relative to ``root``."""
    own = root / "methods" / method
    found = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if path.is_relative_to(own) or relative.parts[0] in RE_EXPORTS:
            continue
        if names(path.read_text(encoding="utf-8"), STEMS[method]):
            found.append(relative.as_posix())
    return found


@pytest.mark.parametrize("method", sorted(STEMS))
def test_a_method_is_named_in_at_most_two_files_outside_its_package(method: str) -> None:
    found = files_naming(method)
    assert len(found) <= MOST, f"{method} is named outside its package in {found}"


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
    assert files_naming("judge", root) == ["fstring.py", "name.py", "text.py"]
