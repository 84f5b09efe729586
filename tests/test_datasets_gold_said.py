"""Issue 42 §2: which column is gold, and how, is said aloud; where no label column was chosen
that is said too (at import, preview, ``haf run --file``, in a campaign's classify table), with
the columns that look like labels and the option to pick one. ``haf run --file`` and a
campaign's dataset entry name a file's columns and label rule as ``haf datasets import`` does;
a threshold that is no finite number is one line everywhere."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from haf_tui.campaign import GridError, load_grid
from haf_tui.campaign.cells import plan_campaign
from haf_tui.campaign.report.model import Cell
from haf_tui.campaign.report.tables import without_gold
from haf_tui.cli import build_parser
from haf_tui.cli.campaign_command import grid_run_config
from haf_tui.cli.run_dataset import say_gold, with_columns
from haf_tui.datasets import load_file
from haf_tui.datasets.files import stated_mapping
from haf_tui.datasets.label_columns import label_candidates
from haf_tui.pipeline.runs import DatasetChoice, resolve_dataset
from haf_tui.store import RunRecord, open_store
from tests.test_datasets_labels import _cli

COMMENTS = [
    "You are a worthless idiot and everyone here would be better off without you.",
    "What a lovely afternoon we had at the park with the children today.",
    "Nobody asked for your garbage opinion, so keep it to yourself from now on.",
    "The recipe needs two eggs, a cup of flour and a pinch of salt to work.",
    "Go back to wherever you crawled out of, nobody wants your kind around here.",
    "Thanks for the help with the move, the new flat already feels like home.",
]


def _posts(path: Path, label_name: str = "is_toxic") -> Path:
    """The issue's file: ``id,comment,LABEL,source`` with 1/0 labels."""
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "comment", label_name, "source"])
        for k, text in enumerate(COMMENTS):
            writer.writerow([f"c{k}", text, 1 - k % 2, ("twitter", "reddit", "forum")[k % 3]])
    return path


@pytest.mark.parametrize(
    "name", ["is_toxic", "toxic", "toxicity", "hate", "offensive", "class", "target", "Is_Toxic"]
)
def test_a_common_label_name_with_label_values_is_gold(tmp_path: Path, name: str) -> None:
    dataset = load_file(_posts(tmp_path / "posts.csv", name))
    assert dataset.meta["mapping"]["label"] == name
    assert [i.label for i in dataset.instances] == ["toxic", "non-toxic"] * 3
    assert "label_note" not in dataset.meta


def test_the_label_column_is_guessed_when_the_text_column_is_named_or_short(
    tmp_path: Path,
) -> None:
    """The issue's file with short comments: ``comment`` is a text column by its name, and
    naming it (``--text-column comment``) still guesses ``is_toxic`` as gold (it was left out:
    the label was guessed only when the whole mapping was)."""
    path = tmp_path / "short.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        rows = [[k, f"post {k}", k % 2, "forum"] for k in range(6)]
        csv.writer(handle).writerows([["id", "comment", "is_toxic", "source"], *rows])
    for mapping in (None, stated_mapping(path, text="comment")):
        dataset = load_file(path, mapping)
        assert dataset.meta["mapping"]["label"] == "is_toxic", mapping
        assert [i.label for i in dataset.instances] == ["non-toxic", "toxic"] * 3
    stated = stated_mapping(path, text="comment", label="source")
    assert stated is not None and load_file(path, stated, label_map=("toxic=forum",))
    # the wizard's label picked as none stays none (the guess is the command line's default)
    for guess, gold in ((True, "is_toxic"), (False, None)):
        choice = DatasetChoice("file", str(path), text_column="comment", guess_label_column=guess)
        assert resolve_dataset(choice, None).meta["mapping"]["label"] == gold


def test_a_likely_label_name_whose_values_are_no_label_is_not_guessed(tmp_path: Path) -> None:
    path = tmp_path / "targets.csv"  # (hate-speech sets: the group a post targets)
    rows = [[t, ("women", "migrants", "women", "jews", "gay men", "migrants")[k]]
            for k, t in enumerate(COMMENTS)]  # fmt: skip
    with path.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows([["text", "target"], *rows])
    dataset = load_file(path)  # (not refused for a rule: the column is not taken)
    assert dataset.meta["mapping"]["label"] is None and len(dataset.instances) == 6
    assert dataset.meta["label_note"] == (
        "no label column chosen: no gold; columns that look like labels: target (few "
        "strings); pick one with --label-column NAME"
    )


