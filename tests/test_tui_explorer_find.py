"""The explorer finds what a researcher looks for: ranges over every metric of the run's methods
and the gold label (a classify run: ``label=toxic mass<0.5``), a search that reads the model's
answers, a ranges box that keeps the focus while it cannot be read, a detail pane that shows
nothing when nothing passes (even when the list moved twice before the screen caught up), and
a low label mass marked ``low`` in the classify node."""

from __future__ import annotations

import math
import shutil
from collections.abc import Sequence
from pathlib import Path

import duckdb
import pytest
from textual.widgets import Input, Static

from benchmarks.benchdata import build_bench_db
from haf_tui.config import DecodingSettings, RunConfig
from haf_tui.inference.base import Generation, TokenCallback
from haf_tui.messages import ChatMessage
from haf_tui.methods.classify.core.labels import SPELLINGS
from haf_tui.methods.classify.views import classify_node
from haf_tui.methods.declare import NodeInput
from haf_tui.methods.registry import methods
from haf_tui.pipeline.runner import HafRunner
from haf_tui.store import open_store
from haf_tui.store.records import InstanceRecord, RunRecord
from haf_tui.tui import create_app
from haf_tui.tui.filters import FilterError, ListSchema, Match, Range, parse_ranges
from haf_tui.tui.instance_reader import AnswersRead
from haf_tui.tui.widgets.instance_list import InstanceList
from haf_tui.tui.widgets.legend import Legend
from haf_tui.tui.widgets.stance_tree import StanceTree
from tests.support.rationale_runs import ScriptedRationaleModel, _token, scored_text
from tests.test_scheduler import FlatSimilarity
from tests.test_tui_explorer import open_run, press, shown, shown_line, typed, wait
from tests.test_tui_explorer_methods import list_lines

CLASSIFY_RUN = "classify-run"
TEXTS = {  # id → (text, gold label); "worthless" makes the model's label mass low
    "c0": ("you idiot", "toxic"),
    "c1": ("a worthless idiot", "toxic"),
    "c2": ("thanks for the timetable", "non-toxic"),
    "c3": ("worthless weather today", "non-toxic"),
    "c4": ("nice bus", "toxic"),
}


class LowMassModel(ScriptedRationaleModel):
    """The scripted model, but a text with "worthless" gets a label mass of 0.2."""

    def score(
        self,
        messages: Sequence[ChatMessage],
        forced: str,
        settings: DecodingSettings,
        *,
        on_token: TokenCallback | None = None,
        reply_prefix: str = "",
    ) -> Generation:
        text = scored_text(messages)
        p = 0.9 if "idiot" in text.split() else 0.2
        mass = 0.2 if "worthless" in text.split() else 0.96  # (each spelling: half its label's)
        label = dict(SPELLINGS)[forced]
        logprob = math.log((p if label == "toxic" else 1 - p) * 0.5 * mass)
        return Generation(
            messages[-1].content, 30, forced, [_token(forced, logprob)], "forced", 0.0
        )


def classify_db(path: Path) -> None:
    """A finished classify run of :class:`LowMassModel` over :data:`TEXTS`, by the runner."""
    records = [
        InstanceRecord(instance_id=key, position=n, text=text, label=label)
        for n, (key, (text, label)) in enumerate(TEXTS.items())
    ]
    config = RunConfig(dataset_id="mini", suites=("classify",))
    with open_store(path) as store:
        store.save_dataset("mini", "mini", "tests", records)
        store.create_run(
            RunRecord(
                run_id=CLASSIFY_RUN,
                status="created",
                dataset_id="mini",
                n_planned=len(records),
                config_json=config.model_dump_json(),
                model_file="scripted.gguf",
                similarity_model="flat",
                similarity_kind="bi-encoder",
            )
        )
        runner = HafRunner(store, LowMassModel(), FlatSimilarity(), config)
        assert runner.run(CLASSIFY_RUN).status == "finished"


