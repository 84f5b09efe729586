"""Every reference to the project's documentation resolves (issue 34 §2): each ``docs/….md#anchor``
named in the README, ``docs/``, ``queries/*.sql``, ``ARCHITECTURE.md``, ``benchmarks/`` or the
package (help texts, ``?`` definitions, docstrings), and each relative Markdown link of the
Markdown files, names a file that exists and a heading of it (GitHub's anchors); no text outside
the tests cites the team's working specs (``HAF.md``, ``RATIONALES.md``, ``JUDGE.md``), which are
not in the repository; and every metric a built-in method declares is defined on its method page.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import pytest

from haf_tui.methods.registry import methods

ROOT = Path(__file__).resolve().parents[1]
METHOD_PAGES = ("haf", "classify", "rationales", "judge")

_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_ROOT_REF = re.compile(r"(?<![\w/.-])(docs/[\w./-]*?\.md)(?:#([\w-]+))?")
_MD_LINK = re.compile(r"\]\(([^()\s]+)\)")
_SPEC = re.compile(r"\b(?:HAF|RATIONALES|JUDGE)\.md\b")


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: its text without Markdown marks, lower case, every
    character but letters, digits, ``_``, ``-`` and spaces dropped, spaces turned to ``-``."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = text.replace("`", "").replace("*", "")
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    """Every heading anchor of a Markdown text (outside code fences), duplicates numbered as
    GitHub numbers them (``name``, ``name-1``, …)."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    fenced = False
    for line in markdown.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        match = None if fenced else _HEADING.match(line)
        if match is None:
            continue
        base = github_anchor(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def _check(target: Path, anchor: str | None, where: str, root: Path) -> str | None:
    """One problem line when ``target`` (and its ``anchor``) does not exist, else None."""
    if not target.is_file():
        shown = target.relative_to(root) if target.is_relative_to(root) else target
        return f"{where}: no page {shown}"
    if anchor and anchor not in anchors(target.read_text(encoding="utf-8")):
        return f"{where}: no heading #{anchor} in {target.relative_to(root)}"
    return None


def broken_references(root: Path, files: Iterable[Path]) -> list[str]:
    """Every reference of ``files`` that does not resolve: ``docs/…md#anchor`` (from ``root``)
    anywhere, and in Markdown files the relative links (from the file's folder)."""
    problems: list[str] = []
    for path in files:
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(root)
        for number, line in enumerate(text.splitlines(), 1):
            where = f"{rel}:{number}"
            for match in _ROOT_REF.finditer(line):
                problem = _check(root / match.group(1), match.group(2), where, root)
                if problem:
                    problems.append(problem)
            if path.suffix != ".md":
                continue
            for match in _MD_LINK.finditer(line):
                target = match.group(1)
                if re.match(r"[a-z]+:", target):  # https:, mailto:
                    continue
                file_part, _, anchor = target.partition("#")
                resolved = (path.parent / file_part).resolve() if file_part else path
                if not file_part or file_part.endswith(".md"):
                    problem = _check(resolved, anchor or None, where, root)
                else:  # an image or a source file: it exists
                    problem = None if resolved.exists() else f"{where}: {target} missing"
                if problem:
                    problems.append(problem)
    return list(dict.fromkeys(problems))  # a link that names docs/… is read twice


def project_files() -> list[Path]:
    """The files whose references are checked: README, ARCHITECTURE, docs, queries,
    benchmarks and the package."""
    files = [ROOT / "README.md", ROOT / "ARCHITECTURE.md"]
    files += sorted((ROOT / "docs").rglob("*.md"))
    files += sorted((ROOT / "queries").glob("*.sql"))
    files += sorted((ROOT / "haf_tui").rglob("*.py"))
    files += sorted((ROOT / "benchmarks").rglob("*.py"))
    files += sorted((ROOT / "benchmarks").rglob("*.toml"))
    return files


def test_every_documentation_reference_resolves() -> None:
    problems = broken_references(ROOT, project_files())
    assert not problems, "references to a missing page or heading:\n" + "\n".join(problems)


def test_the_references_that_matter_are_checked() -> None:
    """The places issue 34 names hold references the check reads (so it cannot pass by
    finding nothing): the README's links, the ``?`` help, the run settings' help, a query."""
    texts = {
        path: path.read_text(encoding="utf-8")
        for path in (
            ROOT / "README.md",
            ROOT / "haf_tui/tui/screens/help.py",
            ROOT / "haf_tui/methods/rationales/settings.py",
            ROOT / "queries/rationale_faithfulness.sql",
        )
    }
    for path, text in texts.items():
        assert _ROOT_REF.search(text), f"{path.relative_to(ROOT)} names no docs/ page"


def test_no_text_cites_the_working_specs() -> None:
    """HAF.md, RATIONALES.md and JUDGE.md are the team's notes beside the repository: a user
    cannot open them, so nothing they read names them."""
    cited = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in [*project_files(), ROOT / "Makefile", ROOT / "pyproject.toml"]
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if _SPEC.search(line)
    ]
    assert not cited, "cites a spec that is not in the repository:\n" + "\n".join(cited)


