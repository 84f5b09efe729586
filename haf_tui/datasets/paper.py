"""The paper's five datasets: where each lives on the Hub, how it is preprocessed (spec §8),
and loading one as a seeded sample.

Adding a dataset is adding a :class:`PaperDataset` to :data:`PAPER_DATASETS`: its Hub
repository and pinned revision, the files used, and its preprocessing function
(:mod:`haf_tui.datasets.preprocess`). Loading reads the files from the Hub's cache (or from
``files`` given by the user), preprocesses them, and draws a seeded sample (1024 with seed 17 by
default: the reference's ``DataFrame.sample(n, random_state=17)``), whose source indices are
the instance ids and are kept in the dataset's metadata.

Revisions: CivilComments, RealToxicityPrompts, Implicit Toxicity and ToxiGen are pinned to
commit hashes of their Hub repositories. HateXplain's Hub repository holds only a loading script
(its data is on GitHub), so it is read from the Hub's automatic Parquet conversion, the branch
``refs/convert/parquet``: a branch, not a commit, because no commit hash of it could be checked.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from haf_tui.datasets import preprocess
from haf_tui.datasets.files import sample_indices
from haf_tui.datasets.hub import HubSource, fetch, matching_files
from haf_tui.datasets.labels import HATEXPLAIN_CLASSES, PAPER_RULES
from haf_tui.datasets.model import Dataset, DatasetError
from haf_tui.datasets.preprocess import Preprocess
from haf_tui.datasets.readers import (
    FORMATS,
    Record,
    decode_bytes,
    file_format,
    parquet_records,
    text_records,
)
from haf_tui.datasets.validation import (
    BAD_LABEL,
    FILTER_NOT_SAMPLED,
    RowValidator,
    SkippedRow,
    excerpt,
)
from haf_tui.defaults import SAMPLE_SEED
from haf_tui.store.records import InstanceRecord

DEFAULT_SAMPLE: Final = 1024
"""Instances drawn per dataset (the paper's)."""
DEFAULT_SEED: Final = SAMPLE_SEED
"""The sample's seed (the reference's ``random_state``)."""


@dataclass(frozen=True)
class PaperDataset:
    """One of the paper's datasets: names, Hub source, preprocessing, and the size of the
    preprocessed population the paper sampled from (``paper_population``: recovered from the
    paper's samples, whose indices are exactly the seed-17 draw from that many rows)."""

    key: str
    title: str
    hub: HubSource
    preprocess: preprocess.Preprocess
    paper_population: int
    description: str
    file_hint: str = ""
    every_post: Preprocess | None = None
    """The preprocessing of a run that evaluates every post (the rationales suite without HAF);
    None: the paper's selection either way."""

    def aliases(self) -> set[str]:
        """Names this dataset answers to (case, spaces, dashes and underscores ignored)."""
        return {_norm(self.key), _norm(self.title), *(_norm(a) for a in _EXTRA.get(self.key, ()))}


_EXTRA: Final = {
    "hate_explain": ("hatexplain",),
    "real_toxicity_prompts": ("rtp",),
    "implicit_toxicity": ("implicit-toxicity",),
}

PAPER_DATASETS: Final[tuple[PaperDataset, ...]] = (
    PaperDataset(
        key="civil_comments",
        title="CivilComments",
        hub=HubSource(
            "google/civil_comments",
            "fd8a8ed30121358918ca5557f52fd3073321f9ec",  # "Convert dataset to Parquet (#4)"
            ("data/train-*.parquet",),
        ),
        preprocess=preprocess.civil_comments,
        paper_population=37705,
        description="online comments scored by crowd raters (toxicity, identity attack, ...)",
    ),
    PaperDataset(
        key="hate_explain",
        title="HateXplain",
        hub=HubSource(
            "Hate-speech-CNERG/hatexplain",
            "refs/convert/parquet",  # a branch: the repo's main holds only a loading script
            ("plain_text/train/*.parquet", "plain_text/*-train*.parquet"),
        ),
        preprocess=preprocess.hate_explain,
        every_post=preprocess.hate_explain_every_post,
        paper_population=6696,
        description="Twitter and Gab posts with per-annotator labels, targets and rationales",
        file_hint="or Data/dataset.json with post_id_divisions.json beside it, from "
        "github.com/hate-alert/HateXplain",
    ),
    PaperDataset(
        key="real_toxicity_prompts",
        title="RealToxicityPrompts",
        hub=HubSource(
            "allenai/real-toxicity-prompts",
            "88a5d7954c54f31e153959c2db98e15cf5cbec01",  # prompts.jsonl as uploaded (d3a6507)
            ("prompts.jsonl",),
        ),
        preprocess=preprocess.real_toxicity_prompts,
        paper_population=24339,
        description="web sentence prompts and continuations with Perspective scores",
    ),
    PaperDataset(
        key="implicit_toxicity",
        title="Implicit Toxicity",
        hub=HubSource(
            "jiaxin-wen/Implicit-Toxicity",
            "31aae750c0ac578e71d3e6b8afd390f285f50792",
            ("train/aug-train.json",),
        ),
        preprocess=preprocess.implicit_toxicity,
        paper_population=2866,
        description="LLM responses to contexts, human-labelled implicitly toxic or not",
    ),
    PaperDataset(
        key="toxigen",
        title="ToxiGen",
        hub=HubSource(
            "toxigen/toxigen-data",
            "6bb639dfe43e936559ee6556e921d2e520e52d62",  # "Delete Legacy Files (#22)"
            ("annotated/train-*.parquet",),
            gated=True,
        ),
        preprocess=preprocess.toxigen,
        paper_population=1764,
        description="machine-generated statements about 13 groups, human toxicity 1-5",
    ),
)


def _norm(name: str) -> str:
    return re.sub(r"[\s_\-]+", "", name.lower())


def paper_datasets() -> list[PaperDataset]:
    """The paper's datasets, in the paper's order."""
    return list(PAPER_DATASETS)


def find_paper_dataset(name: str) -> PaperDataset | None:
    """The paper dataset ``name`` refers to (key, title or alias), or None."""
    wanted = _norm(name)
    return next((d for d in PAPER_DATASETS if wanted in d.aliases()), None)


def paper_dataset(name: str) -> PaperDataset:
    """The paper dataset ``name`` refers to (DatasetError listing the known ones)."""
    found = find_paper_dataset(name)
    if found is None:
        known = ", ".join(d.key for d in PAPER_DATASETS)
        raise DatasetError(f"no paper dataset {name!r} (known: {known})")
    return found


def _in_folder(folder: Path, patterns: tuple[str, ...]) -> list[Path]:
    """The files of a folder the Hub patterns match, read from the folder's level down
    (``annotated/train-*.parquet`` in ``annotated/`` is ``train-*.parquet``); else every
    dataset file in it."""
    depth = max(p.count("/") for p in patterns)
    for skip in range(depth + 1):
        tails = tuple("/".join(p.split("/")[skip:]) for p in patterns if p.count("/") >= skip)
        found = matching_files(folder, tails)
        if found:
            return found
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in FORMATS)


