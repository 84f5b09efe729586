"""A researcher's own method installed beside haf-tui (issue 26's proof): the toy method of
``tests/support/plugin_toy`` is copied into a folder of its own with its entry point in a
``.dist-info``, and, with no change to any file of haf-tui, it runs through ``haf run
--suites toy`` on the real embedded model, shows its settings in ``haf run --help``, its report
in ``haf report``, and (in the workbench) its settings in the wizard, its panel and legend in
the metrics screen, its node in the explorer and its metrics in the comparison view."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from support.plugin import toy_installed
from textual.app import App, ComposeResult
from textual.widgets import Input, SelectionList, Static, TabbedContent, TabPane

from haf_tui.cli import main
from haf_tui.config import DecodingSettings, RunConfig
from haf_tui.datasets import builtin_sample
from haf_tui.inference.backend import Backend
from haf_tui.inference.base import GeneratedToken, Generation, TokenCallback
from haf_tui.messages import ChatMessage
from haf_tui.methods.registry import methods
from haf_tui.pipeline.runner import HafRunner
from haf_tui.pipeline.runs import choice_by_name
from haf_tui.store import open_store
from haf_tui.store.records import RunRecord
from haf_tui.tui import create_app
from haf_tui.tui.screens.compare import CompareScreen
from haf_tui.tui.screens.explorer import ExplorerScreen
from haf_tui.tui.screens.help import help_markdown
from haf_tui.tui.widgets.legend import Legend
from haf_tui.tui.widgets.panel_view import PanelView
from haf_tui.tui.widgets.run_settings import RunSettingsForm
from haf_tui.tui.widgets.stance_tree import StanceTree
from tests.support import settle
from tests.test_scheduler import FlatSimilarity
from tests.test_tui_explorer_methods import list_lines
from tests.test_tui_metrics import open_metrics, shown


@pytest.fixture
def toy(tmp_path: Path) -> Iterator[Path]:
    """The toy method installed through its entry point for the test."""
    with toy_installed(tmp_path / "site") as site:
        yield site


def test_the_entry_point_method_is_found_and_goes_away(toy: Path) -> None:
    found = methods()
    assert list(found)[-1] == "toy"
    assert found["toy"].suite.stages == ("toy_word",)


def test_its_settings_are_haf_run_flags(toy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "the Toy suite (--suites …,toy)" in out
    assert "--toy-word TEXT the word a toxic text's answer should hold (default: toxic)" in out
    assert "--toy-max-new-tokens N cap of the one-word answer (1–32) (default: 6)" in out


def test_a_bad_setting_is_one_line(
    toy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "haf.duckdb"
    args = ["--db", str(db), "run", "--suites", "toy", "--toy-max-new-tokens", "99"]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "max_new_tokens" in err and "32" in err
    assert "--max-new-tokens" not in err  # (the toy's own setting, not the decoding option)


@pytest.mark.real_model
@pytest.mark.real_similarity
def test_it_runs_reports_and_is_not_run_twice_through_haf_run(
    toy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "haf.duckdb"
    run = ["--db", str(db), "run", "--dataset", "sample", "--limit", "2", "--suites", "toy"]
    assert main([*run, "--toy-word", "harmless"]) == 0
    capsys.readouterr()
    with open_store(db, read_only=True) as store:
        (stored,) = store.list_runs()
        config = RunConfig.model_validate_json(store.get_run(stored["run_id"]).config_json)
        _, rows = store.query(
            "SELECT instance_id, metric, value FROM instance_metrics ORDER BY ALL"
        )
        _, answers = store.query("SELECT stage, decision, output_text FROM generations")
    assert config.suites == ("toy",)
    assert config.settings["toy"] == {"word": "harmless", "max_new_tokens": 6}
    assert {metric for _, metric, _ in rows} == {"toy_match", "toy_logprob"}
    assert len(answers) == 2 and {stage for stage, _, _ in answers} == {"toy_word"}
    for _, decision, text in answers:  # the suite's record: the word found or not, as stored
        assert decision == ("match" if "harmless" in text.lower() else "other")
    matches = [value for _, metric, value in rows if metric == "toy_match"]
    assert all(value in (0.0, 1.0) for value in matches)
    assert main(["--db", str(db), "report", "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)  # its summary report
    assert shown[0]["instances"] == 2
    assert shown[0]["match rate"] == pytest.approx(sum(matches) / 2)
    # a finished run is not run twice (resuming a stopped one: tests/test_suites.py)
    assert main(["--db", str(db), "run", "--resume", stored["run_id"]]) == 2
    assert "already finished" in capsys.readouterr().err


class _FormApp(App[None]):
    def compose(self) -> ComposeResult:
        yield RunSettingsForm(id="settings")


async def test_its_settings_are_wizard_fields(toy: Path) -> None:
    async with _FormApp().run_test(size=(100, 60)) as pilot:
        form = pilot.app.query_one(RunSettingsForm)
        assert form.query_one("#set-toy-word", Input).value == "toxic"
        form.query_one("#set-toy-word", Input).value = "hateful"
        form.query_one("#set-suites", SelectionList).select("toy")
        await pilot.pause()
        config = form.build(None)
    assert "toy" in config.suites and config.settings["toy"]["word"] == "hateful"


@pytest.mark.real_model
@pytest.mark.real_similarity
async def test_its_panel_legend_and_metrics_show_in_the_workbench(
    toy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "haf.duckdb"
    run = ["--db", str(db), "run", "--dataset", "sample", "--limit", "2", "--suites", "toy"]
    for word in ("harmless", "toxic"):
        assert main([*run, "--toy-word", word]) == 0
    capsys.readouterr()
    app = create_app(db)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_metrics(pilot)
        tabs = screen.query_one("#mx-tabs", TabbedContent)
        toy_tab = next(pane for pane in tabs.query(TabPane) if pane.id == "toy")
        label = str(tabs.get_tab("toy").label)
        assert label.endswith(" Toy")
        await pilot.press(label.split()[0])
        await settle(pilot)
        assert tabs.active == toy_tab.id
        assert "Toy — share of answers holding the word" in shown(screen, "toy")
        legend = str(screen.query_one("#mx-legend", Legend).render())
        assert "match↑" in legend and "SoS" not in legend
        assert "**match** (0–1, higher is better)" in help_markdown(screen)
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        assert isinstance(app.screen, CompareScreen)
        stats = str(app.screen.query_one("#cmp-stats-view", PanelView).text())
        assert "match" in stats and "logprob" in stats
        with open_store(db, read_only=True) as store:
            first = sorted(str(run["run_id"]) for run in store.list_runs())[0]
            _, values = store.query(
                "SELECT instance_id, value FROM instance_metrics WHERE run_id = ? "
                "AND metric = 'toy_match' ORDER BY instance_id",
                [first],
            )
        app.push_screen(ExplorerScreen(first))
        await settle(pilot)
        explorer = app.screen
        assert isinstance(explorer, ExplorerScreen)
        (header, *_) = list_lines(explorer)
        assert header.split()[:2] == ["id", "match"]  # its list column
        (node,) = explorer.query_one("#ex-tree", StanceTree).root.children
        assert str(node.label) == "Toy"
        leaves = [str(leaf.label) for leaf in node.children]
        assert leaves[0] == f"match ↑ {values[0][1]:.3f}" and leaves[1].startswith("logprob")
        assert leaves[2] == "toy answer →"  # its own view's leaf (below: no real model)


# ------------------------------------------- its own table, explorer view and dataset format


class _OneWord(Backend):
    """Answers every prompt with one word."""

    name = "one-word"

    def generate(
        self,
        messages: Sequence[ChatMessage],
        settings: DecodingSettings,
        *,
        on_token: TokenCallback | None = None,
    ) -> Generation:
        token = GeneratedToken(1, b"Harmless", "Harmless", 0, 0, -0.25)
        return Generation(messages[-1].content, 20, "Harmless", [token], "stop", 0.01)


def _toy_run(db: Path) -> str:
    """A finished toy run of :class:`_OneWord` over the built-in sample's first two texts."""
    config = RunConfig(dataset_id="two", suites=("toy",))
    records = builtin_sample().instances[:2]
    with open_store(db) as store:
        store.save_dataset("two", "two texts", "tests", records)
        store.create_run(
            RunRecord(
                run_id="toy-run",
                status="created",
                dataset_id="two",
                n_planned=2,
                config_json=config.model_dump_json(),
                model_file="one-word.gguf",
                similarity_model="flat",
                similarity_kind="bi-encoder",
            )
        )
        assert HafRunner(store, _OneWord(), FlatSimilarity(), config).run("toy-run").status == (
            "finished"
        )
    return "toy-run"


