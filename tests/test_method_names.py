"""A method lives in its package (issue 35 §2): outside ``haf_tui/methods/<name>/`` at most two
places of ``haf_tui/`` name each of the built-in methods ``classify``, ``rationales`` and
``judge`` (:data:`ALLOWED`), besides those not moved yet (:data:`NOT_MOVED_YET`, to empty).

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

ALLOWED: dict[str, frozenset[str]] = {
    "classify": frozenset({"methods/loader.py", "methods/rationales/"}),
    "rationales": frozenset({"methods/loader.py", "store/migrations.py"}),
    "judge": frozenset({"methods/loader.py", "store/migrations.py"}),
}
"""Where a method may be named (at most :data:`MOST` places): the loader's list of built-ins;
the rationales method, which scores its texts with classify's label scores (its package is one
place: ``methods/rationales/``); the released core migrations, never edited, whose migration 8
moved each method's settings under ``settings.<name>``."""

NOT_MOVED_YET: dict[str, frozenset[str]] = {
    "classify": frozenset({"methods/haf/"}),
    "rationales": frozenset(
        {
            "config.py",
            "datasets/paper.py",
            "datasets/preprocess.py",
            "datasets/validation.py",
        }
    ),
    "judge": frozenset(
        {
            "config.py",
            "datasets/explanations.py",
            "pipeline/planning.py",
            "store/readers.py",
        }
    ),
}
"""What still names a method and is not moved yet (issue 35 §2, left for later): HAF's parser
(``methods/haf/core/parsing.py``) reads the verbs "classify", "classified" in a model's answer
(English, not the method); the legacy settings lifted by ``config.lift_legacy_settings``;
HateXplain's annotators' masks (``extra["rationales"]``, its own field) read with the paper's
datasets; the judge's dataset of a run's explanations (``run:ID``), the message of a run whose
suites ask nothing, and the judge runs' readers. Empty it as they move: then every method is named
in at most two places."""


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
    """The places of ``root`` outside ``methods/<method>/`` (and the re-exports) whose code
    names ``method``: ``.py`` files as paths relative to ``root``, another method's package as
    one place (``methods/<other>/``)."""
    own = root / "methods" / method
    found: set[str] = set()
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if path.is_relative_to(own) or relative.parts[0] in RE_EXPORTS:
            continue
        if names(path.read_text(encoding="utf-8"), STEMS[method]):
            parts = relative.parts
            inside = parts[0] == "methods" and len(parts) > 2
            found.add(f"methods/{parts[1]}/" if inside else relative.as_posix())
    return sorted(found)


@pytest.mark.parametrize("method", sorted(STEMS))
def test_a_method_is_named_only_where_it_may_be(method: str) -> None:
    found = set(files_naming(method))
    assert len(ALLOWED[method]) <= MOST
    assert found <= ALLOWED[method] | NOT_MOVED_YET[method], sorted(found - ALLOWED[method])
    # (a place that names it no more leaves the list: the list stays what is left)
    assert NOT_MOVED_YET[method] <= found, sorted(NOT_MOVED_YET[method] - found)


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
