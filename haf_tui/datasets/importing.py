"""One entry point for "import this": a file, a folder of paper samples, a paper dataset
by name (from the Hub, or from ``files`` shaped like the Hub's), or a method's own format
(:mod:`haf_tui.datasets.formats`: by its name with its file, or that file alone)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from haf_tui.datasets.file_rows import sample_file, stream_file
from haf_tui.datasets.files import ColumnMapping, sample_dataset
from haf_tui.datasets.formats import DatasetFormat, format_for
from haf_tui.datasets.model import Dataset, DatasetError, StreamedDataset
from haf_tui.datasets.paper import (
    DEFAULT_SAMPLE,
    DEFAULT_SEED,
    find_paper_dataset,
    load_paper_dataset,
    paper_datasets,
)
from haf_tui.datasets.samples import import_paper_sample, is_paper_sample, paper_sample_files
from haf_tui.datasets.validation import DEFAULT_MAX_CHARS


def load_source(
    source: str,
    *,
    files: list[str] | None = None,
    mapping: ColumnMapping | None = None,
    name: str | None = None,
    encoding: str | None = None,
    max_chars: int = DEFAULT_MAX_CHARS,
    sample: int | None = None,
    seed: int = DEFAULT_SEED,
    label_threshold: float | None = None,
    label_map: tuple[str, ...] = (),
    formats: Sequence[DatasetFormat] = (),
) -> list[Dataset | StreamedDataset]:
    """The dataset(s) ``source`` names, read and validated (not stored yet).

    - a paper dataset's name (``civil_comments``, ``HateXplain``, ...): its paper
      preprocessing and a seeded sample (``sample``, default 1024) from the Hub's cache, or
      from ``files``;
    - a paper-sample CSV (``index, input_text, given_label``): ``paper-sample:NAME``;
    - a folder: every paper-sample CSV in it;
    - a method's own format (``formats``, the registry's: the judge's ``acorn``) by its name
      with ``files`` (its file, or a folder holding it), or a file of its shape given without
      ``mapping``;
    - any other file: its rows through ``mapping`` (guessed when None), its labels through
      the rule ``label_threshold`` or ``label_map`` states (else guessed), optionally sampled;
      unsampled, a :class:`StreamedDataset`: its rows read as they are stored.
    """
    path = Path(source).expanduser()
    stated = label_threshold is not None or bool(label_map)
    if stated and not path.is_file():
        raise DatasetError(
            "--label-threshold and --label-map go with a file: the paper's datasets have "
            "their own rule (haf datasets show NAME)"
        )
    own = format_for(formats, source, None)
    if own is not None and (files or not path.exists()):
        paths = [Path(f) for f in files or []]
        read = own.read(paths, name=name, encoding=encoding, max_chars=max_chars)
        return [sample_dataset(read, sample, seed) if sample else read]
    spec = None if path.exists() and not files else find_paper_dataset(source)
    if spec is not None:
        return [
            load_paper_dataset(
                spec.key,
                files=list(files or []),
                n=sample or DEFAULT_SAMPLE,
                seed=seed,
                dataset_name=name,
            )
        ]
    if files:
        raise DatasetError(f"--file goes with a paper dataset's name, not with {source!r}")
    if path.is_dir():
        found = paper_sample_files(path)
        if not found:
            raise DatasetError(
                f"no paper-sample CSV (index, input_text, given_label) in folder {path}: "
                "import other files one by one"
            )
        if name and len(found) > 1:
            raise DatasetError("--name needs a single file, not a folder")
        return [import_paper_sample(p, name=name) for p in found]
    if path.is_file():
        if is_paper_sample(path) and mapping is None and not stated:
            dataset = import_paper_sample(path, name=name)
        elif mapping is None and not stated and (own := format_for(formats, "", path)):
            dataset = own.read([path], name=name, encoding=encoding, max_chars=max_chars)
        else:
            options: dict[str, Any] = {
                "name": name,
                "encoding": encoding,
                "max_chars": max_chars,
                "label_threshold": label_threshold,
                "label_map": label_map,
            }
            # (read as it is stored, or only the drawn instances kept: never all of them)
            if sample:
                return [sample_file(path, mapping, n=sample, seed=seed, **options)]
            return [stream_file(path, mapping, **options)]
        return [sample_dataset(dataset, sample, seed) if sample else dataset]
    known = ", ".join(d.key for d in paper_datasets())
    raise DatasetError(f"no file or paper dataset {source!r} (paper datasets: {known})")
