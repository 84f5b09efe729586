"""``haf datasets``' parser, apart from what the commands do (:mod:`haf_tui.cli.dataset_commands`):
building it imports no dataset reader or store module, so ``haf --help`` stays light."""

from __future__ import annotations

import argparse

from haf_tui.defaults import SAMPLE_SEED as DEFAULT_SEED


def label_threshold(text: str) -> float:
    """``--label-threshold``'s value: a finite number (``nan``, ``inf``, ``1e400``: one line)."""
    from haf_tui.datasets.labels import LabelError, parse_threshold

    try:
        return parse_threshold(text)
    except LabelError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--label-threshold ")) from None


def add_column_options(parser: argparse.ArgumentParser) -> None:
    """A file's text and label columns and its label rule: ``haf datasets import``'s and
    ``haf run --file``'s options (one declaration, the same meaning in both)."""
    parser.add_argument(
        "--text-column", help="the column holding the text (default: guessed from the names)"
    )
    parser.add_argument(
        "--label-column",
        help="the column holding labels (rows without: skipped; default: label, given_label, "
        "or a column such as is_toxic, toxic, toxicity, hate, class whose values are labels)",
    )
    parser.add_argument(
        "--label-threshold",
        type=label_threshold,
        metavar="T",
        help="the label column is a score: T or more is toxic (default when it is a score "
        "in 0..1: 0.5)",
    )
    parser.add_argument(
        "--label-map",
        action="append",
        default=[],
        metavar="toxic=A,B",
        help="the label values that mean toxic (toxic=A,B) or non-toxic (non-toxic=C); the "
        "others are the other side (repeatable)",
    )


def add_datasets_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``datasets`` sub-command and its own sub-commands."""
    datasets = commands.add_parser(
        "datasets", help="list, import, show, preview or remove datasets"
    )
    sub = datasets.add_subparsers(dest="datasets_command", required=True)
    sub.add_parser("list", help="stored datasets, and the paper's datasets")

    show = sub.add_parser("show", help="a stored dataset: counts, first rows, skipped rows")
    show.add_argument("name", help="a stored dataset's name, id or id prefix")
    show.add_argument("--rows", type=int, default=5, help="how many first rows")
    show.add_argument("--skipped", action="store_true", help="list every skipped row")

    remove = sub.add_parser("remove", help="remove a stored dataset (kept while runs use it)")
    remove.add_argument("name", help="a stored dataset's name, id or id prefix")
    remove.add_argument(
        "--with-runs", action="store_true", help="delete the runs that evaluated it too"
    )

    preview = sub.add_parser("preview", help="a file's first rows and its guessed columns")
    preview.add_argument("path", help="the file (.csv .tsv .jsonl .json .parquet)")
    preview.add_argument("--rows", type=int, default=10, help="how many first rows")
    preview.add_argument("--encoding", help="read the file with this encoding")

    imp = sub.add_parser("import", help="store a file, paper samples, or a paper dataset")
    imp.add_argument(
        "source",
        help="a file (.csv .tsv .jsonl .json .parquet), a folder of paper-sample CSVs, a "
        "paper dataset's name (haf datasets list), or a method's own format by its name, with "
        "--file (acorn: ACORN.jsonl)",
    )
    imp.add_argument("--name", help="the stored name (default: from the file or dataset)")
    imp.add_argument(
        "--file",
        action="append",
        default=[],
        help="with a paper dataset's name: its downloaded file(s) or folder (repeatable); "
        "with a method's own format: its file",
    )
    add_column_options(imp)
    imp.add_argument("--id-column", help="the column holding instance ids (default: row number)")
    imp.add_argument(
        "--extra-column", action="append", default=[], help="a column kept with each instance"
    )
    imp.add_argument("--encoding", help="read the file with this encoding (default: detected)")
    imp.add_argument("--max-chars", type=int, default=20_000, help="longer texts are skipped")
    imp.add_argument("--sample", type=int, help="keep a seeded sample of N (paper: 1024)")
    imp.add_argument("--seed", type=int, default=DEFAULT_SEED, help="the sample's seed")
