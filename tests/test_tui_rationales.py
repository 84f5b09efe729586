"""The explorer's rationales (issue 14): the "rationales →" node of a run with the rationales
suite and the view it shows (per word: the prompted rationale, the occlusion heat, the
annotators' shares; out-of-text words; faithfulness with the texts scored, plausibility,
complexity), on a rationales run stored through the real runner with a scripted model
(``tests.support.rationale_runs``); its readers; and its pictures at 80×24 and 200×60."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import duckdb
import pytest
from rich.text import Text
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widgets.tree import TreeNode

from benchmarks.benchdata import build_bench_db
from haf_tui.methods.rationales.suite.records import RationaleRecord
from haf_tui.methods.rationales.tui import NODE as RATIONALES
from haf_tui.methods.rationales.tui import instance_rationales
from haf_tui.methods.rationales.tui import read as read_of
from haf_tui.methods.rationales.tui.data import RationaleData, rationale_data
from haf_tui.methods.rationales.tui.view import RationaleView, rationale_lines
from haf_tui.methods.registry import method_named
from haf_tui.store import open_store
from haf_tui.store.instance_readers import (
    instance_metric_values,
    run_instance,
)
from haf_tui.tui import create_app
from haf_tui.tui.method_parts import NodeRef
from haf_tui.tui.screens.explorer import ExplorerScreen
from haf_tui.tui.widgets.instance_list import InstanceList
from haf_tui.tui.widgets.stance_tree import StanceTree
from haf_tui.tui.widgets.text_layout import Palette
from haf_tui.tui.widgets.token_view import TokenView
from tests.support import settle
from tests.support.rationale_runs import RUN_ID, rationale_db, rationale_instances

SIZES = {"80x24": (80, 24), "200x60": (200, 60)}
THEMES = {"dark": "textual-dark", "light": "textual-light"}


@pytest.fixture(scope="module")
def rationale_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("rationales") / "r.duckdb"
    assert rationale_db(path) == RUN_ID
    return path


@pytest.fixture
def db(rationale_template: Path, tmp_path: Path) -> Path:
    path = tmp_path / "r.duckdb"
    shutil.copyfile(rationale_template, path)
    return path


def stored(db: Path, instance_id: str, source: str) -> dict[str, Any]:
    with duckdb.connect(str(db), read_only=True) as con:
        cursor = con.execute(
            "SELECT * FROM rationales WHERE run_id = ? AND instance_id = ? AND source = ? "
            "ORDER BY seed LIMIT 1",
            [RUN_ID, instance_id, source],
        )
        columns = [d[0] for d in cursor.description]
        row = cursor.fetchone()
    assert row is not None
    return dict(zip(columns, row, strict=True))


async def open_run(pilot: Pilot[Any], run_id: str = RUN_ID) -> ExplorerScreen:
    await settle(pilot)
    pilot.app.push_screen(ExplorerScreen(run_id))
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, ExplorerScreen)
    return screen


def child(node: TreeNode[Any], prefix: str) -> TreeNode[Any] | None:
    return next((c for c in node.children if str(c.label).startswith(prefix)), None)


def view_of(screen: ExplorerScreen) -> RationaleView:
    return screen.query_one("#ex-rationales", RationaleView)


# ---------------------------------------------------------------- the explorer


async def test_a_rationales_run_opens_on_its_rationales(db: Path) -> None:
    app = create_app(db)
    async with app.run_test(size=(160, 50)) as pilot:
        screen = await open_run(pilot)
        assert screen.suites == ("rationales",)
        assert screen.current == "h0"
        tree = screen.query_one("#ex-tree", StanceTree)
        node = child(tree.root, "rationales →")
        assert node is not None and node.data == NodeRef(RATIONALES)
        # ŷ and p(toxic) from the stored label spellings of the full text (mass 0.95: no °)
        p_full = stored(db, "h0", "prompt_predicted")["p_full"]
        assert str(node.label) == f"rationales → toxic (p(toxic) {p_full:.2f})"
        # a run without the HAF suite shows no 'not run' HAF rows
        assert [str(c.label).split(" ")[0] for c in tree.root.children] == ["rationales"]
        assert [str(c.label) for c in node.children] == ["asked why toxic: the answer"]
        # the tree opens on the rationales: the view shows in place of the tokens
        view = view_of(screen)
        assert view.display and not screen.query_one("#ex-tokens", TokenView).display
        assert screen.has_class("-short-tree")  # (no stance tree: the view takes the height)
        shown = view.plain()
        for token in rationale_instances()[0].extra["post_tokens"]:
            assert token in shown
        assert "out of text: worthless, liberals" in shown
        assert "named idiot | illegal | worthless | liberals" in shown
        prompted = stored(db, "h0", "prompt_predicted")
        line = next(x for x in shown.splitlines() if x.startswith("prompted   "))
        assert line.split()[1:8] == [
            str(prompted["size"]),
            f"{prompted['p_full']:.2f}",
            f"{prompted['p_without']:.2f}",
            f"{prompted['p_only']:.2f}",
            f"{prompted['comp']:.2f}",
            f"{prompted['suff']:.2f}",
            str(prompted["flip"]),
        ]
        # the texts actually scored, without R and only R
        assert f"prompted   −R {prompted['text_without'][:40]}" in shown  # (it may wrap)
        assert f"\n            R {prompted['text_only']}\n" in shown
        # plausibility (the prompt with the gold label shown) and RANDOM's mean ± sd
        gold_prompt = stored(db, "h0", "prompt_gold")
        assert f"{gold_prompt['token_f1']:.2f}" in shown
        assert "random ×4" in shown and "± sd" in shown
        assert "complexity" in shown and "3 annotators" in shown


async def test_the_answer_node_shows_its_tokens_and_the_view_comes_back(db: Path) -> None:
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_run(pilot)
        tree = screen.query_one("#ex-tree", StanceTree)
        node = child(tree.root, "rationales →")
        assert node is not None
        tree.move_cursor(node.children[0])
        await settle(pilot)
        tokens = screen.query_one("#ex-tokens", TokenView)
        assert tokens.display and not view_of(screen).display
        assert tokens.output_text() == "idiot | illegal | worthless | liberals"
        tree.move_cursor(node)
        await settle(pilot)
        assert view_of(screen).display and not tokens.display
        # the next instance opens on its rationales too (read once, then cached)
        await pilot.press("right_square_bracket")
        await settle(pilot)
        assert screen.current == "h1" and ("rationales", "h1") in screen.pane_data
        shown = view_of(screen).plain()
        assert shown.startswith("h1") and "worthless" in shown
        assert "out of text: illegal, liberals" in shown


async def test_an_instance_without_gold_says_why(db: Path) -> None:
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_run(pilot)
        table = screen.query_one("#ex-instances", InstanceList)
        table.move_cursor(table.row_ids.index("h2"))
        await settle(pilot)
        shown = view_of(screen).plain()
        assert "gold: no annotator rationales" in shown
        assert "asked why non-toxic: named" in shown
        assert "plausibility" not in shown  # no gold, no plausibility
        assert "R (empty)" in shown  # nothing named in the text: only R is the empty text


async def test_a_haf_run_has_no_rationales_node(tmp_path: Path) -> None:
    path = tmp_path / "haf.duckdb"
    (run_id,) = build_bench_db(path, n_instances=6, n_runs=1, seed=7)
    app = create_app(path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_run(pilot, run_id)
        tree = screen.query_one("#ex-tree", StanceTree)
        assert tree.root.children
        assert child(tree.root, "rationales") is None
        assert child(tree.root, "JUSTIFY") is not None
        assert not view_of(screen).display
        assert screen.query_one("#ex-tokens", TokenView).display
        assert not screen.has_class("-short-tree")


async def test_the_tree_of_a_rationales_run_without_answers_says_not_run() -> None:
    class TreeApp(App[None]):
        def compose(self) -> ComposeResult:
            yield StanceTree(id="tree")

    app = TreeApp()
    async with app.run_test(size=(100, 20)) as pilot:
        tree = app.query_one(StanceTree)
        tree.show("s01", None, [], ("rationales",))
        await pilot.pause()
        assert [str(c.label) for c in tree.root.children] == ["rationales — not run"]
        tree.show("s01", None, [], ("haf", "rationales"))
        await pilot.pause()
        labels = [str(c.label) for c in tree.root.children]
        assert labels[0] == "JUSTIFY — not run" and labels[-1] == "rationales — not run"


async def test_the_view_follows_the_theme(db: Path) -> None:
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        pilot.app.theme = "textual-dark"
        screen = await open_run(pilot)
        view = view_of(screen)

        def backgrounds() -> set[str]:
            return {
                str(segment.style.bgcolor.name)
                for strip in view.lines
                for segment in strip
                if segment.style is not None and segment.style.bgcolor is not None
            }

        dark = backgrounds()
        pilot.app.theme = "textual-light"
        await settle(pilot)
        light = backgrounds()
        assert dark and light and dark != light


# ---------------------------------------------------------------- the readers


def test_the_readers_give_an_instances_rationales(db: Path) -> None:
    with open_store(db, read_only=True) as store:
        rows = instance_rationales(store, RUN_ID, "h0")
        assert [(r.source, r.seed) for r in rows] == sorted((r.source, r.seed) for r in rows)
        assert {r.source for r in rows} == {
            "everything", "human", "occlusion", "prompt_gold", "prompt_predicted", "random",
        }  # fmt: skip
        assert [r.seed for r in rows if r.source == "random"] == [0, 1, 2, 3]
        occlusion = next(r for r in rows if r.source == "occlusion")
        assert isinstance(occlusion.mask, list) and isinstance(occlusion.scores, list)
        assert len(occlusion.scores) == len(occlusion.mask) == 17
        assert instance_rationales(store, RUN_ID, "nope") == []
        instance = run_instance(store, RUN_ID, "h0")
        assert instance is not None and instance.extra["post_tokens"][0] == "those"
        assert run_instance(store, RUN_ID, "nope") is None
        metrics = instance_metric_values(store, RUN_ID, "h0", "rationale_")
        assert metrics["rationale_toxic"] == 1.0 and "rationale_label_mass" in metrics
        data = read_of(store, RUN_ID, "h0", method_named("rationales"))
        assert data.gold is not None and len(data.tokens) == 17
        assert data.predicted == "toxic"
        assert read_of(store, RUN_ID, "nope", method_named("rationales")).rows == ()


# ---------------------------------------------------------------- the lines, pure


def record(source: str, mask: list[int], **values: Any) -> RationaleRecord:
    return RationaleRecord("run", "i", source, mask=mask, size=sum(mask), **values)


def test_the_gold_prompt_shows_when_it_differs() -> None:
    extra = {"post_tokens": ["you", "are", "kind"], "rationales": [[0, 1, 1], [0, 0, 1]]}
    rows = [
        record("prompt_gold", [1, 0, 0], label_shown="toxic", words=["you"], out_of_text=[]),
        record(
            "prompt_predicted",
            [0, 0, 1],
            label_shown="non-toxic",
            words=["kind", "nice"],
            out_of_text=["nice"],
            p_full=0.8,
            p_without=0.3,
            comp=0.5,
            flip=1,
            text_without="you are",
        ),
        record("occlusion", [0, 0, 1], k=1, scores=[-0.5, 0.0, 1.5]),
    ]
    data = rationale_data("i", "you are kind", extra, rows, {"rationale_toxic": 0.0})
    text = "\n".join(t.plain for t in rationale_lines(data, 60))
    assert data.gold_prompt_differs
    assert "# word P G     a_i O annot" in text
    assert "G: asked why toxic (gold)" in text
    assert "asked why non-toxic: named kind | nice" in text
    assert "asked why toxic: named you" in text
    assert "out of text: nice" in text
    assert "-0.50" in text and "+1.50" in text
    assert "prompted g" in text or "plausibility" not in text
    # one line per word: 'you' is in the gold-label prompt only, 'kind' in the other
    words = {line.split()[1]: line.split()[2:4] for line in text.splitlines()[3:6]}
    assert words == {"you": ["·", "●"], "are": ["·", "·"], "kind": ["●", "·"]}


def test_the_heat_is_warm_above_zero_and_cool_at_or_below() -> None:
    palette = Palette.of({"background": "#000000", "error": "#ff0000", "primary": "#0000ff"})

    def rgb(score: float) -> tuple[int, int, int]:
        colour = palette.heat(score, 2.0).bgcolor
        assert colour is not None
        triplet = colour.get_truecolor()
        return triplet.red, triplet.green, triplet.blue

    hot, cold, zero = rgb(2.0), rgb(-2.0), rgb(0.0)
    assert hot[0] > hot[2] and cold[2] > cold[0] and zero[2] > zero[0]
    assert rgb(1.0)[0] < hot[0] and zero[2] < cold[2]  # stronger the larger |a_i|


def test_every_attribution_draws_its_heat_line_and_its_skewness() -> None:
    """The heat lines: one per attribution source with scores (input×gradient, the last, as
    much as the first), and the skewness line names each source's own value."""
    extra = {"post_tokens": ["you", "are", "kind"], "rationales": [[0, 1, 1], [0, 0, 1]]}
    skews = {"occlusion": 0.11, "attention": -0.22, "saliency": 0.33, "input_x_gradient": 1.44}
    rows = [record("prompt_predicted", [0, 0, 1], label_shown="non-toxic", words=["kind"])]
    for k, source in enumerate(skews):
        scores = [0.1 * (k + 1), -0.2, 0.5 + k]
        rows.append(record(source, [0, 0, 1], k=1, scores=scores))
    metrics = {f"rationale_skew_{source}": value for source, value in skews.items()}
    metrics |= {"rationale_alignment_f1": 0.5, "rationale_alignment_f1_input_x_gradient": 0.25}
    data = rationale_data("i", "you are kind", extra, rows, metrics)
    lines = [t.plain for t in rationale_lines(data, 100)]
    for label in ("occlusion:", "attention:", "saliency:", "input×grad:"):
        assert sum(line.startswith(label) for line in lines) == 1, label
    (skew,) = [line for line in lines if line.startswith("skewness:")]
    assert skew == ("skewness: occlusion 0.11 · attention -0.22 · saliency 0.33 · input×grad 1.44")
    # each source's own agreement with the prompted rationale in the summary line
    assert "prompted vs occlusion F1 0.50 · input×gradient 0.25" in lines[0]


