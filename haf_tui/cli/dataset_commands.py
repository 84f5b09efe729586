"""``haf datasets``: ``list``, ``import``, ``show`` and ``preview`` of datasets."""

from __future__ import annotations

import argparse
import time
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from haf_tui.cli.dataset_parser import add_datasets_parser as add_datasets_parser
from haf_tui.cli.outside_text import TextTable as Table
from haf_tui.datasets import (
    ColumnMapping,
    DatasetRow,
    find_stored,
    import_dataset,
    list_datasets,
    load_source,
    paper_datasets,
    preview_file,
)
from haf_tui.datasets.labels import rule_of
from haf_tui.methods.declared_parts import dataset_formats
from haf_tui.store.dataset_catalog import label_counts, skip_summary, skipped_rows
from haf_tui.store.db import Store, default_db_path, open_snapshot, open_store
from haf_tui.vocabulary import shown_text

TEXT_PREVIEW = 100


def _mapping(args: argparse.Namespace) -> ColumnMapping | None:
    given = (args.text_column, args.id_column, args.label_column, args.extra_column)
    if not any(given):
        return None
    guessed = preview_file(args.source, rows=50, encoding=args.encoding).mapping
    text = args.text_column or (guessed.text if guessed else None)
    if text is None:
        raise ValueError("no column looks like text: name it with --text-column")
    return ColumnMapping(
        text=text,
        id=args.id_column or (guessed.id if guessed and not args.text_column else None),
        label=args.label_column or (guessed.label if guessed and not args.text_column else None),
        extra=tuple(args.extra_column),
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
        for line in label_lines(dataset.meta, Counter(i.label for i in dataset.instances)):
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
    lines.append(f"labels: {rule.describe()}")
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
    console.print(f"[bold]{name}[/] ({row.dataset_id})", highlight=False, soft_wrap=True)
    for line in _describe(row):
        console.print(shown_text(line), highlight=False, soft_wrap=True, markup=False)
    for line in label_lines(row.meta, label_counts(store, row.dataset_id)):
        console.print(line, highlight=False, soft_wrap=True, markup=False)
    filtered = row.meta.get("filtered") or {}
    if filtered:
        table = Table("reason", "rows", title="left out by the paper's preprocessing")
        for reason, n in sorted(filtered.items(), key=lambda kv: -kv[1]):
            table.add_row(reason, str(n))
        console.print(table)
    instances = store.instances(row.dataset_id, args.rows)
    table = Table("position", "id", "label", "text", title=f"first {len(instances)} instances")
    for inst in instances:
        table.add_row(str(inst.position), inst.instance_id, inst.label or "", _excerpt(inst.text))
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
        f"{preview.n_rows} rows",
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
    table = Table(*preview.columns, title=f"first {len(preview.rows)} rows")
    for record in preview.rows:
        table.add_row(*(_excerpt(record.get(c, "")) for c in preview.columns))
    console.print(table)
    return 0


def datasets_command(args: argparse.Namespace, console: Console) -> int:
    """Dispatch ``haf datasets SUB``: import writes, the others read (``--snapshot`` works)."""
    sub = args.datasets_command
    if sub == "preview":
        return preview_command(args, console)
    if sub == "import":
        with open_store(args.db) as store:
            return import_command(args, store, console)
    db_path = Path(args.db).expanduser() if args.db else default_db_path()
    if sub == "list" and not db_path.is_file():
        return list_command(None, console)
    with open_snapshot(args.db) if args.snapshot else open_store(args.db, read_only=True) as store:
        if sub == "list":
            return list_command(store, console)
        return show_command(args, store, console)
