"""Datasets a run evaluates: the built-in sample, the paper's five datasets, the paper's own
samples, and local files; all stored once in the DuckDB file (``datasets``, ``instances``,
``skipped_rows``) so runs refer to instances by id.

Rows that cannot be evaluated are skipped with their reason, never silently
(:mod:`haf_tui.datasets.validation`). The calls a face (CLI, TUI wizard) needs:

- :func:`paper_datasets` — the paper's datasets (key, title, Hub repository and revision);
- :func:`preview_file` — a file's first rows, encoding and guessed :class:`ColumnMapping`;
- :func:`load_file` — a file read through a mapping; :func:`stream_file` — the same, its rows
  read as the store takes them (an import); :func:`sample_dataset` — a seeded sample;
- :func:`load_paper_dataset` — a paper dataset preprocessed and sampled (Hub cache or files);
- :func:`import_paper_sample` — one of the paper's sample CSVs;
- :func:`load_source` — any of those from one name or path (``haf datasets import``);
- :func:`import_dataset` / :func:`store_dataset` — store one; :func:`list_datasets`,
  :func:`find_stored`, :func:`load_stored` — the stored ones.
"""

from haf_tui.datasets.file_rows import load_file, stream_file
from haf_tui.datasets.files import (
    ColumnMapping,
    FilePreview,
    guess_mapping,
    preview_file,
    sample_dataset,
    sample_indices,
    stated_mapping,
)
from haf_tui.datasets.importing import load_source
from haf_tui.datasets.model import (
    BUILTIN_SAMPLE_ID,
    DEMO_TEXTS_ID,
    Dataset,
    DatasetError,
    StreamedDataset,
    builtin_sample,
    demo_texts,
)
from haf_tui.datasets.paper import (
    DEFAULT_SAMPLE,
    DEFAULT_SEED,
    PaperDataset,
    find_paper_dataset,
    load_paper_dataset,
    paper_dataset,
    paper_datasets,
)
from haf_tui.datasets.samples import (
    SAMPLE_PREFIX,
    import_paper_sample,
    is_paper_sample,
    paper_sample_file,
    paper_sample_files,
)
from haf_tui.datasets.stored import (
    DatasetRow,
    find_stored,
    import_dataset,
    list_datasets,
    load_stored,
    store_dataset,
)
from haf_tui.datasets.validation import SKIP_REASONS, SkippedRow

__all__ = [
    "BUILTIN_SAMPLE_ID",
    "DEFAULT_SAMPLE",
    "DEFAULT_SEED",
    "DEMO_TEXTS_ID",
    "SAMPLE_PREFIX",
    "SKIP_REASONS",
    "ColumnMapping",
    "Dataset",
    "DatasetError",
    "DatasetRow",
    "FilePreview",
    "PaperDataset",
    "SkippedRow",
    "StreamedDataset",
    "builtin_sample",
    "demo_texts",
    "find_paper_dataset",
    "find_stored",
    "guess_mapping",
    "import_dataset",
    "import_paper_sample",
    "is_paper_sample",
    "list_datasets",
    "load_file",
    "load_paper_dataset",
    "load_source",
    "load_stored",
    "paper_dataset",
    "paper_datasets",
    "paper_sample_file",
    "paper_sample_files",
    "preview_file",
    "sample_dataset",
    "sample_indices",
    "stated_mapping",
    "store_dataset",
    "stream_file",
]