def _expand(spec: PaperDataset, files: list[str | Path]) -> list[Path]:
    """Given files, and inside given folders the files the Hub patterns match."""
    paths: list[Path] = []
    for item in files:
        path = Path(item).expanduser()
        if path.is_dir():
            found = _in_folder(path, spec.hub.patterns)
            if not found:
                raise DatasetError(f"no {spec.title} files in folder {path}")
            paths += found
        elif path.is_file():
            paths.append(path)
        else:
            raise DatasetError(f"dataset file not found: {path}")
    return paths


def _hatexplain_json(path: Path, text: str) -> Iterator[tuple[int, Record]]:
    """HateXplain's original ``dataset.json``: the train posts, in the order of
    ``post_id_divisions.json`` (beside it), as the reference reads them."""
    divisions = path.with_name("post_id_divisions.json")
    if not divisions.is_file():
        raise DatasetError(
            f"{path} is HateXplain's dataset.json: put post_id_divisions.json beside it "
            "(it names the train split)"
        )
    posts = json.loads(text)
    try:
        train = json.loads(divisions.read_text(encoding="utf-8"))["train"]
    except (KeyError, ValueError) as exc:
        raise DatasetError(f"{divisions} has no train list") from exc
    for number, post_id in enumerate(train, start=1):
        if post_id in posts:
            yield number, {"post_id": post_id, **posts[post_id]}


def source_rows(spec: PaperDataset, paths: list[Path]) -> Iterator[tuple[int, Record]]:
    """The rows of a dataset's files, in file order, numbered from 1 across files."""
    number = 0
    for path in paths:
        if file_format(path) == "parquet":
            records: Iterator[tuple[int, Record]] = parquet_records(path)
        else:
            text, _ = decode_bytes(path.read_bytes(), path)
            if spec.key == "hate_explain" and path.suffix == ".json" and text.lstrip()[:1] == "{":
                records = _hatexplain_json(path, text)
            else:
                records = text_records(path, file_format(path), text)
        for _, record in records:
            number += 1
            yield number, record


