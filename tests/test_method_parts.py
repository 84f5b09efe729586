"""A method's own workbench part and dataset formats that cannot be had: one line naming the
method and what it declared, the rest of the workbench and the other formats unharmed."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from haf_tui.datasets.formats import DatasetFormat
from haf_tui.datasets.model import DatasetError
from haf_tui.methods.registry import MethodLoadError, method_named
from haf_tui.tui.method_parts import explorer_parts


def test_a_workbench_part_that_cannot_be_had_is_one_line_and_the_others_stay() -> None:
    rationales, judge = method_named("rationales"), method_named("judge")
    missing = dataclasses.replace(rationales, workbench="no_such_package.tui:EXPLORER")
    wrong = dataclasses.replace(judge, workbench="haf_tui.methods.judge.tui:JUDGEMENT")
    parts, problems = explorer_parts([missing, wrong, rationales])
    assert list(parts) == ["rationales"]
    assert len(problems) == 2 and all("\n" not in line for line in problems)
    assert problems[0].startswith(
        "method 'rationales': its workbench part no_such_package.tui:EXPLORER could not be loaded"
    )
    assert problems[1] == (
        "method 'judge': its workbench part haf_tui.methods.judge.tui:JUDGEMENT is a str, "
        "not an ExplorerPart"
    )


def test_a_format_that_raises_is_one_dataset_error_line(tmp_path: Path) -> None:
    def broken(paths: object, **_: object) -> object:
        raise KeyError("column")

    fmt = DatasetFormat("odd", "a format with a bug", broken)  # type: ignore[arg-type]
    target = tmp_path / "x.odd"
    target.write_text("x")
    with pytest.raises(DatasetError) as raised:
        fmt.read([target])
    assert str(raised.value) == f"dataset format 'odd' could not read {target}: KeyError: 'column'"
    with pytest.raises(DatasetError, match="odd is read from its file"):
        fmt.read([])
    assert fmt.named("O-D_D") and not fmt.named("odds")


def test_a_declared_format_that_is_no_format_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from haf_tui.methods import declared_parts, registry

    judge = method_named("judge")
    odd = dataclasses.replace(
        judge, dataset_formats=("haf_tui.methods.judge.datasets.acorn:ACORN_NAME",)
    )
    monkeypatch.setitem(registry.methods(), "judge", odd)
    with pytest.raises(MethodLoadError, match=r"^method 'judge': its dataset format .* is a str"):
        declared_parts.dataset_formats()
