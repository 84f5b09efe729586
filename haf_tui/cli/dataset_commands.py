"""``haf datasets``: ``list``, ``import``, ``show``, ``preview`` and ``remove`` of datasets.

A dataset's name, source, columns and values come from a user or a file: they are printed as
text (a cell of ``outside_text.TextTable``, ``markup=False`` or escaped; control characters
shown as escapes), never read as Rich markup (a dataset named ``[/]`` once made every listing
of the database fail)."""

from __future__ import annotations

import argparse
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from haf_tui.cli.dataset_parser import add_datasets_parser as add_datasets_parser
from haf_tui.cli.outside_text import TextTable as Table
from haf_tui.datasets import (
    ColumnMapping,
    DatasetError,
    DatasetRow,
    find_stored,
    import_dataset,
    list_datasets,
    load_source,
    paper_datasets,
    preview_file,
    stated_mapping,
)
from haf_tui.datasets.labels import rule_of
from haf_tui.methods.declared_parts import dataset_formats
from haf_tui.store.dataset_catalog import (
    label_counts,
    remove_dataset,
    runs_of_dataset,
    skip_summary,
    skipped_rows,
)
from haf_tui.store.db import Store, default_db_path, open_snapshot, open_store
from haf_tui.vocabulary import shown_text

TEXT_PREVIEW = 100


def _mapping(args: argparse.Namespace) -> ColumnMapping | None:
    return stated_mapping(
        args.source,
        text=args.text_column,
        id=args.id_column,
        label=args.label_column,
        extra=tuple(args.extra_column),
        encoding=args.encoding,
    )


def import_command(args: argparse.Namespace, store: Store, console: Console) -> int:
    """Read, validate and store the dataset(s) a source names."""
    started = time.perf_counter()
    datasets = load_source(
        args.source,
        files=args.file,
        mapping=_mapping(args) if Path(args.source).is_file() else None,
        name=args.name,
        encoding=args.encoding,
        max_chars=args.max_chars,
        sample=args.sample,
        seed=args.seed,
        label_threshold=args.label_threshold,
        label_map=tuple(args.label_map),
        formats=dataset_formats(),
    )
    for dataset in datasets:
        row, new = import_dataset(store, dataset)
        skipped = f", {row.n_skipped} rows skipped" if row.n_skipped else ""
        state = "imported" if new else "already stored"
        console.print(
            f"{state} [bold]{escape(shown_text(row.name))}[/] ({row.dataset_id}): "
            f"{row.n_instances} instances{skipped}",
            highlight=False,
            soft_wrap=True,
        )
        for line in label_lines(dataset.meta, label_counts(store, row.dataset_id)):
            console.print(line, highlight=False, soft_wrap=True, markup=False)
        if dataset.meta.get("matches_paper") is False:
            console.print(
                f"[yellow]{dataset.meta['sample']['population']} rows after preprocessing, the "
                f"paper had {dataset.meta['paper_population']}[/]: the sample differs from the "
                "paper's",
                soft_wrap=True,
            )
    console.print(f"done in {time.perf_counter() - started:.2f} s; see: haf datasets show NAME")
    return 0


def list_command(store: Store | None, console: Console) -> int:
    """The stored datasets, then the paper's datasets and whether each is stored."""
    rows = list_datasets(store) if store is not None else []
    table = Table(title="stored datasets")
    for column in ("name", "id", "instances", "skipped", "kind", "source"):
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(
            row.name,
            row.dataset_id,
            str(row.n_instances),
            str(row.n_skipped),
            row.kind,
            row.source,
        )
    console.print(table if rows else "no datasets stored yet")
    stored = {r.meta.get("paper_dataset"): r.kind for r in rows if r.kind == "paper"}
    samples = {r.meta.get("paper_dataset") for r in rows if r.kind == "paper-sample"}
    paper = Table(title="the paper's datasets (haf datasets import NAME)")
    for column in ("name", "title", "hub repository @ revision", "stored"):
        paper.add_column(column, overflow="fold")
    for spec in paper_datasets():
        paper.add_row(
            spec.key,
            spec.title,
            f"{spec.hub.repo_id} @ {spec.hub.revision[:12]}",
            "yes" if spec.key in stored else "its paper sample" if spec.key in samples else "",
        )
    console.print(paper)
    return 0