def load_paper_dataset(
    name: str,
    *,
    files: list[str | Path] | None = None,
    n: int = DEFAULT_SAMPLE,
    seed: int = DEFAULT_SEED,
    cache_dir: str | Path | None = None,
    offline: bool | None = None,
    dataset_name: str | None = None,
    selection: Literal["paper", "every_post"] = "paper",
) -> Dataset:
    """A seeded sample of a paper dataset, preprocessed as the paper did.

    The files come from ``files`` (paths or folders, shaped like the Hub's) or else from the
    Hub through its cache (offline: the cache only; DatasetError saying what to download).
    Instance ids are the paper's indices into the preprocessed rows, so a sample with the
    paper's seed reproduces ``../shared/data/haf-paper-samples``. ``selection="every_post"``:
    every post instead of the paper's preprocessing (HateXplain, for the rationales suite;
    the other datasets have only the paper's), its unusable posts stored as skipped rows.
    An instance's label is its gold by the paper's rule (:data:`~haf_tui.datasets.labels.
    PAPER_RULES`; every HateXplain post: its annotators' class, read by
    :data:`~haf_tui.datasets.labels.HATEXPLAIN_CLASSES`), the score as read in
    ``extra["label_raw"]``; the rule is in the meta.
    """
    spec = paper_dataset(name)
    if n <= 0:
        raise DatasetError(f"a sample needs at least one instance, not {n}")
    if files:
        paths = _expand(spec, files)
        origin: dict[str, object] = {"files": [str(p) for p in paths]}
    else:
        paths = fetch(
            spec.title,
            spec.key,
            spec.hub,
            cache_dir=cache_dir,
            offline=offline,
            file_hint=spec.file_hint,
        )
        origin = {"repo_id": spec.hub.repo_id, "revision": spec.hub.revision}
        origin["files"] = [p.name for p in paths]
    every_post = selection == "every_post" and spec.every_post is not None
    preprocessing = spec.every_post if every_post and spec.every_post else spec.preprocess
    selection_made = preprocessing(source_rows(spec, paths))
    if every_post:
        origin["selection"] = "every_post"
    population = len(selection_made.candidates)
    if population == 0:
        raise DatasetError(f"{spec.title}: no rows are left after the paper's preprocessing")
    indices = sample_indices(population, n, seed)
    validator = RowValidator(max_chars=preprocess.MAX_CHARS, label_required=True)
    instances: list[InstanceRecord] = []
    skipped: list[SkippedRow] = list(selection_made.skipped)
    rule = HATEXPLAIN_CLASSES if every_post else PAPER_RULES[spec.key]
    for index in indices:
        c = selection_made.candidates[index]
        label, problem = rule.stored(c.label)
        if every_post and problem is None:
            label = c.label  # (the class itself: the rationales report counts by it)
        reason = (
            f"{BAD_LABEL}: {problem}" if problem else validator.reason(c.text, str(index), label)
        )
        if reason:
            skipped.append(SkippedRow(c.row, reason, excerpt(c.text)))
            continue
        extra = {"source_index": index, "source_row": c.row, "score": c.score, **c.extra}
        instances.append(
            InstanceRecord(
                instance_id=str(index),
                position=len(instances),
                text=c.text,
                label=label,
                extra={**extra, "label_raw": c.label},
            )
        )
    filtered = dict(selection_made.filtered)
    if population > len(indices):
        filtered[FILTER_NOT_SAMPLED] = population - len(indices)
    sample = {"seed": seed, "n": len(indices), "population": population, "indices": indices}
    key = json.dumps([spec.key, origin, sample, rule.key()], sort_keys=True).encode()
    meta = {
        "kind": "paper",
        "selection": "every_post" if every_post else "paper",
        "paper_dataset": spec.key,
        "title": spec.title,
        "origin": origin,
        "n_rows": selection_made.n_rows,
        "filtered": filtered,
        "paper_population": spec.paper_population,
        "matches_paper": population == spec.paper_population,
        "sample": sample,
        "label_rule": rule.model_dump(),
    }
    return Dataset(
        f"{spec.key}-n{len(indices)}-s{seed}-{hashlib.sha256(key).hexdigest()[:10]}",
        dataset_name or spec.key,
        f"hf://datasets/{spec.hub.repo_id}@{spec.hub.revision}" if not files else str(paths[0]),
        instances,
        skipped,
        meta,
    )
