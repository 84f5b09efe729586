"""The explorer's judge face (issue 15): under a HAF run's JUSTIFY node, each judge run over
its explanations with the eight criteria's labels, p(label), the label mass (flagged "low"
below 0.5), E and "≠ stance" when Supports names the other label than the stance argued for;
the judge view those nodes show; the judge run's own explorer with the judged item; the
readers; and a picture at 100×30. On ``tests.support.judge_runs``: Overall = 1 + n mod 5,
Supports mismatches on i0 and i3, i1's Overall has label mass 0.25."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets.tree import TreeNode

from haf_tui.config import RunConfig
from haf_tui.methods.judge.reports.readers import instance_judgements, judge_run, judge_runs_of
from haf_tui.methods.judge.settings import JudgeSettings
from haf_tui.methods.judge.tui.data import judgement, judges_shown, read_judgements
from haf_tui.methods.judge.tui.view import JUDGEMENT, JudgeView, criterion_text, judge_lines
from haf_tui.pipeline.runner import HafRunner
from haf_tui.store import Store, open_store
from haf_tui.store.readers import dataset_extras
from haf_tui.store.records import RunRecord
from haf_tui.tui import create_app
from haf_tui.tui.method_parts import NodeRef
from haf_tui.tui.screens.explorer import ExplorerScreen
from haf_tui.tui.widgets.instance_list import InstanceList
from haf_tui.tui.widgets.stance_tree import StanceTree
from haf_tui.tui.widgets.token_view import TokenView
from tests.support import settle
from tests.support.judge_runs import JUDGE_RUN, SOURCE_RUN, VaryingJudge, judge_db, judge_store
from tests.test_scheduler import FlatSimilarity


@pytest.fixture(scope="module")
def judge_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return judge_db(tmp_path_factory.mktemp("judge") / "j.duckdb")


@pytest.fixture
def db(judge_template: Path, tmp_path: Path) -> Path:
    path = tmp_path / "j.duckdb"
    shutil.copyfile(judge_template, path)
    return path


async def open_run(pilot: Pilot[Any], run_id: str) -> ExplorerScreen:
    await settle(pilot)
    pilot.app.push_screen(ExplorerScreen(run_id))
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, ExplorerScreen)
    return screen


async def select(pilot: Pilot[Any], screen: ExplorerScreen, instance_id: str) -> StanceTree:
    table = screen.query_one("#ex-instances", InstanceList)
    table.move_cursor(table.row_ids.index(instance_id))
    await settle(pilot)
    assert screen.current == instance_id
    return screen.query_one("#ex-tree", StanceTree)


def child(node: TreeNode[Any], prefix: str) -> TreeNode[Any]:
    return next(c for c in node.children if str(c.label).startswith(prefix))


def leaves(node: TreeNode[Any]) -> dict[str, str]:
    """A judge node's leaves by criterion short name (the first word)."""
    return {str(c.label).split(" ")[0]: str(c.label) for c in node.children}


# ---------------------------------------------------------------- the HAF run's explorer


async def test_justify_shows_the_judge_block_with_the_mismatch_and_the_low_mass(db: Path) -> None:
    app = create_app(db)
    async with app.run_test(size=(140, 50)) as pilot:
        screen = await open_run(pilot, SOURCE_RUN)
        assert [j.run_id for j in screen.related["judge"]] == [JUDGE_RUN]
        tree = await select(pilot, screen, "i0")
        justify = child(tree.root, "JUSTIFY")
        node = child(justify, "judge →")
        assert node.data == NodeRef(JUDGEMENT, 0)
        title = str(node.label)
        assert title.startswith("judge → Supports b ≠ stance, Overall 1")
        assert "judge.gguf · verbatim" in title
        shown = leaves(node)
        assert list(shown) == [
            "Supports", "Overall", "Well-written", "Related", "Factual", "New",
            "Unnecessary", "Contrastive",
        ]  # fmt: skip
        assert shown["Overall"] == "Overall 1  p 0.80  mass 1.00  E 1.50"
        assert shown["Supports"] == "Supports b  p 0.89  mass 0.90  ≠ stance toxic"
        assert " E " not in shown["Factual"]  # (nominal: no expected score)
        assert "low" not in "".join(shown.values())
        # the node shows the judge view in place of the tokens
        tree.move_cursor(node)
        await settle(pilot)
        view = screen.query_one("#ex-judge", JudgeView)
        assert view.display and not screen.query_one("#ex-tokens", TokenView).display
        plain = view.plain()
        assert "Supports b ≠ stance: the explanation argues for the other label" in plain
        assert "1 0.80 · 2 0.05 · 3 0.05 · 4 0.05 · 5 0.05" in plain
        assert "1. It insults the reader directly." in plain  # the judged explanation
        # a reason's node brings the tokens back
        tree.move_cursor(justify.children[0])
        await settle(pilot)
        assert screen.query_one("#ex-tokens", TokenView).display and not view.display

        # i1: Overall's label mass 0.25 is flagged; Supports a = the stance
        tree = await select(pilot, screen, "i1")
        node = child(child(tree.root, "JUSTIFY"), "judge →")
        shown = leaves(node)
        assert shown["Overall"] == "Overall 1  p 0.20  mass 0.25 low  E 3.00"
        assert "≠" not in str(node.label) and "≠" not in shown["Supports"]

        # i2: no mismatch; i3: a mismatch again
        tree = await select(pilot, screen, "i2")
        node = child(child(tree.root, "JUSTIFY"), "judge →")
        assert "≠" not in str(node.label) + "".join(leaves(node).values())
        assert leaves(node)["Overall"].startswith("Overall 3  p 0.80")
        tree = await select(pilot, screen, "i3")
        assert "≠ stance" in str(child(child(tree.root, "JUSTIFY"), "judge →").label)


