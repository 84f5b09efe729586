"""Issue 33 §1: gold labels come in as what they are (strings, booleans, 0/1, scores with a
threshold), the rule is shown and stored, the classify report counts the gold, and a column
that is no label (free text, many values) is refused in one line."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from haf_tui import reports
from haf_tui.datasets import builtin_sample, load_file, paper_datasets, preview_file
from haf_tui.datasets.labels import (
    HATEXPLAIN_CLASSES,
    PAPER_RULES,
    LabelError,
    LabelRule,
    NotALabelError,
    guess_rule,
    rule_of,
    stated_rule,
)
from haf_tui.datasets.samples import import_paper_sample
from haf_tui.datasets.validation import BAD_LABEL
from haf_tui.store import Store, open_store
from haf_tui.store.records import InstanceRecord, RunRecord
from tests.conftest import REPO_ROOT, shared_dir

TEXTS = [
    "You are a worthless idiot and everyone here would be better off without you.",
    "What a lovely afternoon we had at the park with the children today.",
    "Nobody asked for your garbage opinion, so keep it to yourself from now on.",
    "The recipe needs two eggs, a cup of flour and a pinch of salt to work.",
]


def _gold(rule: LabelRule, values: list[Any]) -> list[str | None]:
    return [rule.gold(v)[0] for v in values]


# ---------------------------------------------------------------- guessing a rule


@pytest.mark.parametrize(
    ("values", "kind"),
    [
        ([1, 0, 1, 0], "binary"),
        (["1", "0", "1", "0"], "binary"),
        (["1.0", "0.0", "1", "0"], "binary"),
        ([True, False, True, False], "boolean"),
        (["True", "false", "TRUE", "False"], "boolean"),
        (["yes", "no", "yes", "no"], "boolean"),
        ([0.9, 0.1, 0.75, 0.2], "score"),
        (["0.9", "0.1", "0.75", "0.2"], "score"),
        (["toxic", "non-toxic", "toxic", "non_toxic"], "strings"),
        (["hate", "normal", "offensive", "Normal"], "strings"),
    ],
)
def test_a_label_column_is_read_as_what_it_is(values: list[Any], kind: str) -> None:
    rule = guess_rule(values, "label")
    assert rule.kind == kind and rule.origin == "guessed"
    assert _gold(rule, values) == ["toxic", "non-toxic", "toxic", "non-toxic"]


def test_a_score_is_toxic_from_the_threshold_up() -> None:
    rule = guess_rule([0.49, 0.5, 0.51, 0.0, 1.0], "toxicity")
    assert rule.threshold == 0.5
    assert _gold(rule, [0.49, 0.5, 0.51]) == ["non-toxic", "toxic", "toxic"]
    assert "score ≥ 0.5 → toxic" in rule.describe()
    stated = guess_rule([0.49, 0.7, 0.71], "toxicity", threshold=0.7)
    assert (stated.origin, _gold(stated, [0.69, 0.7])) == ("stated", ["non-toxic", "toxic"])


def test_a_value_the_rule_does_not_read_has_no_gold_and_says_why() -> None:
    binary = guess_rule(["1", "0"], "label")
    assert binary.gold("2") == (None, "label '2' is not 0 or 1")
    assert guess_rule(["0.3", "0.8"], "s").gold("high")[1] == "label 'high' is not a score"
    strings = guess_rule(["toxic", "normal", "ambiguous"], "label")
    assert strings.gold("ambiguous") == (None, None)  # raters undecided: no gold, kept
    assert strings.stored("Ambiguous") == ("Ambiguous", None)


@pytest.mark.parametrize(
    ("values", "says"),
    [
        (
            ["I posted this on the forum about football yesterday evening", "another blog"],
            "is not a label: free text (long texts",
        ),
        ([f"word{k}" for k in range(25)], "is not a label: free text (25 different values"),
        (["", "  ", None], "is empty"),
    ],
)
def test_a_column_that_is_no_label_is_refused_in_one_line(values: list[Any], says: str) -> None:
    with pytest.raises(NotALabelError, match=r"^column 'forum'|^label column 'forum'") as caught:
        guess_rule(values, "forum")
    assert says in str(caught.value) and "\n" not in str(caught.value)


def test_a_rule_that_cannot_be_guessed_is_asked_for() -> None:
    with pytest.raises(LabelError, match="--label-map toxic=A,B") as caught:
        guess_rule(["A", "B", "A"], "grade")
    assert not isinstance(caught.value, NotALabelError)
    with pytest.raises(LabelError, match=r"from 1 to 5.*--label-threshold T"):
        guess_rule([1, 2, 5, 3], "stars")
    rule = stated_rule(["A", "B", "C"], "grade", label_map=["toxic=A,C"])
    assert _gold(rule, ["A", "B", "c"]) == ["toxic", "non-toxic", "toxic"]
    assert rule.origin == "stated" and "a, c → toxic; b → non-toxic" in rule.describe()
    scale = stated_rule([1, 2, 5], "stars", threshold=4)
    assert _gold(scale, [3, 4, 5]) == ["non-toxic", "toxic", "toxic"]
    with pytest.raises(LabelError, match="not both"):
        stated_rule(["A"], "grade", threshold=0.5, label_map=["toxic=A"])
    with pytest.raises(LabelError, match="write toxic=VALUE"):
        stated_rule(["A"], "grade", label_map=["A"])


# ---------------------------------------------------------------- files


def _file(path: Path, labels: list[str], extra: str = "") -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "text", "label", *([extra] if extra else [])])
        for k, label in enumerate(labels, start=1):
            text = TEXTS[(k - 1) % len(TEXTS)] + (f" (number {k})" if k > len(TEXTS) else "")
            writer.writerow([k, text, label, *([f"{text} (a blog post)"] if extra else [])])
    return path


def test_a_file_of_ones_and_zeros_stores_gold_keeps_the_value_and_the_rule(
    tmp_path: Path,
) -> None:
    path = _file(tmp_path / "ones.csv", ["1", "0", "1", "maybe", *["0"] * 9])
    dataset = load_file(path)  # (mostly numbers: read as numbers, the odd row skipped)
    assert [i.label for i in dataset.instances][:4] == ["toxic", "non-toxic", "toxic", "non-toxic"]
    assert [i.extra["label_raw"] for i in dataset.instances][:3] == ["1", "0", "1"]
    ((row, reason, _),) = dataset.skipped
    assert row == 4 and reason == f"{BAD_LABEL}: label 'maybe' is not 0 or 1"
    rule = rule_of(dataset.meta)
    assert rule is not None and rule.kind == "binary"
    preview = preview_file(path)
    assert preview.label is not None and preview.label.line().startswith("label: 1 → toxic")


def test_a_guessed_label_column_of_free_text_is_dropped_with_a_note(tmp_path: Path) -> None:
    path = tmp_path / "posts.csv"
    path.write_text(
        "text,label\n" + "".join(f'"{t}","{t[::-1]}"\n' for t in TEXTS), encoding="utf-8"
    )
    dataset = load_file(path)  # 'label' is guessed as the label by its name: it is free text
    assert dataset.meta["mapping"]["label"] is None and len(dataset.instances) == 4
    assert "is not a label: free text" in dataset.meta["label_note"]
    assert all(i.label is None for i in dataset.instances)


def _cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HAF_HOME": str(home), "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "haf_tui.cli", *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_csv_of_ones_and_zeros_imports_with_its_rule_and_the_classify_report_counts_it(
    tmp_path: Path,
) -> None:
    path = _file(tmp_path / "ones.csv", ["1", "0", "1", "0"])
    db = tmp_path / "haf.duckdb"
    done = _cli("--db", str(db), "datasets", "import", str(path), home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "labels: 1 → toxic, 0 → non-toxic (guessed)" in done.stdout
    assert "gold: 2 toxic, 2 non-toxic" in done.stdout
    shown = _cli("--db", str(db), "datasets", "show", "ones", home=tmp_path)
    assert "labels: 1 → toxic, 0 → non-toxic (guessed)" in shown.stdout, shown.stderr
    with open_store(db) as store:
        ((dataset_id,),) = store.reader().execute("SELECT dataset_id FROM datasets").fetchall()
        row = _classified(store, dataset_id, {"1": 1.0, "2": 0.0, "3": 0.0, "4": 0.0})
    assert row["n_gold"] == 4 and row["pct_correct"] == pytest.approx(75.0)  # 3 of 4 right


def _classified(store: Store, dataset_id: str, predicted: dict[str, float]) -> dict[str, Any]:
    """The classification report's row of a classify run over ``dataset_id`` that predicted
    ``predicted`` (ŷ toxic: 1.0) per instance."""
    store.create_run(
        RunRecord(
            run_id="r1",
            status="finished",
            dataset_id=dataset_id,
            n_planned=len(predicted),
            config_json="{}",
            model_file="m.gguf",
            similarity_model="s",
            similarity_kind="bi-encoder",
        )
    )
    for instance_id, toxic in predicted.items():
        for metric, value in (
            ("classify_p_toxic", 0.8 if toxic else 0.2),
            ("classify_label_mass", 0.9),
            ("classify_toxic", toxic),
        ):
            store.connection.execute(
                "INSERT INTO instance_metrics VALUES (?, ?, ?, ?, 1)",
                ["r1", instance_id, metric, value],
            )
    columns, rows = reports.run_named(store, "classification", None)
    (row,) = [dict(zip(columns, r, strict=True)) for r in rows]
    return row


def test_every_hatexplain_post_is_gold_by_its_class_in_the_classify_report(
    tmp_path: Path,
) -> None:
    classes = {"p1": "hatespeech", "p2": "offensive", "p3": "normal", "p4": "undecided"}
    with open_store(tmp_path / "haf.duckdb") as store:
        instances = [
            InstanceRecord(instance_id=k, position=n, text=TEXTS[n], label=label)
            for n, (k, label) in enumerate(classes.items())
        ]
        store.save_dataset(
            "hx", "hx", "hx", instances, {"label_rule": HATEXPLAIN_CLASSES.model_dump()}
        )
        row = _classified(store, "hx", {"p1": 1.0, "p2": 0.0, "p3": 0.0, "p4": 1.0})
    assert row["n_gold"] == 3 and row["pct_correct"] == pytest.approx(100 * 2 / 3)
    assert [HATEXPLAIN_CLASSES.gold(c)[0] for c in classes.values()] == [
        "toxic", "toxic", "non-toxic", None
    ]  # fmt: skip


def test_a_free_text_label_column_is_refused_in_one_line_and_nothing_is_stored(
    tmp_path: Path,
) -> None:
    path = _file(tmp_path / "forum.csv", ["1", "0", "1", "0"], extra="forum")
    db = tmp_path / "haf.duckdb"
    done = _cli(
        "--db", str(db), "datasets", "import", str(path), "--label-column", "forum", home=tmp_path
    )
    assert done.returncode != 0 and "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("error: column 'forum' is not a label: free text")
    listed = _cli("--db", str(db), "datasets", "list", home=tmp_path)
    assert "forum" not in listed.stdout


def test_an_unguessable_label_column_is_asked_for_then_stated(tmp_path: Path) -> None:
    path = _file(tmp_path / "grades.csv", ["A", "B", "A", "C"])
    db = tmp_path / "haf.duckdb"
    asked = _cli("--db", str(db), "datasets", "import", str(path), home=tmp_path)
    assert asked.returncode != 0 and "--label-map toxic=A,B" in asked.stderr
    stated = ("--label-map", "toxic=A,C")
    done = _cli("--db", str(db), "datasets", "import", str(path), *stated, home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "labels: a, c → toxic; b → non-toxic (stated)" in done.stdout
    assert "gold: 3 toxic, 1 non-toxic" in done.stdout


def test_a_dataset_stored_before_label_rules_is_warned_about(tmp_path: Path) -> None:
    path = _file(tmp_path / "old.csv", ["1", "0", "1", "0"])
    db = tmp_path / "haf.duckdb"
    assert _cli("--db", str(db), "datasets", "import", str(path), home=tmp_path).returncode == 0
    with open_store(db) as store:  # as an older haf-tui stored it: raw labels, no rule
        store.connection.execute(
            "UPDATE instances SET label = json_extract_string(extra, '$.label_raw')"
        )
        store.connection.execute("UPDATE datasets SET meta = json_object('kind', 'file')")
    shown = _cli("--db", str(db), "datasets", "show", "old", home=tmp_path)
    assert "labels: no label rule stored (imported before label rules): they are not gold" in (
        shown.stdout
    )


# ---------------------------------------------------------------- built-in and paper data


def test_the_builtin_sample_has_gold_or_says_its_raters_did_not_decide() -> None:
    sample = builtin_sample()
    rule = rule_of(sample.meta)
    assert rule is not None
    golds = [rule.gold(i.label) for i in sample.instances]
    assert all(problem is None for _, problem in golds)
    assert {g for g, _ in golds} == {"toxic", "non-toxic", None}
    assert all(i.label in ("toxic", "non-toxic", "ambiguous") for i in sample.instances)


def test_every_paper_dataset_has_the_papers_label_rule() -> None:
    assert {d.key for d in paper_datasets()} == set(PAPER_RULES)
    for key, rule in PAPER_RULES.items():
        assert rule.origin == "paper" and rule.why, key


def test_each_paper_sample_yields_gold_for_every_row_with_its_rule() -> None:
    folder = shared_dir() / "data" / "haf-paper-samples"
    if not folder.is_dir():
        pytest.skip(f"the paper's samples are not in {folder}")
    said = {}
    for key, kind in (
        ("civil_comments", "score"),
        ("hate_explain", "score"),
        ("implicit_toxicity", "binary"),
        ("real_toxicity_prompts", "score"),
        ("toxigen", "score"),
    ):
        dataset = import_paper_sample(folder / f"processed_{key}.csv")
        rule = rule_of(dataset.meta)
        assert rule is not None and (rule.kind, rule.origin) == (kind, "paper"), key
        assert len(dataset.instances) == 1024 and not dataset.skipped, key
        for instance in dataset.instances:
            assert instance.label == rule.gold(instance.extra["label_raw"])[0] == "toxic", key
        said[key] = rule.describe()
    assert said["toxigen"].startswith("score ≥ 0.5 → toxic, below → non-toxic (paper; human")
    assert said["implicit_toxicity"].startswith("1 → toxic, 0 → non-toxic (paper;")
    json.dumps(said)  # (the rules are plain data)


def test_a_file_labelled_by_another_rule_is_another_dataset(tmp_path: Path) -> None:
    path = tmp_path / "scores.csv"
    path.write_text(
        "text,toxicity\n"
        + "".join(f'"{t}",{s}\n' for t, s in zip(TEXTS, (0.9, 0.6, 0.2, 0.7), strict=True)),
        encoding="utf-8",
    )
    guessed, stated = load_file(path), load_file(path, label_threshold=0.65)
    assert [i.label for i in guessed.instances] == ["toxic", "toxic", "non-toxic", "toxic"]
    assert [i.label for i in stated.instances] == ["toxic", "non-toxic", "non-toxic", "toxic"]
    assert guessed.dataset_id != stated.dataset_id
    assert rule_of(stated.meta) == LabelRule(kind="score", threshold=0.65, origin="stated")
