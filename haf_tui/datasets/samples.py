"""The paper's own samples: CSV files of ``index, input_text, given_label`` (one per dataset,
as in ``../shared/data/haf-paper-samples/processed_NAME.csv``), imported as they are so a run
evaluates the exact instances of the paper.

The dataset is named ``paper-sample:NAME`` (``NAME`` from the file name); instance ids are the
paper's indices. When ``NAME`` is one of the paper's datasets, the indices are checked against
the seed-17 draw the reference makes from that dataset's preprocessed rows.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Final

from haf_tui.datasets.file_rows import load_file
from haf_tui.datasets.files import ColumnMapping, sample_indices
from haf_tui.datasets.labels import PAPER_RULES
from haf_tui.datasets.model import Dataset, DatasetError
from haf_tui.datasets.paper import DEFAULT_SEED, find_paper_dataset
from haf_tui.datasets.streams import read_table

SAMPLE_COLUMNS: Final = ("index", "input_text", "given_label")
SAMPLE_PREFIX: Final = "paper-sample:"
SAMPLE_MAPPING: Final = ColumnMapping(text="input_text", id="index", label="given_label")


def is_paper_sample(path: str | Path) -> bool:
    """Whether a file is a CSV with exactly the paper samples' columns."""
    file_path = Path(path)
    if file_path.suffix.lower() != ".csv" or not file_path.is_file():
        return False
    try:
        return tuple(read_table(file_path, limit=1).columns) == SAMPLE_COLUMNS
    except DatasetError:
        return False


def sample_key(path: str | Path) -> str:
    """The dataset a sample file is of: its name without ``processed_`` and the suffix."""
    return re.sub(r"^processed_", "", Path(path).stem)


SAMPLES_FOLDER: Final = Path("..") / "shared" / "data" / "haf-paper-samples"
"""Where the paper's samples lie beside a checkout (``$HAF_PAPER_SAMPLES`` overrides)."""


def paper_sample_file(key: str) -> Path:
    """The paper-sample CSV of dataset ``key`` (``processed_KEY.csv``): in
    ``$HAF_PAPER_SAMPLES``, else in ``../shared/data/haf-paper-samples`` of the working folder
    or of the checkout; a one-line error when it is in none of them."""
    name = f"processed_{key}.csv"
    override = os.environ.get("HAF_PAPER_SAMPLES")
    folders = (
        [Path(override).expanduser()]
        if override
        else [Path.cwd() / SAMPLES_FOLDER, Path(__file__).resolve().parents[2] / SAMPLES_FOLDER]
    )
    for folder in folders:
        if (folder / name).is_file():
            return (folder / name).resolve()
    raise DatasetError(
        f"no paper sample {SAMPLE_PREFIX}{key}: {name} is not in {folders[0]} "
        "(set HAF_PAPER_SAMPLES to the folder of the paper's samples, or haf datasets import it)"
    )


def paper_sample_files(folder: str | Path) -> list[Path]:
    """The paper-sample CSVs in a folder, sorted by name."""
    return [p for p in sorted(Path(folder).expanduser().glob("*.csv")) if is_paper_sample(p)]


def import_paper_sample(path: str | Path, *, name: str | None = None) -> Dataset:
    """A paper-sample CSV as a dataset named ``paper-sample:NAME`` (rows that cannot be
    evaluated are skipped with their reason, like any file's); its ``given_label`` becomes
    gold by the paper's rule for NAME (:data:`~haf_tui.datasets.labels.PAPER_RULES`), else
    by the rule its values call for."""
    file_path = Path(path).expanduser()
    table = read_table(file_path, limit=1)
    if tuple(table.columns) != SAMPLE_COLUMNS:
        raise DatasetError(
            f"{file_path} is not a paper sample: its columns are {', '.join(table.columns)}, "
            f"not {', '.join(SAMPLE_COLUMNS)}"
        )
    key = sample_key(file_path)
    base = load_file(
        file_path, SAMPLE_MAPPING, name=name or SAMPLE_PREFIX + key, label_rule=PAPER_RULES.get(key)
    )
    indices: list[int] = []
    instances = []
    for instance in base.instances:
        try:
            index = int(instance.instance_id)
        except ValueError:
            index = -1
        indices.append(index)
        raw = instance.extra.get("label_raw")
        extra = {
            "source_index": index,
            "paper_dataset": key,
            "score": _float(raw),
            "label_raw": raw,
        }
        instances.append(instance.model_copy(update={"extra": extra}))
    sample: dict[str, object] = {"n": len(instances), "indices": indices}
    spec = find_paper_dataset(key)
    if spec is not None:
        n_rows = len(base.instances) + len(base.skipped)
        drawn = sample_indices(spec.paper_population, n_rows, DEFAULT_SEED)
        sample |= {
            "seed": DEFAULT_SEED,
            "population": spec.paper_population,
            "seed_verified": drawn == indices,
        }
    digest = base.dataset_id.rsplit("-", 1)[-1]  # the file's content digest
    meta = {**base.meta, "kind": "paper-sample", "paper_dataset": key, "sample": sample}
    dataset_id = f"paper-sample-{re.sub(r'[^A-Za-z0-9_.-]+', '-', key)}-{digest}"
    return Dataset(dataset_id, base.name, base.source, instances, base.skipped, meta)


def _float(value: object) -> float | None:
    try:
        return float(str(value)) if value is not None else None
    except ValueError:
        return None