def _describe(row: DatasetRow) -> list[str]:
    meta = row.meta
    lines = [
        f"kind {row.kind} · source {row.source} · created {row.created_at:%Y-%m-%d %H:%M}",
        f"{row.n_instances} instances · {row.n_skipped} rows skipped",
    ]
    if meta.get("encoding") or meta.get("mapping"):
        mapping = meta.get("mapping") or {}
        shown = ", ".join(f"{k}={v}" for k, v in mapping.items() if v not in (None, [], ()))
        lines.append(
            f"encoding {meta.get('encoding') or '-'} · format {meta.get('format')} "
            f"· columns {shown}"
        )
    origin = meta.get("origin") or {}
    if origin.get("repo_id"):
        lines.append(f"from the Hub: {origin['repo_id']} @ {origin['revision']}")
    sample = meta.get("sample") or {}
    if sample:
        of = f" of {sample['population']}" if sample.get("population") else ""
        seed = f", seed {sample['seed']}" if "seed" in sample else ""
        lines.append(f"sample: {sample.get('n')}{of}{seed}")
        if "seed_verified" in sample:
            verdict = "match" if sample["seed_verified"] else "do NOT match"
            lines.append(f"its indices {verdict} the reference's seed-{sample['seed']} draw")
    return lines


def label_lines(meta: dict[str, Any], counts: Mapping[str | None, int]) -> list[str]:
    """How a dataset's labels became gold: its rule and how many instances have each gold
    (or a warning: no gold for a label column stored before label rules, or none at all)."""
    rule = rule_of(meta)
    toxic, non_toxic = counts.get("toxic", 0), counts.get("non-toxic", 0)
    lines = [f"label note: {meta['label_note']}"] if meta.get("label_note") else []
    if rule is None:
        if any(label is not None and n for label, n in counts.items()):
            lines.append(
                "labels: no label rule stored (imported before label rules): they are not "
                "gold, the reports of gold labels count none; import the file again under a new "
                "--name"
            )
        return lines
    rest = sum(counts.values()) - toxic - non_toxic
    column = (meta.get("mapping") or {}).get("label")
    lines.append(f"labels: {rule.describe()}" + (f", from column {column!r}" if column else ""))
    lines.append(
        f"gold: {toxic} toxic, {non_toxic} non-toxic" + (f", {rest} without gold" if rest else "")
    )
    return lines


def _excerpt(text: Any) -> str:
    value = " ".join(str(text).split())
    return value if len(value) <= TEXT_PREVIEW else value[: TEXT_PREVIEW - 1] + "…"


def show_command(args: argparse.Namespace, store: Store, console: Console) -> int:
    """A stored dataset: what it is, its first rows, and every skip reason."""
    row = find_stored(store, args.name)
    name = escape(shown_text(row.name))
    console.print(f"[bold]{name}[/] ({escape(row.dataset_id)})", highlight=False, soft_wrap=True)
    for line in _describe(row):
        console.print(shown_text(line), highlight=False, soft_wrap=True, markup=False)
    for line in label_lines(row.meta, label_counts(store, row.dataset_id)):
        console.print(line, highlight=False, soft_wrap=True, markup=False)
    filtered = row.meta.get("filtered") or {}
    if filtered:
        table = Table("reason", "rows", title="left out by the paper's preprocessing")
        for reason, n in sorted(filtered.items(), key=lambda kv: -kv[1]):
            table.add_row(str(reason), str(n))
        console.print(table)
    instances = store.instances(row.dataset_id, args.rows)
    table = Table("position", "id", "label", "text", title=f"first {len(instances)} instances")
    for inst in instances:
        table.add_row(
            str(inst.position),
            inst.instance_id,
            inst.label or "",
            _excerpt(inst.text),
        )
    console.print(table)
    summary = skip_summary(store, row.dataset_id)
    if summary:
        table = Table("reason", "rows", "first rows", title="skipped rows")
        for reason, n, first in summary:
            more = ", …" if n > len(first) else ""
            table.add_row(reason, str(n), ", ".join(map(str, first)) + more)
        console.print(table)
    else:
        console.print("no rows skipped")
    if args.skipped and summary:
        table = Table("row", "reason", "text", title="every skipped row")
        for number, reason, text in skipped_rows(store, row.dataset_id):
            table.add_row(str(number), reason, text or "")
        console.print(table)
    return 0