def test_its_table_is_created_and_filled(toy: Path, tmp_path: Path) -> None:
    db = tmp_path / "haf.duckdb"
    run_id = _toy_run(db)
    with open_store(db, read_only=True) as store:
        _, rows = store.query("SELECT * FROM toy_answers ORDER BY instance_id")
        _, applied = store.query("SELECT method, version FROM method_migrations")
    ids = [i.instance_id for i in builtin_sample().instances[:2]]
    assert rows == [(run_id, i, "Harmless", 8) for i in sorted(ids)]
    assert ("toy", 1) in applied


async def test_the_explorer_shows_its_own_view(toy: Path, tmp_path: Path) -> None:
    db = tmp_path / "haf.duckdb"
    run_id = _toy_run(db)
    app = create_app(db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        app.push_screen(ExplorerScreen(run_id))
        await settle(pilot)
        explorer = app.screen
        assert isinstance(explorer, ExplorerScreen)
        (node,) = explorer.query_one("#ex-tree", StanceTree).root.children
        assert str(node.label) == "Toy"
        assert [str(leaf.label) for leaf in node.children][-1] == "toy answer →"
        pane = explorer.query_one("#ex-toy", Static)  # the tree opens on its pane
        assert pane.display and not explorer.query_one("#ex-tokens").display
        assert str(pane.render()) == "toy answer: 'Harmless' (8 characters)"


def test_a_dataset_in_its_format_loads(
    toy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "haf.duckdb"
    lines = tmp_path / "texts.txt"
    lines.write_text("toxic\tyou are vile\nnon-toxic\thave a nice day\n")
    args = ["--db", str(db), "datasets", "import"]
    assert main([*args, "toy-lines", "--file", str(lines)]) == 0  # by its name
    shaped = tmp_path / "more.toy"
    shaped.write_text("toxic\tgo away\n")
    assert main([*args, str(shaped)]) == 0  # by its file's shape
    capsys.readouterr()
    with open_store(db) as store:
        _, stored = store.query("SELECT text, label FROM instances ORDER BY ALL")
        assert choice_by_name("toy-lines", str(lines), store).format == "toy-lines"
    assert stored == [
        ("go away", "toxic"),
        ("have a nice day", "non-toxic"),
        ("you are vile", "toxic"),
    ]
    broken = tmp_path / "broken.toy"
    broken.write_text("no tab here\n")
    assert main([*args, str(broken)]) == 2  # its own error: one line
    assert (
        capsys.readouterr().err.strip() == "error: broken.toy line 1: no tab between label and text"
    )