def test_the_columns_that_look_like_labels_are_named() -> None:
    values: dict[str, list[Any]] = {
        "id": ["a1", "a2", "a3", "a4"],
        "text": COMMENTS[:4],
        "flag": ["1", "0", "0", "1"],
        "ok": ["yes", "no", "no", "no"],
        "score": ["0.1", "0.9", "0.35", "0.2"],
        "stars": ["1", "5", "3", "5"],
        "source": ["twitter", "reddit", "twitter", "reddit"],
        "empty": ["", "", None, ""],
    }
    assert label_candidates(values, ("text",)) == [
        ("flag", "0/1"),
        ("ok", "true/false"),
        ("score", "a score"),
        ("stars", "numbers"),
        ("source", "few strings"),
    ]


def test_import_and_preview_say_the_gold_column_and_its_rule(tmp_path: Path) -> None:
    path = _posts(tmp_path / "posts.csv")
    db = str(tmp_path / "haf.duckdb")
    done = _cli("--db", db, "datasets", "import", str(path), home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "labels: 1 → toxic, 0 → non-toxic (guessed), from column 'is_toxic'" in done.stdout
    assert "gold: 3 toxic, 3 non-toxic" in done.stdout
    shown = _cli("--db", db, "datasets", "show", "posts", home=tmp_path)
    assert "from column 'is_toxic'" in shown.stdout and "│ non-toxic │" in shown.stdout
    previewed = _cli("datasets", "preview", str(path), home=tmp_path)
    assert "label=is_toxic" in previewed.stdout
    assert "label: 1 → toxic, 0 → non-toxic (guessed)" in previewed.stdout


def test_import_and_preview_say_when_no_label_column_was_chosen(tmp_path: Path) -> None:
    path = _posts(tmp_path / "verdicts.csv", "verdict")
    said = (
        "no label column chosen: no gold; columns that look like labels: verdict (0/1), "
        "source (few strings); pick one with --label-column NAME"
    )
    db = str(tmp_path / "haf.duckdb")
    done = _cli("--db", db, "datasets", "import", str(path), home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"label note: {said}" in done.stdout
    assert said in _cli("datasets", "preview", str(path), home=tmp_path).stdout
    assert said in _cli("--db", db, "datasets", "show", "verdicts", home=tmp_path).stdout
    picked = _cli(
        "--db", db, "datasets", "import", str(path), "--label-column", "verdict", "--name", "v2",
        home=tmp_path,
    )  # fmt: skip
    assert "gold: 3 toxic, 3 non-toxic" in picked.stdout, picked.stderr


def _run_args(*extra: str) -> Any:
    return build_parser().parse_args(["run", *extra])


def _said(dataset: Any) -> str:
    out = io.StringIO()
    say_gold(dataset, Console(file=out, width=200))
    return out.getvalue()


def test_haf_run_file_takes_the_columns_and_rule_of_datasets_import(tmp_path: Path) -> None:
    path = _posts(tmp_path / "verdicts.csv", "verdict")
    args = _run_args("--file", str(path))
    unnamed = resolve_dataset(with_columns(DatasetChoice("file", str(path)), args), None)
    assert all(i.label is None for i in unnamed.instances)
    assert "label note: no label column chosen: no gold; columns that look like labels: " \
        "verdict (0/1)" in _said(unnamed)  # fmt: skip
    args = _run_args(
        "--file", str(path), "--label-column", "verdict", "--label-map", "non-toxic=0",
        "--text-column", "comment",
    )  # fmt: skip
    choice = with_columns(DatasetChoice("file", str(path)), args)
    assert (choice.text_column, choice.label_column, choice.label_map) == (
        "comment", "verdict", ("non-toxic=0",)
    )  # fmt: skip
    dataset = resolve_dataset(choice, None)
    assert [i.label for i in dataset.instances] == ["toxic", "non-toxic"] * 3
    said = _said(dataset)
    assert "labels: 1 → toxic; 0 → non-toxic (stated), from column 'verdict'" in said
    assert "gold: 3 toxic, 3 non-toxic" in said
    zero = _run_args("--file", str(path), "--label-column", "verdict", "--label-threshold", "0")
    assert with_columns(DatasetChoice("file", str(path)), zero).label_threshold == 0.0
    with pytest.raises(ValueError, match="--label-column: for a dataset file only"):
        with_columns(DatasetChoice("builtin", "sample"), _run_args("--label-column", "x"))


@pytest.mark.parametrize("typed", ["nan", "inf", "1e400"])
def test_a_threshold_that_is_no_finite_number_is_one_line_on_the_command_line(
    tmp_path: Path, typed: str
) -> None:
    path = _posts(tmp_path / "posts.csv", "toxicity")
    for command in (["datasets", "import", str(path)], ["run", "--file", str(path)]):
        done = _cli(*command, "--label-threshold", typed, home=tmp_path)
        assert done.returncode == 2 and "Traceback" not in done.stderr
        (line,) = done.stderr.strip().splitlines()
        assert (
            f"error: argument --label-threshold: {typed!r} is not a finite number: give a score "
            "such as 0.5 (haf " in line
        ), line


def _grid(tmp_path: Path, entry: str) -> Path:
    _posts(tmp_path / "verdicts.csv", "verdict")
    path = tmp_path / "grid.toml"
    path.write_text(
        f"models = ['embedded']\ndatasets = [{entry}]\nsuites = ['classify']\n", encoding="utf-8"
    )
    return path


def test_a_campaign_dataset_entry_names_its_label_column_and_rule(tmp_path: Path) -> None:
    entry = (
        '{ label = "mine", file = "verdicts.csv", text_column = "comment", '
        'label_column = "verdict", label_map = "toxic=1" }'
    )
    grid = load_grid(_grid(tmp_path, entry))
    with open_store(tmp_path / "c.duckdb") as store:
        (cell,) = plan_campaign(store, grid, grid_run_config(grid)).cells
        assert cell.settings["dataset.label_column"] == "verdict"
        dataset = resolve_dataset(cell.choice, store)
    assert [i.label for i in dataset.instances] == ["toxic", "non-toxic"] * 3
    other = load_grid(_grid(tmp_path, entry.replace("toxic=1", "non-toxic=0")))
    with open_store(tmp_path / "c.duckdb") as store:
        (changed,) = plan_campaign(store, other, grid_run_config(other)).cells
    assert changed.fingerprint != cell.fingerprint


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        ('{ label = "m", file = "verdicts.csv", label_threshold = nan }', "not a finite number"),
        ('{ label = "m", file = "verdicts.csv", label_threshold = inf }', "not a finite number"),
        ('{ label = "m", name = "sample", label_column = "verdict" }', "label_column go with a"),
        ('{ label = "m", file = "verdicts.csv", label_map = 3 }', "label_map"),
    ],
)
def test_a_bad_label_setting_in_a_grid_is_one_line(tmp_path: Path, entry: str, says: str) -> None:
    with pytest.raises(GridError, match=says) as caught:
        load_grid(_grid(tmp_path, entry))
    assert "\n" not in str(caught.value) and "dataset 'm'" in str(caught.value)


