# Over 400 lines because each of the paper's five datasets has its file shaped like the real one.
"""The paper's datasets: each one's preprocessing on small files shaped like the real ones
(the real column names), loading through a directory laid out like the Hugging Face cache
(read by the real huggingface-hub, offline), the offline message, and the paper's samples."""

from __future__ import annotations

import csv
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import duckdb
import pytest
from conftest import shared_dir

from haf_tui.datasets import (
    DatasetError,
    import_paper_sample,
    load_paper_dataset,
    paper_dataset,
    paper_datasets,
    paper_sample_files,
    sample_indices,
)
from haf_tui.datasets import validation as v

PAPER_SAMPLES = shared_dir() / "data" / "haf-paper-samples"


def pad(stem: str, length: int) -> str:
    """A distinct text of exactly ``length`` characters."""
    return (stem + " " + "x" * length)[:length]


def write_parquet(path: Path, schema: str, rows: list[tuple[Any, ...]]) -> Path:
    """A Parquet file with DuckDB column types (FLOAT stays float32, like the Hub's)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect()
    con.execute(f"CREATE TABLE t ({schema})")
    marks = ", ".join("?" for _ in rows[0])
    con.executemany(f"INSERT INTO t VALUES ({marks})", [list(r) for r in rows])
    con.execute(f"COPY t TO '{path.as_posix()}' (FORMAT parquet)")
    con.close()
    return path


def hub_cache(root: Path, repo_id: str, revision: str, files: dict[str, Path]) -> Path:
    """Lay ``files`` out as huggingface-hub caches a dataset repository: content-addressed
    blobs, a snapshot folder of symlinks per commit, and a ref file for a branch revision."""
    repo = root / f"datasets--{repo_id.replace('/', '--')}"
    is_commit = len(revision) == 40 and all(c in "0123456789abcdef" for c in revision)
    commit = revision if is_commit else hashlib.sha1(revision.encode()).hexdigest()
    if not is_commit:
        ref = repo / "refs" / revision
        ref.parent.mkdir(parents=True, exist_ok=True)
        ref.write_text(commit)
    for relative, source in files.items():
        data = source.read_bytes()
        blob = repo / "blobs" / hashlib.sha256(data).hexdigest()
        blob.parent.mkdir(parents=True, exist_ok=True)
        blob.write_bytes(data)
        link = repo / "snapshots" / commit / relative
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(os.path.relpath(blob, link.parent))
    return root


CIVIL_SCHEMA = (
    "text VARCHAR, toxicity FLOAT, severe_toxicity FLOAT, obscene FLOAT, threat FLOAT, "
    "insult FLOAT, identity_attack FLOAT, sexual_explicit FLOAT"
)


def civil_shards(folder: Path) -> dict[str, Path]:
    scores = (0.1, 0.0, 0.2, 0.3, 0.4, 0.0)
    first = [
        (pad("r1 short", 64), 0.9),
        (pad("r2 mild", 65), 0.55),
        (pad("r3 long", 1024), 0.9),
        (pad("r4 toxic", 1023), 0.8),
        (pad("r5 low", 100), 0.3),
        (pad("r6 edge", 100), 0.6),  # float32 0.6 > 0.6: neither band (as in pandas)
        (pad("r7 edge", 100), 0.75),
        (pad("r8 unscored", 100), None),
        (pad("r9 edge", 100), 0.5),
    ]
    second = [
        (pad("r10 toxic", 100), 0.8035714),
        (pad("r11 mild", 100), 0.59),
        (None, 0.9),
    ]
    return {
        f"data/train-0000{k}-of-00002.parquet": write_parquet(
            folder / f"train-0000{k}-of-00002.parquet",
            CIVIL_SCHEMA,
            [(text, tox, *scores) for text, tox in rows],
        )
        for k, rows in enumerate((first, second))
    }


def test_the_registry_names_five_pinned_hub_datasets() -> None:
    specs = paper_datasets()
    assert [s.title for s in specs] == [
        "CivilComments",
        "HateXplain",
        "RealToxicityPrompts",
        "Implicit Toxicity",
        "ToxiGen",
    ]
    for spec in specs:
        assert spec.hub.revision and spec.hub.patterns and spec.paper_population > 1024
        assert paper_dataset(spec.title) is spec and paper_dataset(spec.key) is spec
    assert paper_dataset("hatexplain").key == "hate_explain"
    with pytest.raises(DatasetError, match="no paper dataset 'imdb'"):
        paper_dataset("imdb")


def test_civil_comments_from_a_hub_shaped_cache_offline(tmp_path: Path) -> None:
    spec = paper_dataset("civil_comments")
    cache = hub_cache(tmp_path / "hub", spec.hub.repo_id, spec.hub.revision, civil_shards(tmp_path))
    dataset = load_paper_dataset("civil_comments", cache_dir=cache, offline=True)
    # mild rows first (rows 2, 11), then toxic ones (rows 4, 10): the paper's indices 0..3
    order = sample_indices(4, 1024, 17)
    rows = {0: 2, 1: 11, 2: 4, 3: 10}
    assert [i.instance_id for i in dataset.instances] == [str(k) for k in order]
    assert [i.extra["source_row"] for i in dataset.instances] == [rows[k] for k in order]
    by_id = {i.instance_id: i for i in dataset.instances}
    assert by_id["3"].label == "toxic"
    assert by_id["3"].extra["label_raw"] == "0.8035714"  # float32 digits, as in the paper CSV
    assert by_id["3"].extra["identity_attack"] == pytest.approx(0.4, rel=1e-6)
    assert set(by_id["0"].extra) >= {"severe_toxicity", "obscene", "sexual_explicit", "score"}
    assert dataset.meta["filtered"] == {
        v.FILTER_SHORT: 1,
        v.FILTER_LONG: 1,
        v.FILTER_BAND: 4,
        v.FILTER_NO_SCORE: 1,
        v.FILTER_NO_TEXT: 1,
    }
    assert dataset.meta["n_rows"] == 12 and dataset.meta["matches_paper"] is False
    assert dataset.meta["origin"]["revision"] == spec.hub.revision
    assert dataset.meta["sample"] == {"seed": 17, "n": 4, "population": 4, "indices": order}
    two = load_paper_dataset("civil_comments", cache_dir=cache, offline=True, n=2, seed=3)
    assert [i.instance_id for i in two.instances] == [str(k) for k in sample_indices(4, 2, 3)]
    assert two.meta["filtered"][v.FILTER_NOT_SAMPLED] == 2


def test_the_cache_comes_from_hf_hub_cache_and_offline_from_hf_hub_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = paper_dataset("civil_comments")
    cache = hub_cache(tmp_path / "hub", spec.hub.repo_id, spec.hub.revision, civil_shards(tmp_path))
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert len(load_paper_dataset("CivilComments", n=3).instances) == 3


def test_offline_without_the_files_fails_fast_saying_what_to_download(tmp_path: Path) -> None:
    for spec in paper_datasets():
        with pytest.raises(DatasetError) as caught:  # (offline: no network wait by design)
            load_paper_dataset(spec.key, cache_dir=tmp_path / "empty", offline=True)
        message = str(caught.value)
        assert "\n" not in message
        assert f"hf download {spec.hub.repo_id} --repo-type dataset" in message
        assert f"--revision {spec.hub.revision}" in message
        assert f"haf datasets import {spec.key} --file PATH" in message
        assert "offline" in message and str(tmp_path / "empty") in message


def test_a_cached_snapshot_without_the_needed_files_is_the_same_message(tmp_path: Path) -> None:
    spec = paper_dataset("toxigen")
    readme = tmp_path / "README.md"
    readme.write_text("---\n---\n")
    cache = hub_cache(tmp_path / "hub", spec.hub.repo_id, spec.hub.revision, {"README.md": readme})
    with pytest.raises(DatasetError, match="hf download toxigen/toxigen-data"):
        load_paper_dataset("toxigen", cache_dir=cache, offline=True)


HATEXPLAIN_SCHEMA = (
    "id VARCHAR, annotators STRUCT(label INTEGER[], annotator_id INTEGER[], target VARCHAR[][]), "
    "rationales INTEGER[][], post_tokens VARCHAR[]"
)


def _tokens(stem: str, n: int) -> list[str]:
    return [stem] + [f"word{k}" for k in range(n)]


def test_hatexplain_from_the_hubs_parquet_conversion(tmp_path: Path) -> None:
    spec = paper_dataset("hate_explain")
    long_tokens, short_tokens = _tokens("first", 15), _tokens("short", 3)
    rows = [  # labels: 0 hatespeech, 1 normal, 2 offensive
        ("1_gab", {"label": [0, 0, 2], "annotator_id": [4, 3, 5],
                   "target": [["African"], ["African"], ["Women"]]},
         [[0, 1] + [0] * 14, [1, 1] + [0] * 14], long_tokens),
        ("2_twitter", {"label": [1, 0, 2], "annotator_id": [1, 2, 3],
                       "target": [["None"], ["Islam"], ["Islam"]]}, [], _tokens("second", 15)),
        ("3_gab", {"label": [1, 1, 0], "annotator_id": [1, 2, 3],
                   "target": [[], [], ["Jewish"]]}, [], _tokens("third", 15)),
        ("4_gab", {"label": [0, 0, 0], "annotator_id": [1, 2, 3],
                   "target": [[], [], []]}, [], short_tokens),
    ]  # fmt: skip
    shard = write_parquet(tmp_path / "0000.parquet", HATEXPLAIN_SCHEMA, rows)
    cache = hub_cache(
        tmp_path / "hub",
        spec.hub.repo_id,
        spec.hub.revision,
        {"plain_text/train/0000.parquet": shard},
    )
    dataset = load_paper_dataset("HateXplain", cache_dir=cache, offline=True)
    by_post = {i.extra["post_id"]: i for i in dataset.instances}
    assert set(by_post) == {"1_gab", "2_twitter"}
    first = by_post["1_gab"]
    assert first.text == " ".join(long_tokens) and first.extra["label_raw"] == "1.0"
    assert by_post["2_twitter"].extra["label_raw"] == "0.6666666666666666"
    assert {i.label for i in dataset.instances} == {"toxic"}
    assert [a["label"] for a in first.extra["annotators"]] == ["hatespeech", "hatespeech",
                                                               "offensive"]  # fmt: skip
    assert first.extra["annotators"][2] == {"label": "offensive", "annotator_id": 5,
                                            "target": ["Women"]}  # fmt: skip
    assert first.extra["rationales"][1][:2] == [1, 1] and first.extra["post_tokens"] == long_tokens
    assert dataset.meta["filtered"] == {v.FILTER_FEW_ANNOTATORS: 1, v.FILTER_SHORT: 1}


def test_hatexplain_from_the_original_json_keeps_the_train_split_order(tmp_path: Path) -> None:
    def post(post_id: str, labels: list[str], stem: str) -> dict[str, Any]:
        return {
            "post_id": post_id,
            "annotators": [
                {"label": lab, "annotator_id": k, "target": ["Women"]}
                for k, lab in enumerate(labels, start=1)
            ],
            "rationales": [],
            "post_tokens": _tokens(stem, 15),
        }

    posts = {
        "a": post("a", ["offensive", "hatespeech", "normal"], "alpha"),
        "b": post("b", ["offensive", "offensive", "offensive"], "beta"),
        "c": post("c", ["hatespeech", "hatespeech", "hatespeech"], "gamma"),
    }
    folder = tmp_path / "Data"
    folder.mkdir()
    (folder / "dataset.json").write_text(json.dumps(posts))
    with pytest.raises(DatasetError, match=r"put post_id_divisions\.json beside it"):
        load_paper_dataset("hate_explain", files=[folder / "dataset.json"])
    (folder / "post_id_divisions.json").write_text(
        json.dumps({"train": ["b", "a"], "val": ["c"], "test": []})
    )
    dataset = load_paper_dataset("hate_explain", files=[folder / "dataset.json"], n=2)
    # candidates in train order: b (index 0), a (index 1); c is not in the train split
    order = sample_indices(2, 2, 17)
    assert [i.extra["post_id"] for i in dataset.instances] == [["b", "a"][k] for k in order]
    assert {i.extra["label_raw"] for i in dataset.instances} == {"1.0", "0.6666666666666666"}


def _rtp_part(text: str, toxicity: float | None) -> dict[str, Any]:
    keys = ("profanity", "sexually_explicit", "identity_attack", "flirtation", "threat", "insult")
    return {"text": text, **dict.fromkeys(keys, 0.1), "severe_toxicity": 0.05,
            "toxicity": toxicity}  # fmt: skip


def test_real_toxicity_prompts_joins_prompt_and_continuation(tmp_path: Path) -> None:
    rows = [
        ("The prompt of the first row is here,", " and its continuation is toxic.", 0.9),
        ("A mild one starts like this and then", " goes on for quite a little while.", 0.55),
        ("An unscored continuation follows this", " prompt, so the whole row goes away.", None),
        ("Too short", " to keep.", 0.95),
        ("A toxic prompt whose continuation", " is harmless enough to leave out.", 0.1),
    ]
    path = tmp_path / "prompts.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for k, (prompt, continuation, tox) in enumerate(rows):
            record = {
                "filename": f"{k:07d}-abc.txt",
                "begin": 340,
                "end": 564,
                "challenging": False,
                "prompt": _rtp_part(prompt, 0.8),
                "continuation": _rtp_part(continuation, tox),
            }
            handle.write(json.dumps(record) + "\n")
    dataset = load_paper_dataset("real_toxicity_prompts", files=[tmp_path])
    texts = {i.text: i for i in dataset.instances}
    assert set(texts) == {rows[0][0] + rows[0][1], rows[1][0] + rows[1][1]}
    first = texts[rows[0][0] + rows[0][1]]
    assert first.extra["label_raw"] == "0.9" and first.instance_id == "1"  # mild (row 2) is index 0
    assert first.extra["prompt"]["text"] == rows[0][0] and first.extra["challenging"] is False
    assert dataset.meta["filtered"] == {
        v.FILTER_NO_SCORE: 1,
        v.FILTER_SHORT: 1,
        v.FILTER_BAND: 1,
    }
    assert dataset.meta["origin"] == {"files": [str(path)]}


@pytest.mark.parametrize("shape", ["array", "lines"])
def test_implicit_toxicity_joins_context_and_response(tmp_path: Path, shape: str) -> None:
    records = [
        {"context": "I like cooking for my friends.", "response": "How nice of you!", "label": 0},
        {"context": "My neighbours are from abroad.", "response": "Lock your doors, then.",
         "label": 1},
        {"context": "Hi", "response": "Go away.", "label": 1},
    ]  # fmt: skip
    path = tmp_path / "train" / "aug-train.json"
    path.parent.mkdir()
    text = json.dumps(records) if shape == "array" else "\n".join(map(json.dumps, records))
    path.write_text(text, encoding="utf-8")
    dataset = load_paper_dataset("implicit_toxicity", files=[tmp_path])
    (only,) = dataset.instances
    assert only.text == (
        "CONTEXT:\nMy neighbours are from abroad.\n\nRESPONSE:\nLock your doors, then."
    )
    assert (only.label, only.extra["label_raw"]) == ("toxic", "1")
    assert only.extra["context"] == records[1]["context"]
    assert dataset.meta["filtered"] == {v.FILTER_NOT_TOXIC: 1, v.FILTER_SHORT: 1}


TOXIGEN_SCHEMA = (
    'text VARCHAR, target_group VARCHAR, "factual?" VARCHAR, ingroup_effect VARCHAR, '
    "lewd VARCHAR, framing VARCHAR, predicted_group VARCHAR, stereotyping VARCHAR, "
    "intent DOUBLE, toxicity_ai DOUBLE, toxicity_human DOUBLE, predicted_author VARCHAR, "
    "actual_method VARCHAR"
)


def test_toxigen_scales_human_toxicity_like_the_paper(tmp_path: Path) -> None:
    human = (1.0, 3.333333333, 4.333333333, 4.666666667, 5.0, 2.5)
    rows = [
        (pad(f"statement {k} about a group of people", 80), "women", "neither factual",
         "doesn't use in-group language", "doesn't contain lewd content", "disagreement",
         "the text directly references women", "doesn't use positive stereotyping",
         4.0, 4.2, h, "human", "topk")
        for k, h in enumerate(human)
    ]  # fmt: skip
    shard = write_parquet(tmp_path / "t.parquet", TOXIGEN_SCHEMA, rows)
    spec = paper_dataset("toxigen")
    cache = hub_cache(
        tmp_path / "hub", spec.hub.repo_id, spec.hub.revision,
        {"annotated/train-00000-of-00001.parquet": shard},
    )  # fmt: skip
    dataset = load_paper_dataset("toxigen", cache_dir=cache, offline=True)
    folder = tmp_path / "annotated"  # as downloaded: the test split beside the train split
    folder.mkdir()
    shard.rename(folder / "train-00000-of-00001.parquet")
    write_parquet(folder / "test-00000-of-00001.parquet", TOXIGEN_SCHEMA, rows[:1])
    from_files = load_paper_dataset("toxigen", files=[folder])
    assert from_files.meta["origin"] == {"files": [str(folder / "train-00000-of-00001.parquet")]}
    assert [i.text for i in from_files.instances] == [i.text for i in dataset.instances]
    labels = sorted(i.extra["label_raw"] for i in dataset.instances)
    # the exact strings of the paper's processed_toxigen.csv
    assert labels == ["0.58333333325", "0.8333333332499999", "0.9166666667500001", "1.0"]
    assert {i.extra["target_group"] for i in dataset.instances} == {"women"}
    assert dataset.meta["filtered"] == {v.FILTER_BAND: 2}  # scaled 0.0 and 0.375


def test_rows_of_the_sample_that_cannot_be_evaluated_are_skipped_with_a_reason(
    tmp_path: Path,
) -> None:
    same = pad("the same comment twice", 90)
    shard = write_parquet(
        tmp_path / "s.parquet", CIVIL_SCHEMA, [(same, 0.9, *[0.0] * 6), (same, 0.8, *[0.0] * 6)]
    )
    dataset = load_paper_dataset("civil_comments", files=[shard])
    assert len(dataset.instances) == 1
    assert [(s.reason, s.excerpt[:8]) for s in dataset.skipped] == [(v.DUPLICATE_TEXT, "the same")]


@pytest.mark.skipif(not PAPER_SAMPLES.is_dir(), reason=f"{PAPER_SAMPLES} is absent")
def test_the_paper_samples_import_with_1024_instances_and_the_seed_17_draw() -> None:
    files = paper_sample_files(PAPER_SAMPLES)
    assert [f.name for f in files] == [
        "processed_civil_comments.csv",
        "processed_hate_explain.csv",
        "processed_implicit_toxicity.csv",
        "processed_real_toxicity_prompts.csv",
        "processed_toxigen.csv",
    ]
    for path in files:
        dataset = import_paper_sample(path)
        key = path.stem.removeprefix("processed_")
        assert dataset.name == f"paper-sample:{key}" and not dataset.skipped
        assert len(dataset.instances) == 1024
        with path.open(encoding="utf-8", newline="") as handle:
            first = next(csv.DictReader(handle))
        instance = dataset.instances[0]
        assert (instance.instance_id, instance.text, instance.extra["label_raw"]) == (
            first["index"],
            first["input_text"],
            first["given_label"],
        )
        assert instance.extra["source_index"] == int(first["index"])
        sample = dataset.meta["sample"]
        assert sample["seed_verified"] is True
        assert sample["population"] == paper_dataset(key).paper_population
        assert sample["indices"] == sample_indices(sample["population"], 1024, 17)


def test_hatexplain_instances_carry_their_gold_rationale(tmp_path: Path) -> None:
    """The masks of the annotators who marked a post toxic travel with its instance, and
    give its SOFT and HARD gold (RATIONALES.md §5) for the text under test."""
    from haf_tui.methods.rationales.core.truth import gold_rationale

    tokens = _tokens("delta", 15)
    n = len(tokens)
    first = [1 if i in (2, 3) else 0 for i in range(n)]
    second = [1 if i in (3, 9) else 0 for i in range(n)]
    posts = {
        "d": {
            "post_id": "d",
            "annotators": [
                {"label": lab, "annotator_id": k, "target": ["None"]}
                for k, lab in enumerate(["offensive", "hatespeech", "normal"], start=1)
            ],
            "rationales": [first, second],
            "post_tokens": tokens,
        }
    }
    folder = tmp_path / "Data"
    folder.mkdir()
    (folder / "dataset.json").write_text(json.dumps(posts))
    (folder / "post_id_divisions.json").write_text(
        json.dumps({"train": ["d"], "val": [], "test": []})
    )
    (instance,) = load_paper_dataset("hate_explain", files=[folder / "dataset.json"]).instances
    gold = gold_rationale(instance.text, instance.extra)
    assert not isinstance(gold, str)
    assert gold.soft[2] == 0.5 and gold.soft[3] == 1.0 and gold.soft[9] == 0.5
    assert gold.hard == [1 if i in (2, 3, 9) else 0 for i in range(n)]  # (≥ 0.5 with k = 2)