def test_p_toxic_on_a_low_label_mass_is_marked_where_it_is_shown() -> None:
    """The node's p(toxic) carries ° when the label spellings' mass is below 0.5, the view's
    summary says the mass with ``low``; a mass of 0.5 or more carries neither."""
    from haf_tui.methods.classify.core.labels import SPELLINGS
    from haf_tui.methods.declare import NodeInput
    from haf_tui.methods.rationales.suite.plan import CLASSIFY
    from haf_tui.methods.rationales.views import rationales_node

    def node(probabilities: list[float]) -> str:
        generations = [
            {"stage": CLASSIFY, "sub_index": k, "decision_confidence": p, "decision": None}
            for k, p in enumerate(probabilities)
        ]
        assert len(generations) == len(SPELLINGS)
        return rationales_node(NodeInput("i", "a text", {}, generations))[0]

    assert node([0.1, 0.05, 0.1, 0.05]) == "rationales → toxic (p(toxic) 0.50°)"  # mass 0.3
    assert node([0.4, 0.2, 0.2, 0.1]) == "rationales → toxic (p(toxic) 0.67)"  # mass 0.9
    extra = {"post_tokens": ["you", "are", "kind"]}
    for mass, said in ((0.3, "label mass 0.30 low"), (0.5, "label mass 0.50 ·")):
        data = rationale_data("i", "you are kind", extra, [record("occlusion", [0, 0, 1])], {
            "rationale_label_mass": mass, "rationale_toxic": 1.0,
        })  # fmt: skip
        assert said in rationale_lines(data, 120)[0].plain, mass


