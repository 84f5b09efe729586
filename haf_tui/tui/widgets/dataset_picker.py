"""Over 400 lines because its one choice() reads every kind's fields (split the file mapping
or the paper cache into widgets of their own when one more kind comes).

The wizard's dataset step: the built-in sample, datasets stored in the database, the paper's
datasets (said at once whether they are in the local Hugging Face cache), or a local file (with
a preview and its column mapping); every kind offers the same sample size and seed. The first
choice is the demo's: its own texts in order until 3 went through every stage, as ``haf run
--demo`` (``make run``) evaluates them (the same fields: :mod:`haf_tui.pipeline.demo`)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.markup import escape
from textual.message import Message
from textual.widgets import DataTable, Input, Label, ProgressBar, Select, Static

from haf_tui.datasets.readers import FORMATS
from haf_tui.defaults import DEMO_MAX_TEXTS, DEMO_UNTIL_COMPLETE
from haf_tui.pipeline.choices import (
    DEFAULT_SAMPLE,
    DEFAULT_SEED,
    DownloadCancelledError,
    PaperCache,
    download_paper,
    paper_cache_state,
)
from haf_tui.pipeline.demo import demo_stop
from haf_tui.pipeline.runs import DEMO_CHOICE, DatasetChoice, run_dataset_choice
from haf_tui.tui.widgets.label_rule_field import LabelRuleField
from haf_tui.tui.widgets.measured_table import MeasuredTable

FILE_SOURCE = "file:"
BUILTIN_SOURCE = "builtin:"
DEMO_SOURCE = "demo:"
"""The demo's texts in order until 3 went through every stage (``haf run --demo``'s): the
sample size is the most texts taken (``--limit``), all of them when empty."""
FIXED_SOURCES: tuple[tuple[str, str], ...] = (
    (
        f"demo: its {DEMO_MAX_TEXTS} texts in order, until {DEMO_UNTIL_COMPLETE} go through",
        DEMO_SOURCE,
    ),
    ("built-in sample (16 texts)", BUILTIN_SOURCE),
)
FILE_HELP = f"a {' '.join(list(FORMATS)[:-1])} or {list(FORMATS)[-1]} file with a column of texts"
"""What the file field takes (every suffix the readers read), under it: whole at 80 columns."""
PAPER_PREFIX = "paper:"
NO_COLUMN = "(none)"


@dataclass
class PaperChecked(Message):
    """The local cache was looked at for a paper dataset."""

    cache: PaperCache


@dataclass
class PaperDownloadEnded(Message):
    """A paper dataset's download ended (``error``: why not, or that it was cancelled)."""

    key: str
    error: str | None = None


@dataclass
class PaperDownloadProgress(Message):
    """Bytes of a paper dataset's download so far (``total`` None while unknown)."""

    done: int
    total: int | None


def limit_placeholder(source: str) -> str:
    """What an empty sample size means for ``source``."""
    if source.startswith(PAPER_PREFIX):
        return f"{DEFAULT_SAMPLE} (paper)"
    if source == DEMO_SOURCE:
        return f"at most {DEMO_MAX_TEXTS}"
    return "all"