def preview_command(args: argparse.Namespace, console: Console) -> int:
    """A file's first rows, its encoding, and the columns guessed for each role."""
    preview = preview_file(args.path, rows=args.rows, encoding=args.encoding)
    mapping = preview.mapping
    console.print(
        f"{preview.path}: {preview.format}, encoding {preview.encoding or '-'}, "
        f"{rows_said(preview.n_rows, preview.n_rows_exact)}",
        highlight=False,
        soft_wrap=True,
        markup=False,
    )
    console.print(
        "guessed columns: "
        + (
            f"text={mapping.text}, id={mapping.id or '-'}, label={mapping.label or '-'}"
            if mapping
            else "none (use --text-column)"
        ),
        highlight=False,
        soft_wrap=True,
        markup=False,
    )
    if preview.label is not None:
        console.print(preview.label.line(), highlight=False, soft_wrap=True, markup=False)
    if preview.label_note is not None:
        console.print(preview.label_note, highlight=False, soft_wrap=True, markup=False)
    table = Table(title=f"first {len(preview.rows)} rows")
    for column in preview.columns:
        table.add_column(str(column))
    for record in preview.rows:
        table.add_row(*(_excerpt(record.get(c, "")) for c in preview.columns))
    console.print(table)
    return 0


def remove_command(args: argparse.Namespace, store: Store, console: Console) -> int:
    """Remove a stored dataset; refused in one line while runs use it, unless --with-runs."""
    row = find_stored(store, args.name)
    runs = runs_of_dataset(store, row.dataset_id)
    if runs and not args.with_runs:
        shown = ", ".join(runs[:3]) + (", …" if len(runs) > 3 else "")
        raise ValueError(
            f"dataset {row.name!r} ({row.dataset_id}) is used by {len(runs)} run(s) ({shown}): "
            "kept; pass --with-runs to delete them with it"
        )
    deleted = remove_dataset(store, row.dataset_id, with_runs=args.with_runs)
    runs_said = f"; deleted its {len(deleted)} run(s): {', '.join(deleted)}" if deleted else ""
    console.print(
        f"removed dataset {row.name} ({row.dataset_id}): {row.n_instances} instances{runs_said}",
        highlight=False,
        soft_wrap=True,
        markup=False,
    )
    return 0


def rows_said(n_rows: int, exact: bool) -> str:
    """``12 rows``, or ``about 1,079,000 rows`` (estimated: a preview reads the start only)."""
    return f"{n_rows} rows" if exact else f"about {float(f'{n_rows:.3g}'):,.0f} rows (estimated)"


def datasets_command(args: argparse.Namespace, console: Console) -> int:
    """Dispatch ``haf datasets SUB``: import and remove write, the others read
    (``--snapshot`` works)."""
    sub = args.datasets_command
    try:
        if sub == "preview":
            return preview_command(args, console)
        if sub in ("import", "remove"):
            with open_store(args.db) as store:
                command = import_command if sub == "import" else remove_command
                return command(args, store, console)
    except MemoryError:  # (one line, not a traceback: the store's transaction rolled back)
        what = args.path if sub == "preview" else getattr(args, "source", None) or args.name
        raise DatasetError(
            f"not enough memory to {sub} {what}: import a part of it, or run with more memory"
        ) from None
    db_path = Path(args.db).expanduser() if args.db else default_db_path()
    if sub == "list" and not db_path.is_file():
        return list_command(None, console)
    with open_snapshot(args.db) if args.snapshot else open_store(args.db, read_only=True) as store:
        if sub == "list":
            return list_command(store, console)
        return show_command(args, store, console)
