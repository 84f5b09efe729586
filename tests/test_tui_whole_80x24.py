"""Whole at 80×24 and 200×50 (issue 43 §7): what the workbench says is said whole and true —
the runs count in the singular for one run, the wizard looking for models until it has listed
them (not "no GGUF models found" above a table that lists one), the demo's dataset saying what
it runs, the placeholders and help lines whole. Pilot; read from the screen as drawn."""

from __future__ import annotations

import re
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import duckdb
import pytest
from rich.cells import cell_len
from rich.style import Style
from textual.pilot import Pilot
from textual.widgets import Input, Select
from textual.widgets._tabbed_content import ContentTab

from benchmarks.benchdata import build_bench_db
from haf_tui.datasets.readers import FORMATS
from haf_tui.defaults import DEMO_MAX_TEXTS, DEMO_UNTIL_COMPLETE
from haf_tui.inference import model_catalog
from haf_tui.pipeline.runs import RunRequest
from haf_tui.reports import format_number
from haf_tui.tui import create_app
from haf_tui.tui.app import HafApp
from haf_tui.tui.live import LiveRun, LiveSession, RunJob
from haf_tui.tui.metrics_data import panel_specs
from haf_tui.tui.screens.confirm import ConfirmScreen
from haf_tui.tui.screens.explorer import ExplorerScreen
from haf_tui.tui.screens.metrics import MetricsScreen
from haf_tui.tui.screens.monitor import MonitorScreen
from haf_tui.tui.screens.text_editor import TextEditorScreen
from haf_tui.tui.screens.wizard import WizardScreen
from haf_tui.tui.widgets.dataset_picker import FILE_SOURCE
from haf_tui.tui.widgets.instance_list import InstanceList
from haf_tui.tui.widgets.model_picker import ModelPicker
from haf_tui.tui.widgets.run_review import EMBEDDED_FORMAT_NOTE
from haf_tui.tui.widgets.stance_tree import StanceTree
from tests.support import settle, static_text, until
from tests.test_tui_width import screen_text

SIZES = [(80, 24), (200, 50)]
SIZE_IDS = ["80x24", "200x50"]
DECIMAL = re.compile(r"\d+\.\d+")


