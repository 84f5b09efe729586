"""Issue 33 §1 in the wizard's column step: the label column's rule is shown, a free-text
column is refused as the label in one line, a rule that cannot be guessed is asked for and
goes with the dataset chosen."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from textual.widgets import Select

from haf_tui.tui import create_app
from haf_tui.tui.widgets.dataset_picker import DatasetPicker
from tests.support import settle, static_text
from tests.test_tui_wizard import open_wizard_on_file, set_input

TEXTS = [
    "You are a worthless idiot and everyone here would be better off without you.",
    "What a lovely afternoon we had at the park with the children today.",
    "Nobody asked for your garbage opinion, so keep it to yourself from now on.",
]


@pytest.fixture(autouse=True)
def _private_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The wizard keeps its last answers under the HAF home: this test's own."""
    monkeypatch.setenv("HAF_HOME", str(tmp_path / "home"))


async def test_the_column_step_shows_the_label_rule_and_refuses_free_text(
    tmp_path: Path,
) -> None:
    path = tmp_path / "posts.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["text", "label", "forum", "grade"])
        for k, text in enumerate(TEXTS):
            writer.writerow([text, "10"[k % 2], f"{text} (from a blog)", "AB"[k % 2]])
    app = create_app(tmp_path / "haf.duckdb")
    async with app.run_test(size=(120, 40)) as pilot:
        wizard = await open_wizard_on_file(pilot, path)
        picker = wizard.query_one(DatasetPicker)
        assert static_text(wizard, "#ds-label-line") == "label: 1 → toxic, 0 → non-toxic (guessed)"
        assert picker.choice().label_column == "label"
        wizard.query_one("#ds-col-label", Select).value = "forum"
        await pilot.pause()
        line = static_text(wizard, "#ds-label-line")
        assert line.startswith("label: column 'forum' is not a label: free text"), line
        await pilot.press("ctrl+n")
        assert str(wizard.query_one("#wz-body").current) == "dataset"
        assert "column 'forum' is not a label" in static_text(wizard, "#wz-error")
        wizard.query_one("#ds-col-label", Select).value = "grade"
        await pilot.pause()
        assert "--label-map toxic=A,B" in static_text(wizard, "#ds-label-line")
        await set_input(pilot, "#ds-label-rule", "toxic=B")
        await settle(pilot)
        assert static_text(wizard, "#ds-label-line") == "label: b → toxic; a → non-toxic (stated)"
        choice = picker.choice()
        assert (choice.label_column, choice.label_map) == ("grade", ("toxic=B",))
        await pilot.press("ctrl+n")
        assert str(wizard.query_one("#wz-body").current) == "settings"


async def test_the_column_step_names_the_gold_column_or_the_columns_that_look_like_labels(
    tmp_path: Path,
) -> None:
    """Issue 42 §2: ``is_toxic`` of 1/0 is the label by its name; a file whose label column
    has another name says no label column was chosen and which columns look like labels."""
    paths = {}
    for name in ("is_toxic", "verdict"):
        paths[name] = tmp_path / f"{name}.csv"
        with paths[name].open("w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["id", "comment", name, "source"])
            for k, text in enumerate(TEXTS * 2):
                writer.writerow([f"c{k}", text, 1 - k % 2, "twitter"])  # (one value: no label)
    app = create_app(tmp_path / "haf.duckdb")
    async with app.run_test(size=(120, 40)) as pilot:
        wizard = await open_wizard_on_file(pilot, paths["is_toxic"])
        picker = wizard.query_one(DatasetPicker)
        assert static_text(wizard, "#ds-label-line") == "label: 1 → toxic, 0 → non-toxic (guessed)"
        assert picker.choice().label_column == "is_toxic"
        await set_input(pilot, "#ds-path", str(paths["verdict"]))
        await pilot.press("enter")
        await settle(pilot)
        assert picker.choice().label_column is None
        assert static_text(wizard, "#ds-label-line") == (
            "no label column chosen: no gold; columns that look like labels: verdict (0/1); "
            "pick one with the label column"
        )
        wizard.query_one("#ds-col-label", Select).value = "verdict"
        await pilot.pause()
        assert static_text(wizard, "#ds-label-line") == "label: 1 → toxic, 0 → non-toxic (guessed)"
        assert picker.choice().label_column == "verdict"