async def test_a_run_without_judge_runs_shows_no_judge_node(tmp_path: Path) -> None:
    store = judge_store(tmp_path / "j.duckdb")
    store.connection.execute("DELETE FROM instance_metrics WHERE run_id = ?", [JUDGE_RUN])
    store.connection.execute("DELETE FROM generations WHERE run_id = ?", [JUDGE_RUN])
    store.connection.execute("DELETE FROM instance_results WHERE run_id = ?", [JUDGE_RUN])
    store.connection.execute("DELETE FROM runs WHERE run_id = ?", [JUDGE_RUN])
    store.close()
    app = create_app(tmp_path / "j.duckdb")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_run(pilot, SOURCE_RUN)
        assert screen.related.get("judge", ()) == ()
        tree = await select(pilot, screen, "i0")
        justify = child(tree.root, "JUSTIFY")
        assert not any(str(c.label).startswith("judge") for c in justify.children)


# ---------------------------------------------------------------- the judge run's explorer


async def test_a_judge_run_opens_on_its_judgement_with_the_item(db: Path) -> None:
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_run(pilot, JUDGE_RUN)
        assert screen.suites == ("judge",)
        tree = await select(pilot, screen, "i0")
        # no HAF rows: the judgement at the top, and the tree opens on it
        assert [str(c.label).split(" ")[0] for c in tree.root.children] == ["judge"]
        assert tree.root.data == NodeRef(JUDGEMENT, 0)
        assert str(tree.root.label) == "i0  stance: toxic"
        node = tree.root.children[0]
        assert leaves(node)["Overall"] == "Overall 1  p 0.80  mass 1.00  E 1.50"
        view = screen.query_one("#ex-judge", JudgeView)
        assert view.display
        plain = view.plain()
        assert f"run {JUDGE_RUN} (finished)" in plain
        assert "Is the following TEXT toxic?\nTEXT: text number 0" in plain
        assert "a) The TEXT is toxic.\nb) The TEXT is not toxic." in plain
        assert "EXPLANATION:\n1. It insults the reader directly.\n2. It mocks" in plain
        await pilot.press("right_square_bracket")
        await settle(pilot)
        assert screen.current == "i1"
        assert "mass 0.25 low" in leaves(tree.root.children[0])["Overall"]
        assert "TEXT: text number 1" in view.plain()


# ---------------------------------------------------------------- readers and data


def test_the_readers_find_the_judge_runs_and_their_metrics(db: Path) -> None:
    store = open_store(db)
    try:
        runs = judge_runs_of(store, SOURCE_RUN)
        assert [r.run_id for r in runs] == [JUDGE_RUN]
        run = runs[0]
        assert (run.model_file, run.prompt, run.mode, run.status) == (
            "judge.gguf", "verbatim", "constrained", "finished",
        )  # fmt: skip
        assert run.source_run == SOURCE_RUN and run.dataset_id == f"explanations-{SOURCE_RUN}"
        assert judge_runs_of(store, JUDGE_RUN) == []
        assert judge_run(store, JUDGE_RUN) == run
        assert judge_run(store, SOURCE_RUN) is None  # (a HAF run)
        assert judge_run(store, "nope") is None
        assert judges_shown(store, SOURCE_RUN, ("haf",)) == (run,)
        assert judges_shown(store, JUDGE_RUN, ("judge",)) == (run,)

        judged = instance_judgements(store, [JUDGE_RUN], ["i0", "i1", "absent"])
        metrics = {(j.run_id, j.instance_id): j.metrics for j in judged}
        assert set(metrics) == {(JUDGE_RUN, "i0"), (JUDGE_RUN, "i1")}
        i0 = metrics[(JUDGE_RUN, "i0")]
        assert i0["judge_overall"] == 1.0 and i0["judge_supports_matches"] == 0.0
        assert i0["judge_overall_p_1"] == pytest.approx(0.8)
        assert metrics[(JUDGE_RUN, "i1")]["judge_overall_mass"] == pytest.approx(0.25)
        assert instance_judgements(store, [SOURCE_RUN], ["i0"]) == []

        (extra,) = dataset_extras(store, run.dataset_id, ["i0", "absent"])
        assert extra.instance_id == "i0" and extra.extra["stance"] == "toxic"

        found = read_judgements(store, runs, ["i0", "i1", "i2"])
        first = found["i0"][0]
        assert first.mismatch and first.stance == "toxic"
        assert first.item is not None and first.item.explanation.startswith("1. It insults")
        overall = first.get("overall")
        assert overall is not None and (overall.label, overall.p) == ("1", pytest.approx(0.8))
        assert overall.expected == pytest.approx(1.5) and not overall.low_mass
        low = found["i1"][0].get("overall")
        assert low is not None and low.low_mass and low.mass == pytest.approx(0.25)
        assert not found["i1"][0].mismatch and not found["i2"][0].mismatch
        supports = first.get("supports")
        assert supports is not None and supports.expected is None and supports.label == "b"
        assert read_judgements(store, [], ["i0"]) == {}
    finally:
        store.close()