@pytest.fixture(autouse=True)
def _private_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The wizard keeps its last answers under the HAF home: this test's own."""
    monkeypatch.setenv("HAF_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("HAF_MODELS_PATH", raising=False)


@pytest.fixture(scope="module")
def one_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("one-run") / "template.duckdb"
    build_bench_db(path, n_instances=4, n_runs=1, seed=7)
    return path


def whole_placeholder(field: Input) -> bool:
    """Whether the field's placeholder shows whole (the cursor takes a cell)."""
    return cell_len(field.placeholder) <= field.content_region.width - 1


# ---------------------------------------------------------------- the runs list


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
async def test_one_run_is_counted_in_the_singular(
    one_run: Path, tmp_path: Path, size: tuple[int, int]
) -> None:
    db = tmp_path / "haf.duckdb"
    shutil.copyfile(one_run, db)
    async with create_app(db).run_test(size=size) as pilot:
        await settle(pilot)
        lines = screen_text(pilot.app)
        assert any(line.strip() == "1 run in haf.duckdb" for line in lines), lines[:4]


# ---------------------------------------------------------------- the wizard


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
async def test_next_before_the_models_are_listed_says_it_is_looking(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: tuple[int, int]
) -> None:
    """ctrl+n while the model folders are still read: "looking for models…", then the list
    (it said "no GGUF models found" above a table listing the embedded model)."""
    listed = threading.Event()
    real = model_catalog.discover_models

    def slow_discovery(*args: object, **kwargs: object) -> list[model_catalog.ModelEntry]:
        listed.wait(60)  # (until the test has pressed ctrl+n)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr("haf_tui.tui.screens.wizard_reading.discover_models", slow_discovery)
    async with create_app(tmp_path / "haf.duckdb").run_test(size=size) as pilot:
        await pilot.pause()
        await pilot.press("n")
        await until(pilot, lambda: isinstance(pilot.app.screen, WizardScreen))
        wizard = pilot.app.screen
        assert isinstance(wizard, WizardScreen)
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert static_text(wizard, "#wz-error") == "looking for models…"
        assert not any("no GGUF" in line for line in screen_text(pilot.app))
        listed.set()
        await settle(pilot)
        assert wizard.query_one(ModelPicker).entries  # the embedded model, listed
        assert static_text(wizard, "#wz-error") == ""  # (what it was looking for is there)
        await pilot.press("ctrl+n")  # and the step goes on
        await settle(pilot)
        assert wizard.step == 1


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
async def test_the_demo_dataset_says_what_the_wizard_runs(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """The first dataset offered is the demo's: its texts in order until 3 go through, as make
    run (it offered the built-in sample's first 8 while make run took texts of its own)."""
    async with create_app(tmp_path / "haf.duckdb").run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        await pilot.press("ctrl+n")
        await settle(pilot)
        wizard = pilot.app.screen
        source = wizard.query_one("#ds-source", Select)
        shown = " ".join(line.strip() for line in screen_text(pilot.app))
        chosen = f"its {DEMO_MAX_TEXTS} texts in order, until {DEMO_UNTIL_COMPLETE} go through"
        assert chosen in shown, shown
        assert "make run" not in str(source._options[0][0])


def test_the_reviews_demo_note_says_what_make_run_runs() -> None:
    """The review's note before an embedded-model run: make run's texts and rule, which the
    wizard's demo runs too (it said "the first 8 texts of the built-in sample")."""
    note = " ".join(EMBEDDED_FORMAT_NOTE.split())
    assert "built-in sample" not in note
    assert f"until {DEMO_UNTIL_COMPLETE} went through every stage, at most {DEMO_MAX_TEXTS}" in note


async def open_file_choice(pilot: Pilot[Any]) -> WizardScreen:
    """The wizard's dataset step with "a local file" chosen."""
    await settle(pilot)
    await pilot.press("n")
    await settle(pilot)
    await pilot.press("ctrl+n")
    await settle(pilot)
    wizard = pilot.app.screen
    assert isinstance(wizard, WizardScreen)
    wizard.query_one("#ds-source", Select).value = FILE_SOURCE
    await settle(pilot)
    return wizard


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
async def test_the_file_fields_show_whole_placeholders_and_every_accepted_suffix(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """The file's placeholder omitted .json (and .tab, .ndjson); the label rule's was cut
    ("… or T (a score's threshold), or"): each placeholder whole, what they accept whole on a
    line of its own."""
    async with create_app(tmp_path / "haf.duckdb").run_test(size=size) as pilot:
        wizard = await open_file_choice(pilot)
        for selector in ("#ds-path", "#ds-label-rule"):
            field = wizard.query_one(selector, Input)
            assert field.placeholder and whole_placeholder(field), (selector, field.placeholder)
        wizard.query_one("#ds-label-rule", Input).focus()  # (the step scrolls to the field)
        wizard.query_one("#ds-label-help").scroll_visible(animate=False)
        await settle(pilot)
        shown = " ".join(" ".join(line.split()) for line in screen_text(pilot.app))
        for suffix in FORMATS:
            assert f"{suffix} " in shown or f"{suffix}," in shown, suffix
        assert "T (a score's threshold" in shown and "toxic=A,B" in shown


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
async def test_the_rescore_box_says_every_kind_of_model_whole(
    one_run: Path, tmp_path: Path, size: tuple[int, int]
) -> None:
    """The re-score box lost ``cross-encoder:NAME`` off its placeholder even at 200 columns."""
    db = tmp_path / "haf.duckdb"
    shutil.copyfile(one_run, db)
    async with create_app(db).run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        assert isinstance(pilot.app.screen, ConfirmScreen)
        await pilot.press("y")
        await settle(pilot)
        box = pilot.app.screen
        assert isinstance(box, TextEditorScreen)
        field = box.query_one(Input)
        assert whole_placeholder(field), field.placeholder
        lines = [line.replace("│", " ") for line in screen_text(pilot.app)]  # (the box's sides)
        shown = " ".join(" ".join(line.split()) for line in lines)
        assert "a Hugging Face id in the local cache, a folder, or cross-encoder:NAME" in shown


# ---------------------------------------------------------------- the metrics screen


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
async def test_every_metrics_tab_is_whole(
    one_run: Path, tmp_path: Path, size: tuple[int, int]
) -> None:
    """The tab bar ended at "7 Rati" at 80 columns: every tab whole, with its key's number
    (the short titles where the full ones do not fit)."""
    db = tmp_path / "haf.duckdb"
    shutil.copyfile(one_run, db)
    async with create_app(db).run_test(size=size) as pilot:
        await settle(pilot)
        pilot.app.push_screen(MetricsScreen())
        await settle(pilot)
        tabs = list(pilot.app.screen.query(ContentTab))
        specs = panel_specs()
        assert len(tabs) == len(specs)
        lines = screen_text(pilot.app)
        first = (f" 1 {specs[0].title} ", f" 1 {specs[0].tab} ")
        row = next(line for line in lines if any(label in line for label in first))
        for number, (tab, spec) in enumerate(zip(tabs, specs, strict=True), start=1):
            assert tab.label_text in (f"{number} {spec.title}", f"{number} {spec.tab}")
            assert f" {tab.label_text} " in f"{row} ", (tab.label_text, row)
            assert tab.region.right <= size[0]
        if size[0] >= 120:  # (room: the full titles)
            assert all(f" {spec.title} " in f"{row} " for spec in specs), row


# ---------------------------------------------------------------- the explorer

TWITTER = "11790550045539{}_twitter"
"""HateXplain's ids: 27 characters (``1179055004553900032_twitter``)."""


@pytest.fixture(scope="module")
def long_ids(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The synthetic store with HateXplain-long instance ids."""
    path = tmp_path_factory.mktemp("long-ids") / "template.duckdb"
    run_id = build_bench_db(path, n_instances=12, n_runs=1, seed=7)[0]
    with duckdb.connect(str(path)) as con:
        tables = con.execute(
            "SELECT DISTINCT table_name FROM information_schema.columns "
            "WHERE column_name = 'instance_id'"
        ).fetchall()
        for (table,) in tables:
            con.execute(
                f"UPDATE {table} SET instance_id = replace(?, '{{}}', substr(instance_id, 2))",
                [TWITTER],
            )
        con.execute(
            "UPDATE instance_results SET stopped = 'JUSTIFY: no stance' WHERE rowid % 3 = 0"
        )
    return path, run_id


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
async def test_the_explorer_list_shows_its_numbers_and_headings_whole(
    long_ids: tuple[Path, str], tmp_path: Path, size: tuple[int, int]
) -> None:
    """Long ids pushed SoS 0.623 to "0.6" at the list's edge, and the heading "stopped" to
    "stoppe": a number and a heading are drawn whole or not at all, the id is cut in its
    middle first (whole in the instance's header)."""
    db = tmp_path / "haf.duckdb"
    shutil.copyfile(long_ids[0], db)
    async with create_app(db).run_test(size=size) as pilot:
        await settle(pilot)
        pilot.app.push_screen(ExplorerScreen(long_ids[1]))
        await settle(pilot)
        await pilot.press("o")  # sorted by SoS: the sort's column, then by DiS: one more
        await pilot.press("o")
        await settle(pilot)
        listed = pilot.app.screen.query_one("#ex-instances", InstanceList)
        width = listed.size.width
        lines = [listed.render_line(y).text for y in range(min(listed.size.height, 8))]
        heading = lines[0].split()
        assert set(heading) <= {"id", "stance", "#r", "SoS", "DiS", "U!", "stopped"}, heading
        assert {"id", "SoS", "DiS"} <= set(heading), heading  # the numbers kept
        shown = round(listed.scroll_y)
        for line, row in zip(lines[1:], listed.rows[shown:], strict=False):
            for metric in ("sos", "dis"):
                assert f" {format_number(row[metric])} " in f"{line} ", (metric, line)
            instance_id = str(row["instance_id"])
            assert instance_id in line or (
                "…" in line and instance_id.endswith(line.split()[0].split("…")[1])
            ), line
            assert len(line) <= width
        if size[0] >= 120:
            assert "stopped" in heading and any("JUSTIFY: no" in line for line in lines)


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
async def test_every_number_of_the_tree_is_within_its_width(
    one_run: Path, tmp_path: Path, size: tuple[int, int]
) -> None:
    """The per-reason numbers ``(C=0.38, SoS term 0.36)`` and UPHOLD-STANCE's ``RS1=…`` were
    off-screen to the right at 80 columns: every number of every row is within the tree's
    width (the row drawn at the tree's width has each number the whole row has)."""
    db = tmp_path / "haf.duckdb"
    shutil.copyfile(one_run, db)
    async with create_app(db).run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
        tree = pilot.app.screen.query_one(StanceTree)
        width = tree.scrollable_content_region.width
        checked = 0
        for instance in range(4):
            for y in range(len(tree._tree_lines)):
                whole = tree._render_line(y, 0, 1000, Style()).text
                shown = tree._render_line(y, 0, width, Style()).text
                assert DECIMAL.findall(shown) == DECIMAL.findall(whole), (instance, whole, width)
                checked += len(DECIMAL.findall(whole))
            await pilot.press("right_square_bracket")
            await settle(pilot)
        assert checked > 20


# ---------------------------------------------------------------- the monitor


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
async def test_the_monitors_elapsed_time_is_whole(
    one_run: Path, tmp_path: Path, size: tuple[int, int]
) -> None:
    """The line of rates, estimate and elapsed time was one line high: at 80 columns its end,
    the elapsed time, was cut."""
    db = tmp_path / "haf.duckdb"
    shutil.copyfile(one_run, db)
    app = create_app(db)
    assert isinstance(app, HafApp)
    live = LiveRun(
        "SmolLM2-135M-Instruct · sample",
        run_id="20261129-092618-dca7",
        status="running",
        instances_done=3,
        instances_total=16,
        rates={"justify": 2.5, "individual": 11.25},
        estimate="2 min – 5 min",
        started=time.monotonic() - 65,
        seconds_before=3600.0,
    )
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        app.session = LiveSession([RunJob(live.label, RunRequest())], [live])
        app.push_screen(MonitorScreen())
        await settle(pilot)
        stats = pilot.app.screen.query_one("#mon-stats")
        shown = " ".join(stats.render_line(y).text.strip() for y in range(stats.size.height))
        whole = re.compile(r"elapsed 1 h \d\d min \(\d+ min \d\d s since the resume\)$")
        assert whole.search(shown), shown