@pytest.mark.parametrize("name", METHOD_PAGES)
def test_every_declared_metric_is_defined_on_its_method_page(name: str) -> None:
    """Each MetricSpec of a built-in method is a row of its page's metric table: its stored
    name and its label in the same row, so a metric added to the code without a line in the
    documentation fails here."""
    page = (ROOT / "docs" / "methods" / f"{name}.md").read_text(encoding="utf-8")
    rows = [line for line in page.splitlines() if line.startswith("| `")]
    missing = [
        spec.name
        for spec in methods()[name].metrics
        if not any(f"| `{spec.name}` | {spec.label} |" in row for row in rows)
    ]
    assert not missing, f"docs/methods/{name}.md defines none of {missing}"
    for section in ("Departures from the", "What to cite"):
        assert section in page, f"docs/methods/{name}.md has no '{section}' section"


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        (
            "## 5. The annotators' rationales (ground truth)",
            "5-the-annotators-rationales-ground-truth",
        ),
        ("### 3.2 The prompts", "32-the-prompts"),
        ("## 4. Confidence of a span (TokenSAR)", "4-confidence-of-a-span-tokensar"),
        ("### 5.2 Krippendorff's alpha", "52-krippendorffs-alpha"),
        ("## `haf serve` and keys", "haf-serve-and-keys"),
        ("# Usage: the command line and the workbench", "usage-the-command-line-and-the-workbench"),
    ],
)
def test_anchors_are_githubs(heading: str, anchor: str) -> None:
    assert anchors(heading) == {anchor}


def test_a_broken_reference_is_found(tmp_path: Path) -> None:
    """The checker itself: a missing heading, a missing page and a bad relative link are each
    reported; a repeated heading's second anchor and a link to a heading resolve."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "page.md").write_text(
        "# Page\n\n## 1. Metrics\n\n## 1. Metrics\n\n```\n## not a heading\n```\n"
        "[up](../README.md#intro) [self](#1-metrics-1) [fenced](#not-a-heading)\n",
        encoding="utf-8",
    )
    (tmp_path / "README.md").write_text(
        "# Intro\n\nsee docs/page.md#1-metrics and docs/page.md#2-metrics, docs/gone.md;\n"
        "[link](docs/page.md#page) [bad](docs/page.md#nope) [img](docs/missing.png)\n",
        encoding="utf-8",
    )
    code = tmp_path / "mod.py"
    code.write_text('HELP = "see docs/page.md#1-metrics-2"\n', encoding="utf-8")
    problems = broken_references(tmp_path, [tmp_path / "README.md", docs / "page.md", code])
    joined = "\n".join(problems)
    assert "README.md:3: no heading #2-metrics" in joined
    assert "README.md:3: no page docs/gone.md" in joined
    assert "README.md:4: no heading #nope" in joined
    assert "README.md:4: docs/missing.png missing" in joined
    assert "docs/page.md:10: no heading #not-a-heading" in joined
    assert "mod.py:1: no heading #1-metrics-2" in joined
    assert len(problems) == 6, joined