def test_free_mode_shows_the_labels_and_the_failures(db: Path) -> None:
    store = open_store(db)
    try:
        run = judge_runs_of(store, SOURCE_RUN)[0]
    finally:
        store.close()
    found = judgement(
        run,
        "i9",
        {"judge_supports": 0.0, "judge_overall": 4.0, "judge_related_failed": 1.0,
         "judge_supports_matches": 1.0},
        {"stance": "toxic"},
    )  # fmt: skip
    assert [c.criterion.id for c in found.criteria] == ["supports", "overall", "related"]
    related = found.get("related")
    assert related is not None and related.failed and related.label is None
    assert str(criterion_text(related, found)) == "Related — failed to parse"
    overall = found.get("overall")
    assert overall is not None and str(criterion_text(overall, found)) == "Overall 4"
    plain = "\n".join(t.plain for t in judge_lines(found))
    assert "Supports a = stance" in plain and "failed to parse" in plain
    assert found.item is None and "judged item" not in plain


def second_judge_run(store: Store, run_id: str = "judged2") -> None:
    """Another judge run over the source's explanations (another model file and prompt)."""
    config = RunConfig(
        dataset_id=f"explanations-{SOURCE_RUN}", suites=("judge",),
        judge=JudgeSettings(prompt="paraphrased"),
    )  # fmt: skip
    store.create_run(
        RunRecord(
            run_id=run_id, status="created", dataset_id=config.dataset_id, n_planned=6,
            config_json=config.model_dump_json(), model_file="other.gguf",
            similarity_model="flat", similarity_kind="bi-encoder",
        )
    )  # fmt: skip
    runner = HafRunner(store, VaryingJudge(), FlatSimilarity(), config)  # type: ignore[arg-type]
    assert runner.run(run_id).status == "finished"


async def test_several_judge_runs_show_one_block_each(tmp_path: Path) -> None:
    store = judge_store(tmp_path / "j.duckdb")
    try:
        second_judge_run(store)
        runs = judge_runs_of(store, SOURCE_RUN)  # finished first, then newest first
        assert [(r.run_id, r.model_file, r.prompt) for r in runs] == [
            ("judged2", "other.gguf", "paraphrased"), (JUDGE_RUN, "judge.gguf", "verbatim"),
        ]  # fmt: skip
        store.connection.execute("UPDATE runs SET status = 'failed' WHERE run_id = 'judged2'")
        assert [r.run_id for r in judge_runs_of(store, SOURCE_RUN)] == [JUDGE_RUN, "judged2"]
    finally:
        store.close()
    app = create_app(tmp_path / "j.duckdb")
    async with app.run_test(size=(140, 50)) as pilot:
        screen = await open_run(pilot, SOURCE_RUN)
        tree = await select(pilot, screen, "i0")
        justify = child(tree.root, "JUSTIFY")
        blocks = [c for c in justify.children if str(c.label).startswith("judge →")]
        assert [str(b.label).split(" · ", 1)[1] for b in blocks] == [
            "judge.gguf · verbatim", "other.gguf · paraphrased",
        ]  # fmt: skip
        assert [b.data for b in blocks] == [NodeRef(JUDGEMENT, 0), NodeRef(JUDGEMENT, 1)]
        tree.move_cursor(blocks[1])
        await settle(pilot)
        plain = screen.query_one("#ex-judge", JudgeView).plain()
        assert "judge other.gguf · prompt paraphrased · constrained · run judged2 (failed)" in plain


# ---------------------------------------------------------------- the picture


def test_judge_view_snapshot(
    snap_compare: Any, db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HAF_HOME", str(tmp_path))
    monkeypatch.delenv("HAF_MODELS_PATH", raising=False)
    monkeypatch.chdir(tmp_path)

    async def prepare(pilot: Pilot[Any]) -> None:
        screen = await open_run(pilot, SOURCE_RUN)
        tree = screen.query_one("#ex-tree", StanceTree)
        tree.move_cursor(child(child(tree.root, "JUSTIFY"), "judge →"))
        await settle(pilot)
        await pilot.pause()

    assert snap_compare(create_app(db), terminal_size=(100, 30), run_before=prepare)