def test_a_campaign_classify_table_without_gold_says_why(tmp_path: Path) -> None:
    plain = load_file(_posts(tmp_path / "verdicts.csv", "verdict"))
    labelled = load_file(_posts(tmp_path / "posts.csv"))
    with open_store(tmp_path / "c.duckdb") as store:
        for run_id, dataset in (("r1", plain), ("r2", labelled)):
            store.save_dataset(
                dataset.dataset_id, dataset.name, dataset.source, dataset.instances, dataset.meta
            )
            store.create_run(
                RunRecord(
                    run_id=run_id,
                    status="finished",
                    dataset_id=dataset.dataset_id,
                    n_planned=6,
                    config_json="{}",
                    model_file="m.gguf",
                    similarity_model="s",
                    similarity_kind="bi-encoder",
                )
            )
        cells = {r: Cell("m", d, r) for r, d in (("r1", "verdicts"), ("r2", "posts"))}
        columns = ["run", "instances", "gold"]
        said = without_gold(store, columns, [("r1", 6, 0), ("r2", 6, 6)], 0, cells)
        assert said == (
            " No gold for m × verdicts: its dataset has no label column (no label column chosen:"
            " no gold; columns that look like labels: verdict (0/1), source (few strings); pick "
            "one with --label-column NAME); name one with label_column in the grid's dataset "
            "entry."
        )
        assert without_gold(store, columns, [("r2", 6, 6)], 0, cells) == ""
        assert without_gold(store, ["run", "n"], [("r1", 6)], 0, cells) == ""
