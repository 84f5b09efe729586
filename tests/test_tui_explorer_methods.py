"""The explorer drawn from the run's methods: a rationales run's list shows the columns its
method declares, and a method registered at runtime shows its column in the list and its node
in the tree, with no change to any face."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from haf_tui.config import RunConfig
from haf_tui.methods.declare import ListColumn, Method, MetricSpec
from haf_tui.methods.registry import methods
from haf_tui.store import open_store
from haf_tui.store.records import GenerationRecord, InstanceRecord, InstanceResult, RunRecord
from haf_tui.tui import create_app
from haf_tui.tui.filters import ListSchema, parse_ranges
from haf_tui.tui.screens.explorer import ExplorerScreen
from haf_tui.tui.screens.help import help_markdown
from haf_tui.tui.widgets.instance_list import InstanceList
from haf_tui.tui.widgets.legend import Legend
from haf_tui.tui.widgets.stance_tree import StanceTree
from tests.support import settle
from tests.support.rationale_runs import RUN_ID, rationale_db
from tests.support.toy_suite import TOY_STAGE, ToySuite


async def open_run(pilot: Pilot[Any], run_id: str) -> ExplorerScreen:
    await settle(pilot)
    pilot.app.push_screen(ExplorerScreen(run_id))
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, ExplorerScreen)
    return screen


def list_lines(screen: ExplorerScreen) -> list[str]:
    """The list's header and rows as text."""
    table = screen.query_one("#ex-instances", InstanceList)
    width = 200
    return [
        table._draw(row, table.rich_style, table.rich_style, width).text.rstrip()
        for row in [None, *table.rows]
    ]


def test_the_default_list_is_hafs() -> None:
    """A HAF run's list: stance, #r and SoS shown; the sort and the ranges as before."""
    schema = ListSchema.of([methods()["haf"]])
    assert [c.label for c in schema.shown] == ["stance", "#r", "SoS"]
    assert schema.sort_keys == (
        "position", "sos", "dis", "uii", "uei", "rs", "rn", "n_reasons", "confidence",
    )  # fmt: skip
    assert schema.legend() == "SoS↑ DiS↑ UII↓ UEI↓ RS↑ RN↑ 0–1 (↑ higher is better)"


@pytest.fixture
def rationale_run(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Path:
    template = tmp_path_factory.getbasetemp() / "explorer-methods-rationales.duckdb"
    if not template.exists():
        assert rationale_db(template) == RUN_ID
    path = tmp_path / "r.duckdb"
    shutil.copyfile(template, path)
    return path


async def test_a_rationales_run_lists_its_declared_columns(rationale_run: Path) -> None:
    async with create_app(rationale_run).run_test(size=(160, 40)) as pilot:
        screen = await open_run(pilot, RUN_ID)
        lines = list_lines(screen)
        header = lines[0].split()
        assert header[:3] == ["id", "p(ŷ)", "agree"] and "stance" not in header
        values = [line.split()[1] for line in lines[1:]]
        assert values and all(v != "—" for v in values)
        assert all(0 <= float(v) <= 1 for v in values)
        for row, value in zip(screen.instance_list.rows, values, strict=True):
            assert abs(row["rationale_p_predicted"] - float(value)) < 5e-4
        # the sort and the ranges are its own
        assert screen.filter.schema.sort_keys == (
            "position", "rationale_p_predicted", "rationale_alignment_f1",
        )  # fmt: skip
        await pilot.press("o")
        await settle(pilot)
        assert screen.filter.sort_key == "rationale_p_predicted"
        shown = [row["rationale_p_predicted"] for row in screen.instance_list.rows]
        assert shown == sorted(shown, reverse=True)
        for name in ("agree", "align"):  # (its label, and the one it had)
            (only,) = parse_ranges(f"{name}>=0", screen.filter.schema)
            assert only.metric == "rationale_alignment_f1"
        legend = str(screen.query_one("#ex-legend", Legend).render())
        assert legend.startswith("p(ŷ) agree↑ 0–1") and "SoS" not in legend
        assert "°: p on a label mass < 0.5" in legend  # (the list's mark, defined)
        help_text = help_markdown(screen)  # ? defines its metrics
        assert "## This run's metrics" in help_text and "- agree occ (0–1" in help_text


TOY = Method(
    name="toy",
    title="Toy",
    description="a toy method registered by a test",
    suite=ToySuite(),
    metrics=(MetricSpec("toy_score", "toy", "a toy score"),),
    list_columns=(ListColumn("toy_score", "toy"),),
)


def store_toy_run(path: Path) -> str:
    """A finished run of the toy suite: two instances, each with a generation and its
    ``toy_score``."""
    records = [
        InstanceRecord(instance_id=f"t{i}", position=i, text=f"toy text {i}") for i in range(2)
    ]
    config = RunConfig(dataset_id="toys", suites=("toy",))
    with open_store(path) as store:
        store.save_dataset("toys", "toys", "tests", records)
        store.create_run(
            RunRecord(
                run_id="toy-run",
                status="finished",
                dataset_id="toys",
                n_planned=2,
                config_json=config.model_dump_json(),
                model_file="toy.gguf",
                similarity_model="flat",
                similarity_kind="bi-encoder",
            )
        )
        for i, record in enumerate(records):
            store.save_generation(
                GenerationRecord(
                    run_id="toy-run",
                    instance_id=record.instance_id,
                    stage=TOY_STAGE,
                    sub_index=-1,
                    test=None,
                    seed=0,
                    prompt_text="p",
                    prompt_tokens=1,
                    output_text="o",
                    finish_reason="stop",
                    decision="toy",
                    decision_source=None,
                    decision_sentence=None,
                    decision_start=None,
                    decision_end=None,
                    decision_confidence=1.0,
                    seconds=0.0,
                )
            )
            store.save_instance_result(
                InstanceResult(
                    run_id="toy-run",
                    instance_id=record.instance_id,
                    stance=None,
                    n_reasons=0,
                    instance_metrics=[("toy_score", 0.5 + i / 4, 1)],
                )
            )
    return "toy-run"


async def test_a_method_registered_at_runtime_has_its_column_and_node(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(methods(), "toy", TOY)
    path = tmp_path / "toy.duckdb"
    run_id = store_toy_run(path)
    async with create_app(path).run_test(size=(160, 40)) as pilot:
        screen = await open_run(pilot, run_id)
        lines = list_lines(screen)
        assert lines[0].split()[:2] == ["id", "toy"]
        assert [line.split()[:2] for line in lines[1:]] == [["t0", "0.500"], ["t1", "0.750"]]
        assert screen.filter.schema.sort_keys == ("position", "toy_score")
        assert str(screen.query_one("#ex-legend", Legend).render()).startswith("toy↑ 0–1")
        tree = screen.query_one("#ex-tree", StanceTree)
        assert screen.current == "t0"
        (node,) = tree.root.children
        assert str(node.label) == "Toy"
        assert [str(leaf.label) for leaf in node.children] == ["toy ↑ 0.500"]
        assert "- toy (0–1, higher is better): a toy score" in help_markdown(screen)