@pytest.fixture
def classify_run(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Path:
    template = tmp_path_factory.getbasetemp() / "explorer-find-classify.duckdb"
    if not template.exists():
        classify_db(template)
    path = tmp_path / "c.duckdb"
    shutil.copyfile(template, path)
    return path


def stored_metric(db: Path, metric: str) -> dict[str, float]:
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute(
            "SELECT instance_id, value FROM instance_metrics WHERE run_id = ? AND metric = ?",
            [CLASSIFY_RUN, metric],
        ).fetchall()
    return {str(key): float(value) for key, value in rows}


# ---------------------------------------------------------------- ranges over every column


def test_ranges_name_every_metric_of_the_run_and_the_gold_label() -> None:
    classify = ListSchema.of([methods()["classify"]])
    assert parse_ranges("label=toxic mass<0.5 p(toxic)>=0.5", classify) == (
        Match("label", "=", "toxic"),
        Range("label_mass", "<", 0.5),
        Range("classify_p_toxic", ">=", 0.5),
    )
    (term,) = parse_ranges("classify_label_mass<0.5", classify)  # the full name too
    assert term.column == "classify_label_mass" and str(term) == "label_mass<0.5"
    assert parse_ranges("p(tox)>0.5", classify) == (Range("classify_p_toxic", ">", 0.5),)
    assert "classify_label_mass" in classify.row_metrics()  # the rows carry it to filter by
    (gold,) = parse_ranges("LABEL != Non-Toxic", classify)
    assert gold.test({"label": "toxic"}) and not gold.test({"label": "non-toxic"})
    assert not gold.test({"label": None})  # no label never matches
    judge = ListSchema.of([methods()["judge"]])
    (mass,) = parse_ranges("overall_mass<0.5", judge)
    assert mass.column == "judge_overall_mass"
    assert mass.test({"judge_overall_mass": 0.3}) and not mass.test({"judge_overall_mass": 0.7})
    haf = ListSchema.of([methods()["haf"]])
    assert parse_ranges("stance=maybe sos>0.5", haf) == (
        Match("stance", "=", "maybe"),
        Range("sos", ">", 0.5),
    )
    for bad, message in (
        ("label>toxic", "compare a word with = or !="),
        ("sos=high", "compare label, stance with a word"),
        ("mass<0.5", "unknown metric 'mass'"),  # not a metric of a HAF run
    ):
        with pytest.raises(FilterError, match=message):
            parse_ranges(bad, haf)


def test_a_rationales_run_filters_by_its_metrics_short_names() -> None:
    """``rationale_label_mass`` is ``label_mass`` in a range (the method is "rationales", its
    metrics' prefix "rationale"), every other rationales metric likewise, and the list's
    own column by its label (``agree``, once ``align``)."""
    rationales = ListSchema.of([methods()["rationales"]])
    for short, stored in (
        ("label_mass", "rationale_label_mass"),
        ("skew_input_x_gradient", "rationale_skew_input_x_gradient"),
        ("annotator_iou", "rationale_annotator_iou"),
        ("alignment_f1_saliency", "rationale_alignment_f1_saliency"),
    ):
        (term,) = parse_ranges(f"{short}<0.5", rationales)
        assert isinstance(term, Range) and term.column == stored, short
        assert term.test({stored: 0.25}) and not term.test({stored: 0.75})
        assert stored in rationales.row_metrics()  # the rows carry it to filter by
    for name in ("agree", "align"):
        (term,) = parse_ranges(f"{name}>=0.5", rationales)
        assert isinstance(term, Range) and term.column == "rationale_alignment_f1", name


async def test_a_classify_run_filters_by_gold_label_and_label_mass(classify_run: Path) -> None:
    mass = stored_metric(classify_run, "classify_label_mass")
    p_toxic = stored_metric(classify_run, "classify_p_toxic")
    low = [key for key in TEXTS if mass[key] < 0.5]
    assert low == ["c1", "c3"]  # the texts with "worthless"
    async with create_app(classify_run).run_test(size=(120, 40)) as pilot:
        screen = await open_run(pilot, CLASSIFY_RUN)
        # p(tox) carries ° where the label mass it rests on is below 0.5, the legend says so
        header, *lines = list_lines(screen)
        assert header.split()[:2] == ["id", "p(tox)"]
        cells = {line.split()[0]: line.split()[1] for line in lines}
        assert cells == {
            key: f"{p_toxic[key]:.3f}" + ("°" if mass[key] < 0.5 else "") for key in TEXTS
        }
        legend = str(screen.query_one("#ex-legend", Legend).render())
        assert "°: p on a label mass < 0.5" in legend and "low: mass < 0.5" in legend
        await press(pilot, "f")
        await typed(pilot, "label=toxic")
        assert shown(screen) == ["c0", "c1", "c4"] and "label=toxic" in shown_line(screen)
        await typed(pilot, " mass<0.5")
        assert shown(screen) == ["c1"]
        assert screen.query_one("#ex-filter-error", Static).has_class("-empty")
        ranges = screen.query_one("#ex-ranges", Input)
        ranges.value = "p(toxic)>0.5"
        await wait(pilot)
        assert shown(screen) == [key for key in TEXTS if p_toxic[key] > 0.5] == ["c0", "c1"]
        ranges.value = "label!=toxic mass>=0.5"
        await wait(pilot)
        assert shown(screen) == ["c2"]


# ---------------------------------------------------------------- the search reads the answers

SynthDb = tuple[Path, str]
ANSWER_WORD = "zebracorn"


@pytest.fixture(scope="module")
def answer_db(tmp_path_factory: pytest.TempPathFactory) -> SynthDb:
    """A synthetic run of 30 instances; one model answer (of instance 7) says a word no input
    text says."""
    path = tmp_path_factory.mktemp("answers") / "haf.duckdb"
    (run_id,) = build_bench_db(path, n_instances=30, n_runs=1, seed=11)
    with duckdb.connect(str(path)) as con:
        (instance_id,) = con.execute(
            "SELECT instance_id FROM instances ORDER BY position LIMIT 1 OFFSET 7"
        ).fetchone() or ("",)
        con.execute(
            "UPDATE generations SET output_text = output_text || ' a ZebraCorn reason' "
            "WHERE run_id = ? AND instance_id = ? AND stage = 'internal'",
            [run_id, instance_id],
        )
        assert not con.execute(
            "SELECT count(*) FROM instances WHERE lower(text) LIKE ?", [f"%{ANSWER_WORD}%"]
        ).fetchone()[0]  # type: ignore[index]
    return path, str(instance_id)


async def test_the_search_finds_a_word_of_the_models_answers(answer_db: SynthDb) -> None:
    db, answered = answer_db
    with duckdb.connect(str(db), read_only=True) as con:
        (run_id,) = con.execute("SELECT run_id FROM runs").fetchone() or ("",)
    async with create_app(db).run_test(size=(120, 40)) as pilot:
        screen = await open_run(pilot, str(run_id))
        await press(pilot, "slash")
        await typed(pilot, ANSWER_WORD)
        assert shown(screen) == [answered]
        assert screen.current == answered
        screen.query_one("#ex-search", Input).value = answered  # the ids and texts still
        await wait(pilot)
        assert shown(screen) == [answered]
        # answers that come after the search was typed (a large run): the list follows them
        screen.query_one("#ex-search", Input).value = "quokka"
        await wait(pilot)
        assert shown(screen) == []
        other = screen.instances[3]["instance_id"]
        screen.post_message(AnswersRead(screen.run_id, {other: "a Quokka answer"}))
        await wait(pilot)
        assert shown(screen) == [other] and screen.current == other
        screen.post_message(AnswersRead("another-run", {answered: "quokka"}))
        await wait(pilot)
        assert shown(screen) == [other]  # (another run's answers are not this one's)


# ---------------------------------------------------------------- the ranges box keeps the focus


async def test_enter_on_unreadable_ranges_keeps_the_focus_in_the_box(answer_db: SynthDb) -> None:
    db, _ = answer_db
    with duckdb.connect(str(db), read_only=True) as con:
        (run_id,) = con.execute("SELECT run_id FROM runs").fetchone() or ("",)
    async with create_app(db).run_test(size=(120, 40)) as pilot:
        screen = await open_run(pilot, str(run_id))
        error = screen.query_one("#ex-filter-error", Static)
        box = screen.query_one("#ex-ranges", Input)
        await press(pilot, "f")
        await typed(pilot, "sos>")
        await press(pilot, "enter")
        assert screen.focused is box and "cannot read" in str(error.render())
        bookmarked = [row for row in screen.instances if row.get("bookmarked")]
        await typed(pilot, "xb")  # the correction's keys are typed, not commands
        assert box.value == "sos>xb" and screen.focused is box
        assert not screen.filter.contradictions_only
        assert [row for row in screen.instances if row.get("bookmarked")] == bookmarked
        box.value = "sos>0.2"
        await wait(pilot)
        assert error.has_class("-empty")
        await press(pilot, "enter")  # readable: enter goes to the list
        assert isinstance(screen.focused, InstanceList)
        await press(pilot, "slash")
        await typed(pilot, "sos>")  # the search box reads anything: enter leaves it
        await press(pilot, "enter")
        assert isinstance(screen.focused, InstanceList)


# ---------------------------------------------------------------- nothing passes: nothing shown


async def test_a_filter_that_leaves_none_shows_no_instance_however_fast(
    answer_db: SynthDb,
) -> None:
    """The list moves to a first match, then to none, before the screen hears of the first
    move (fast typing, a paste): the detail pane still shows no instance."""
    db, answered = answer_db
    with duckdb.connect(str(db), read_only=True) as con:
        (run_id,) = con.execute("SELECT run_id FROM runs").fetchone() or ("",)
    async with create_app(db).run_test(size=(120, 40)) as pilot:
        screen = await open_run(pilot, str(run_id))
        assert screen.current != answered
        search = screen.query_one("#ex-search", Input)
        search.value = answered  # one match (the cursor goes there) …
        search.value = answered + "-and-no-more"  # … then none, in the same moment
        await wait(pilot)
        await pilot.pause(0.5)
        await wait(pilot)
        assert shown(screen) == [] and screen.current is None
        assert "no instance passes" in str(screen.query_one("#ex-input", Static).render())
        assert str(screen.query_one(StanceTree).root.label) == "(no instance)"


# ---------------------------------------------------------------- a low label mass is marked


def spelled(probabilities: Sequence[float]) -> NodeInput:
    generations = [
        {"stage": "classify", "sub_index": k, "decision_confidence": p}
        for k, p in enumerate(probabilities)
    ]
    return NodeInput("i", "text", {}, generations)


def test_the_classify_node_marks_a_low_label_mass() -> None:
    (title, *_) = classify_node(spelled([0.2, 0.05, 0.1, 0.1]))  # mass 0.45
    assert title.endswith("label mass 0.45 low)")
    (title, *_) = classify_node(spelled([0.25, 0.05, 0.15, 0.05]))  # mass exactly 0.5: not low
    assert title.endswith("label mass 0.50)") and "low" not in title


async def test_the_classify_node_of_a_low_mass_instance_says_low(classify_run: Path) -> None:
    async with create_app(classify_run).run_test(size=(120, 40)) as pilot:
        screen = await open_run(pilot, CLASSIFY_RUN)
        tree = screen.query_one(StanceTree)
        labels: dict[str, str] = {}
        for key in TEXTS:
            screen.instance_list.move_cursor(screen.instance_list.row_ids.index(key))
            await wait(pilot)
            labels[key] = str(tree.root.children[0].label)
        assert [key for key, label in labels.items() if label.endswith(" low)")] == ["c1", "c3"]
        assert "low" in str(screen.query_one("#ex-legend", Legend).render())
