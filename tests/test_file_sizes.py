"""No module a reader must scroll, in haf_tui, its tests or its benchmarks: a ``.py`` file
over 400 lines says why at its top (a line of its first docstring lines, or a comment on its
first line, starting "Over 400 lines because ...")."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHECKED = (ROOT / "haf_tui", ROOT / "tests", ROOT / "benchmarks")
MAX_LINES = 400
HEAD_LINES = 5
REASON = re.compile(r'^(?:"""|\'\'\'|#)?\s*Over \d+ lines because \S', re.IGNORECASE)


def offenders(root: Path, limit: int = MAX_LINES) -> list[str]:
    """Every file over ``limit`` lines whose first lines give no reason, with its count."""
    found = []
    for path in sorted(root.rglob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        if len(lines) > limit and not any(
            REASON.match(line.strip()) for line in lines[:HEAD_LINES]
        ):
            found.append(f"{path.relative_to(root.parent)}: {len(lines)} lines")
    return found


def test_no_file_over_400_lines_without_a_reason_at_its_top() -> None:
    found = [line for root in CHECKED for line in offenders(root)]
    assert not found, (
        f"over {MAX_LINES} lines, with no 'Over {MAX_LINES} lines because ...' line in the "
        f"first {HEAD_LINES} lines (split it where it has two jobs, or say why not):\n"
        + "\n".join(found)
    )


def test_the_check_counts_lines_and_reads_the_reason(tmp_path: Path) -> None:
    root = tmp_path / "pkg"
    root.mkdir()
    (root / "short.py").write_text("x = 1\n" * 400)
    (root / "long.py").write_text('"""A module."""\n' + "x = 1\n" * 400)
    (root / "said.py").write_text(
        '"""A module.\n\nOver 400 lines because its table is one piece.\n"""\n' + "x = 1\n" * 400
    )
    (root / "late.py").write_text(
        '"""A module.\n\n\n\n\nOver 400 lines because it says so too late.\n"""\n' + "x = 1\n" * 400
    )
    assert offenders(root) == ["pkg/late.py: 407 lines", "pkg/long.py: 401 lines"]