class DatasetPicker(VerticalScroll):
    """Where the instances come from, and how many of them (a seeded sample, for every kind)."""

    DEFAULT_CSS = """
    DatasetPicker { height: 1fr; }
    DatasetPicker #paper-bar { display: none; margin: 0 1; }
    DatasetPicker #paper-bar.-active { display: block; }
    DatasetPicker Horizontal { height: auto; }
    DatasetPicker .field-label { width: 16; padding: 1 1 0 1; }
    DatasetPicker Select { width: 1fr; }
    DatasetPicker Input { width: 1fr; }
    DatasetPicker #file-box { height: auto; display: none; }
    DatasetPicker #file-box.-active { display: block; }
    DatasetPicker #mapping Select { width: 1fr; }
    DatasetPicker #preview { height: auto; max-height: 12; }
    DatasetPicker #dataset-note { color: $text-muted; padding: 0 1; }
    """

    @dataclass
    class PreviewRequested(Message):
        """The user gave a file to preview."""

        path: str

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.sources: list[tuple[str, str]] = list(FIXED_SOURCES)
        self.columns: list[str] = []
        self.paper_caches: dict[str, PaperCache] = {}
        """What the local cache holds, per paper dataset key (checked when one is chosen)."""
        self.pending_source: str | None = None
        self.pending_columns: dict[str, str] = {}
        self.downloading: str | None = None
        """The paper dataset being downloaded."""
        self.cancel_event = threading.Event()

    def compose(self) -> ComposeResult:
        """Source, sample size and seed, the note, then the file box (path, mapping, preview)."""
        with Horizontal():
            yield Label("dataset", classes="field-label")
            yield Select(self._options(), value=DEMO_SOURCE, allow_blank=False, id="ds-source")
        with Horizontal():
            yield Label("sample size", classes="field-label")
            yield Input(placeholder=limit_placeholder(DEMO_SOURCE), id="ds-limit")
            yield Label("sample seed", classes="field-label")
            yield Input(str(DEFAULT_SEED), id="ds-seed", disabled=True)
        yield Static("", id="dataset-note")
        yield ProgressBar(total=None, id="paper-bar")
        with Vertical(id="file-box"):
            with Horizontal():
                yield Label("file", classes="field-label")
                yield Input(placeholder="the file's path, then enter", id="ds-path")
            yield Static(FILE_HELP, id="ds-path-help", classes="hint")
            with Horizontal(id="mapping"):
                for role in ("text", "id", "label"):
                    yield Select[str]([], prompt=f"{role} column", id=f"ds-col-{role}")
            yield LabelRuleField(id="label-rule")
            yield MeasuredTable(id="preview", zebra_stripes=True)

    def _options(self) -> list[tuple[str, str]]:  # (a dataset's name as typed: escaped)
        return [(escape(name), v) for name, v in (*self.sources, ("a local file …", FILE_SOURCE))]

    def set_sources(self, sources: list[tuple[str, str]]) -> None:
        """Offer ``sources`` (label, value) after the demo's texts and the built-in sample."""
        select = self.query_one("#ds-source", Select)
        current = select.value
        self.sources = [*FIXED_SOURCES, *sources]
        select.set_options(self._options())
        values = {value for _, value in self._options()}
        wanted, self.pending_source = self.pending_source, None
        if wanted in values and wanted != current:
            select.value = wanted
        else:
            select.value = current if current in values else BUILTIN_SOURCE

    def confirm_source(self) -> None:
        """The source shown is the user's: a kept source listed later no longer replaces it."""
        self.pending_source = None

    def answers(self) -> dict[str, Any]:
        """Source, file path, column mapping, sample size and seed (kept between sessions)."""
        columns = {role: self._column(role) for role in ("text", "id", "label")}
        return {
            "source": self.source(),
            "path": self.query_one("#ds-path", Input).value,
            "columns": {role: value for role, value in columns.items() if value},
            "limit": self.query_one("#ds-limit", Input).value,
            "seed": self.query_one("#ds-seed", Input).value,
            "label_rule": self.query_one(LabelRuleField).statement(),
        }

    def restore(self, values: dict[str, Any]) -> None:
        """Fill the step from :meth:`answers`; a source listed from the database or the Hub
        cache is chosen once the sources are known (the demo's, the built-in sample or a file:
        at once), and a file is read again for its preview (its mapping kept)."""
        self.query_one("#ds-limit", Input).value = str(values.get("limit", ""))
        self.query_one("#ds-seed", Input).value = str(values.get("seed", "")) or str(DEFAULT_SEED)
        self.query_one("#ds-path", Input).value = str(values.get("path", ""))
        self.query_one(LabelRuleField).set_statement(str(values.get("label_rule", "")))
        self.pending_source = str(values.get("source", BUILTIN_SOURCE))
        self.pending_columns = dict(values.get("columns", {}))
        if self.pending_source in {FILE_SOURCE, *(value for _, value in FIXED_SOURCES)}:
            self.query_one("#ds-source", Select).value = self.pending_source  # (listed already)
            self.pending_source = None
        path = self.query_one("#ds-path", Input).value
        if self.source() == FILE_SOURCE and path.strip():
            self.post_message(self.PreviewRequested(path))

    def paper_checked(self, cache: PaperCache) -> None:
        """The local cache was looked at for a paper dataset: say what it holds."""
        self.paper_caches[cache.key] = cache
        if self.source() == PAPER_PREFIX + cache.key:
            self.note(cache.note)

    @on(Select.Changed, "#ds-source")
    def _source_changed(self, event: Select.Changed) -> None:
        source = str(event.value)
        self.query_one("#file-box").set_class(source == FILE_SOURCE, "-active")
        self.query_one("#ds-limit", Input).placeholder = limit_placeholder(source)
        self.query_one("#ds-seed", Input).disabled = source == DEMO_SOURCE  # (in order: no draw)
        self.note("")
        self.paper_progress(None)
        if source.startswith(PAPER_PREFIX):
            self.note("looking for the dataset in the local cache …")
            self.check_paper(source.removeprefix(PAPER_PREFIX))

    @work(thread=True, exclusive=True, exit_on_error=False, group="paper-cache")
    def check_paper(self, key: str) -> None:
        """Is the paper dataset in the local cache? (disk only: answers at once)"""
        self.post_message(PaperChecked(paper_cache_state(key)))

    @work(thread=True, exclusive=True, exit_on_error=False, group="paper-download")
    def download_dataset(self, key: str) -> None:
        """Download a paper dataset into the Hub cache with progress, until cancelled."""
        try:
            download_paper(key, self._post_progress, self.cancel_event.is_set)
        except DownloadCancelledError:
            self.post_message(PaperDownloadEnded(key, "download cancelled"))
        except Exception as exc:  # one line for the user, whatever the Hub raised
            self.post_message(PaperDownloadEnded(key, str(exc).splitlines()[0]))
        else:
            self.post_message(PaperDownloadEnded(key))

    def _post_progress(self, done: int, total: int | None) -> None:
        self.post_message(PaperDownloadProgress(done, total))

    def toggle_download(self) -> None:
        """Download the paper dataset chosen when it is not cached (and the Hub may be
        reached), or cancel the download going."""
        if self.cancel_download():
            return
        cache = self.paper_caches.get(self.source().removeprefix(PAPER_PREFIX))
        if cache is None or cache.cached:
            return
        if not cache.can_download:
            self.note(cache.note)
            return
        self.downloading = cache.key
        self.cancel_event.clear()
        self.paper_progress(0)
        self.note("connecting to the Hugging Face Hub … (ctrl+g or escape cancels)")
        self.download_dataset(cache.key)

    def cancel_download(self) -> bool:
        """Cancel the download going (the worker stops at its next chunk); False: none."""
        if self.downloading is None:
            return False
        self.cancel_event.set()
        self.downloading = None
        self.paper_progress(None)
        self.note("download cancelled: ctrl+g starts it again")
        return True

    @on(PaperChecked)
    def _paper_checked(self, message: PaperChecked) -> None:
        self.paper_checked(message.cache)

    @on(PaperDownloadProgress)
    def _download_progress(self, message: PaperDownloadProgress) -> None:
        if self.downloading is None:
            return
        self.paper_progress(message.done, message.total)
        of = f" of {message.total / 2**20:.1f}" if message.total else ""
        self.note(f"downloading {message.done / 2**20:.1f}{of} MiB … (ctrl+g or escape cancels)")

    @on(PaperDownloadEnded)
    def _download_ended(self, message: PaperDownloadEnded) -> None:
        if self.downloading != message.key:
            return  # (cancelled before: already said so)
        self.downloading = None
        self.paper_progress(None)
        if message.error:
            self.note(message.error)
            return
        self.check_paper(message.key)

    def source(self) -> str:
        """The source chosen (``builtin:``, ``file:``, ``paper:KEY``, ``stored:ID`` …)."""
        return str(self.query_one("#ds-source", Select).value)

    def paper_progress(self, done: int | None, total: int | None = None) -> None:
        """Show a paper dataset's download progress (``done`` None: hide the bar)."""
        bar = self.query_one("#paper-bar", ProgressBar)
        bar.set_class(done is not None, "-active")
        if done is not None:
            bar.update(total=total, progress=done)

    @on(Input.Changed, "#ds-path")
    def _path_changed(self) -> None:
        self.columns = []

    @on(Input.Submitted, "#ds-path")
    def _path_submitted(self, event: Input.Submitted) -> None:
        if event.value.strip():
            self.post_message(self.PreviewRequested(event.value.strip()))

    def show_preview(
        self,
        columns: list[str],
        rows: list[list[Any]],
        guessed: dict[str, str | None],
        note: str,
        values: dict[str, list[Any]] | None = None,
    ) -> None:
        """A file's first rows, its columns offered for the mapping (``guessed`` preselected),
        and the label rule of the label column (from ``values``: the first values per column)."""
        self.columns = columns
        table = self.query_one("#preview", DataTable)
        table.clear(columns=True)
        table.add_columns(*(Text(str(column)) for column in columns))  # (a file's: text)
        for row in rows:
            table.add_row(*[Text(str(value)[:60]) for value in row])
        for role in ("text", "id", "label"):
            select = self.query_one(f"#ds-col-{role}", Select)
            options = [(column, column) for column in columns]
            if role != "text":
                options.insert(0, (NO_COLUMN, NO_COLUMN))
            select.set_options(options)
            value = self.pending_columns.get(role) or guessed.get(role)
            if value not in columns:
                value = None if role == "text" else NO_COLUMN
            if value is not None:
                select.value = value
        self.pending_columns = {}
        rule = self.query_one(LabelRuleField)
        rule.column, rule.taken = self._column("label"), (self._column("text"), self._column("id"))
        rule.set_values(values or {})
        self.note(note)

    @on(Select.Changed, "#ds-col-label, #ds-col-text, #ds-col-id")
    def _label_column_changed(self) -> None:
        taken = (self._column("text"), self._column("id"))
        self.query_one(LabelRuleField).set_column(self._column("label"), taken)

    def note(self, text: str) -> None:
        """A line under the form (what was read, or what is wrong)."""
        self.query_one("#dataset-note", Static).update(text)

    def _column(self, role: str) -> str | None:
        value = self.query_one(f"#ds-col-{role}", Select).value
        if value == NO_COLUMN or value is None or value is Select.NULL:
            return None
        return str(value)

    def choice(self) -> DatasetChoice:
        """What the user chose; ValueError with a one-line reason when incomplete."""
        source = str(self.query_one("#ds-source", Select).value)
        limit_text = self.query_one("#ds-limit", Input).value.strip()
        seed_text = self.query_one("#ds-seed", Input).value.strip() or str(DEFAULT_SEED)
        try:
            limit = int(limit_text) if limit_text else None
            seed = int(seed_text)
        except ValueError:
            raise ValueError("sample size and seed must be whole numbers") from None
        if limit is not None and limit < 1:
            raise ValueError("sample size must be at least 1 (empty: all)")
        if source == FILE_SOURCE:
            path = self.query_one("#ds-path", Input).value.strip()
            if not path:
                raise ValueError("give the file's path (enter previews it)")
            if not self.columns:
                raise ValueError("the file was not read yet, or could not be: enter reads it")
            text = self._column("text")
            if text is None:
                raise ValueError("pick the text column")
            rule = self.query_one(LabelRuleField)
            problem = rule.problem()
            if problem is not None:
                raise ValueError(problem)
            threshold, label_map = rule.stated() if self._column("label") else (None, ())
            return DatasetChoice(
                "file",
                path,
                sample_size=limit,
                seed=seed,
                text_column=text,
                id_column=self._column("id"),
                label_column=self._column("label"),
                guess_label_column=False,  # (the label picked, or picked as none)
                label_threshold=threshold,
                label_map=label_map,
            )
        if source == BUILTIN_SOURCE:
            return DatasetChoice("builtin", "sample", sample_size=limit, seed=seed)
        if source == DEMO_SOURCE:  # (the run's limit and stop rule: stop_rule)
            return DEMO_CHOICE
        kind, _, name = source.partition(":")
        if kind == "paper":
            cache = self.paper_caches.get(name)
            if cache is None:
                raise ValueError("looking for the dataset in the local cache …")
            if not cache.cached:
                raise ValueError(cache.note)
            return DatasetChoice("paper", name, sample_size=limit, seed=seed, offline=True)
        # a dataset made of a run (a judge run's explanations: run:ID, edits:ID), or one stored
        made_of_a_run = run_dataset_choice(source, seed=seed, sample_size=limit)
        return made_of_a_run or DatasetChoice(kind, name, sample_size=limit, seed=seed)  # type: ignore[arg-type]

    def stop_rule(self) -> dict[str, int]:
        """The run's ``limit`` and ``until_complete`` (``RunConfig`` fields): the demo's
        texts, as ``haf run --demo`` takes them (the sample size: its ``--limit``); none
        for the others (their sample size is the dataset choice's)."""
        if self.source() != DEMO_SOURCE:
            return {}
        limit_text = self.query_one("#ds-limit", Input).value.strip()
        given = int(limit_text) if limit_text.isdigit() and int(limit_text) > 0 else None
        return demo_stop(given)

    def validate(self) -> str | None:
        """Why the step cannot go on, or None."""
        try:
            self.choice()
        except ValueError as exc:
            self.note(str(exc))
            return str(exc)
        return None
