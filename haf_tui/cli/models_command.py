"""``haf models``: the GGUF models a run can use, as the new-run wizard lists them, and where
each one is: the embedded default's own file (inside its Python package), then the files in
the model folders, and which of those folders exist (issue 34 §9)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markup import escape

from haf_tui.cli.fit_table import Column, fit_table
from haf_tui.defaults import EMBEDDED_MODEL_PACKAGE, model_search_dirs
from haf_tui.inference.model_catalog import ModelEntry, discover_models

FILE_FOLD_WIDTH = 36
"""A model's file name longer than this may be folded onto more lines to keep the others."""
MODEL_COLUMNS = (
    Column("file", 0, shrink_to=FILE_FOLD_WIDTH, fold=True),
    Column("size", 1, justify="right"),
    Column("arch", 3),
    Column("quant", 2),
    Column("context", 5, justify="right"),
    Column("template", 4),
)
"""``haf models``' columns in display order; a narrow terminal keeps the lowest ranks."""


def shown_path(path: Path) -> str:
    """A file as ``--model`` takes it: relative to the working folder when inside it, else
    from ``~`` when inside the home folder, else absolute."""
    for base, prefix in ((Path.cwd(), ""), (Path.home(), "~/")):
        try:
            return prefix + str(path.resolve().relative_to(base.resolve()))
        except ValueError:
            continue
    return str(path)


def _row(entry: ModelEntry) -> tuple[str, ...]:
    name = entry.label if entry.embedded else shown_path(entry.path)
    info = entry.info
    if info is None:
        return (name, "error", "", "", "", "")
    return (
        name,
        f"{info.size_bytes / 2**20:.0f} MiB",
        info.architecture,
        info.quantization,
        str(info.context_length or "?"),
        "yes" if info.has_chat_template else "no",
    )


def folder_line(folders: list[Path]) -> str:
    """The folders searched, each marked when it does not exist (a folder named in the docs
    that is not there is said so, not left to be guessed)."""
    shown = [shown_path(folder) + ("" if folder.is_dir() else " (not there)") for folder in folders]
    return f"searched: {', '.join(shown)} ($HAF_MODELS_PATH adds folders)"


def models_command(console: Console) -> int:
    """The GGUF models a run can use, the embedded default first (metadata only), each with
    where its file is."""
    entries = discover_models()
    table, _ = fit_table("GGUF models", MODEL_COLUMNS, [_row(e) for e in entries], console.width)
    console.print(table)
    for entry in entries:
        if entry.info is None:
            name = entry.label if entry.embedded else shown_path(entry.path)
            console.print(f"{escape(name)}: {escape(entry.error or '')}", style="red")
    for entry in entries:
        if entry.embedded and entry.info is not None:  # its path whole, on a line of its own
            console.print(
                f"embedded default, inside the {EMBEDDED_MODEL_PACKAGE} package:", highlight=False
            )
            console.print(escape(shown_path(entry.path)), soft_wrap=True, highlight=False)
    console.print(escape(folder_line(model_search_dirs())), style="dim", highlight=False)
    console.print("--model takes a file's path", style="dim", highlight=False)
    return 0