def test_without_rows_the_view_says_so() -> None:
    lines = rationale_lines(RationaleData("x", ("a", "b")), 80)
    assert [t.plain for t in lines] == ["x: no rationales stored (the suite did not finish it)"]


def test_the_lines_fit_the_width() -> None:
    extra = rationale_instances()[0].extra
    text = " ".join(extra["post_tokens"])
    rows = [record("everything", [1] * 17, text_without="", p_full=0.9)]
    data = rationale_data("h0", text, extra, rows)
    for width in (46, 80, 139):
        for piece in rationale_lines(data, width):
            if piece.no_wrap:
                assert Text(piece.plain).cell_len <= width, piece.plain


# ---------------------------------------------------------------- pictures


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("size", SIZES)
def test_rationale_view_snapshot(
    snap_compare: Any,
    db: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    size: str,
    theme: str,
) -> None:
    monkeypatch.setenv("HAF_HOME", str(tmp_path))
    monkeypatch.delenv("HAF_MODELS_PATH", raising=False)
    monkeypatch.chdir(tmp_path)

    async def prepare(pilot: Pilot[Any]) -> None:
        pilot.app.theme = THEMES[theme]
        await open_run(pilot)
        await pilot.pause()

    assert snap_compare(create_app(db), terminal_size=SIZES[size], run_before=prepare)
