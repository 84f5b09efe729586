"""Guided new run: models → dataset → settings → review (with a short speed probe) → start.

Keyboard-first: ctrl+n / ctrl+b (or the buttons) go to the next / previous step; each step is
validated before the next opens, with the same pydantic models ``haf run`` uses, and errors
are shown in place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, ContentSwitcher, Header, Static

from haf_tui.config import RunConfig
from haf_tui.datasets import Dataset
from haf_tui.defaults import haf_home
from haf_tui.pipeline.choices import (
    ModelEntry,
    dataset_sources,
    discover_models,
    download_model,
    gpu_offload_supported,
    preview_file,
)
from haf_tui.pipeline.models import LoadedModels, load_models
from haf_tui.pipeline.planning import ProbeResult, plan_run, probe_speed
from haf_tui.pipeline.runs import DatasetChoice, RunRequest, resolve_dataset
from haf_tui.suites import run_stages
from haf_tui.tui.live import RunJob
from haf_tui.tui.messages import DownloadProgress
from haf_tui.tui.screens.base import HafScreen
from haf_tui.tui.widgets.dataset_picker import DatasetPicker
from haf_tui.tui.widgets.key_footer import KeyFooter
from haf_tui.tui.widgets.model_picker import ModelPicker
from haf_tui.tui.widgets.run_settings import RunSettingsForm

STEPS = ("models", "dataset", "settings", "review")
STEP_TITLES = ("1 Models", "2 Dataset", "3 Settings", "4 Review")


@dataclass
class ModelsFound(Message):
    """The model folders were scanned (``pick``: a just-downloaded file to pick)."""

    entries: list[ModelEntry]
    sources: list[tuple[str, str]]
    offload_supported: bool
    pick: str | None = None


@dataclass
class PreviewReady(Message):
    """A dataset file was read for its preview (or could not be: ``error``)."""

    columns: list[str]
    rows: list[list[object]]
    guessed: dict[str, str | None]
    note: str
    error: str | None = None


@dataclass
class DownloadEnded(Message):
    """A model download ended: its path, or why not."""

    path: str | None
    error: str | None = None


@dataclass
class ProbeFinished(Message):
    """The review's probe: the dataset read and speeds measured (or why not)."""

    dataset: Dataset | None
    probe: ProbeResult | None
    models: LoadedModels | None
    error: str | None = None


class WizardScreen(HafScreen[None]):
    """Four steps to a new run (one run per picked model)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back_out", "Cancel"),
        Binding("ctrl+n", "next", "Next", priority=True),
        Binding("ctrl+b", "previous", "Back", priority=True),
        Binding("ctrl+s", "start", "Start", priority=True),
    ]
    DEFAULT_CSS = """
    WizardScreen #wz-steps { height: 1; padding: 0 1; }
    WizardScreen #wz-body { height: 1fr; }
    WizardScreen #wz-error { color: $error; padding: 0 1; height: auto; }
    WizardScreen #wz-nav { height: auto; align-horizontal: right; }
    WizardScreen #wz-nav Button { margin: 0 1; min-width: 10; }
    WizardScreen #review { height: 1fr; padding: 0 1; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.step = 0
        self.dataset: Dataset | None = None
        self.probe: ProbeResult | None = None
        self.preloaded: LoadedModels | None = None
        self.probe_key: tuple[str, str] | None = None
        self.review_note = ""

    def compose(self) -> ComposeResult:
        """Step line, the step's pane, the error line and the buttons."""
        yield Header()
        yield Static("", id="wz-steps")
        with ContentSwitcher(initial="models", id="wz-body"):
            yield ModelPicker(id="models")
            yield DatasetPicker(id="dataset")
            yield RunSettingsForm(id="settings")
            with Vertical(id="review"):
                yield Static("", id="review-text")
        yield Static("", id="wz-error")
        with Horizontal(id="wz-nav"):
            yield Button("◀ Back", id="wz-back")
            yield Button("Next ▶", id="wz-next", variant="primary")
            yield Button("Start", id="wz-start", variant="success", disabled=True)
        yield KeyFooter()

    def on_mount(self) -> None:
        """Scan for models and datasets."""
        self.sub_title = "new evaluation"
        self._show_step()
        self.scan()

    # -- workers ---------------------------------------------------------------------------------

    @work(thread=True, exclusive=True, exit_on_error=False, group="wizard-scan")
    def scan(self, pick: str | None = None) -> None:
        """GGUF files (metadata only) and the datasets stored in the database."""
        entries = discover_models()
        reader = self.reader
        sources = dataset_sources(reader.store()) if reader.path.exists() else []
        self.post_message(ModelsFound(entries, sources, gpu_offload_supported(), pick))

    @work(thread=True, exclusive=True, exit_on_error=False, group="wizard-preview")
    def read_preview(self, path: str) -> None:
        """A dataset file's first rows."""
        try:
            preview = preview_file(path)
        except Exception as exc:  # one line for the user, whatever the reader raised
            self.post_message(PreviewReady([], [], {}, "", str(exc).splitlines()[0]))
            return
        rows = [list(row) for row in preview.rows]
        self.post_message(PreviewReady(preview.columns, rows, preview.guessed, preview.note))

    @work(thread=True, exclusive=True, exit_on_error=False, group="wizard-download")
    def download(self, repo_id: str, filename: str) -> None:
        """Download a GGUF into ``$HAF_HOME/models`` with progress messages."""
        target = haf_home() / "models"
        try:
            path = download_model(
                repo_id,
                filename,
                target,
                progress=self._post_download_progress,
            )
        except Exception as exc:
            self.post_message(DownloadEnded(None, str(exc).splitlines()[0]))
            return
        self.post_message(DownloadEnded(str(path)))

    def _post_download_progress(self, done: int, total: int | None) -> None:
        self.post_message(DownloadProgress(done, total))

    @work(thread=True, exclusive=True, exit_on_error=False, group="wizard-probe")
    def run_probe(self, choice: DatasetChoice, config: RunConfig) -> None:
        """Read the dataset, load the first model and time a short generation."""
        store = self.reader.store() if self.reader.path.exists() else None
        try:
            dataset = resolve_dataset(choice, store)
        except Exception as exc:
            self.post_message(ProbeFinished(None, None, None, str(exc).splitlines()[0]))
            return
        try:
            models = load_models(config)
            probe = probe_speed(models, config, dataset)
        except Exception as exc:
            self.post_message(ProbeFinished(dataset, None, None, str(exc).splitlines()[0]))
            return
        self.post_message(ProbeFinished(dataset, probe, models))

    # -- messages --------------------------------------------------------------------------------

    @on(ModelsFound)
    def _models_found(self, message: ModelsFound) -> None:
        self.query_one(ModelPicker).set_entries(message.entries, pick=message.pick)
        self.query_one(DatasetPicker).set_sources(message.sources)
        self.query_one(RunSettingsForm).show_offload(message.offload_supported)

    @on(ModelPicker.DownloadRequested)
    def _download_requested(self, message: ModelPicker.DownloadRequested) -> None:
        self.query_one(ModelPicker).download_progress(0, None)
        self.download(message.repo_id, message.filename)

    @on(DownloadProgress)
    def _download_progress(self, message: DownloadProgress) -> None:
        self.query_one(ModelPicker).download_progress(message.done, message.total)

    @on(DownloadEnded)
    def _download_ended(self, message: DownloadEnded) -> None:
        picker = self.query_one(ModelPicker)
        if message.error:
            picker.download_finished(message.error, failed=True)
            return
        picker.download_finished(f"downloaded {message.path}")
        self.scan(message.path)

    @on(DatasetPicker.PreviewRequested)
    def _preview_requested(self, message: DatasetPicker.PreviewRequested) -> None:
        self.query_one(DatasetPicker).note(f"reading {message.path} …")
        self.read_preview(message.path)

    @on(PreviewReady)
    def _preview_ready(self, message: PreviewReady) -> None:
        picker = self.query_one(DatasetPicker)
        if message.error:
            picker.note(message.error)
            return
        picker.show_preview(message.columns, message.rows, message.guessed, message.note)

    @on(ProbeFinished)
    def _probe_finished(self, message: ProbeFinished) -> None:
        self.dataset, self.probe = message.dataset, message.probe
        if self.preloaded is not None and self.preloaded is not message.models:
            self.preloaded.backend.close()
        self.preloaded = message.models
        if message.error:
            self._error(message.error)
        self._draw_review()

    # -- steps -----------------------------------------------------------------------------------

    def _error(self, text: str) -> None:
        self.query_one("#wz-error", Static).update(text)

    def _show_step(self) -> None:
        line = Text()
        for index, title in enumerate(STEP_TITLES):
            style = "bold reverse" if index == self.step else "dim"
            line.append(f" {title} ", style=style)
            if index < len(STEPS) - 1:
                line.append(" › ", style="dim")
        self.query_one("#wz-steps", Static).update(line)
        self.query_one(ContentSwitcher).current = STEPS[self.step]
        self.query_one("#wz-back", Button).disabled = self.step == 0
        self.query_one("#wz-next", Button).disabled = self.step == len(STEPS) - 1
        self.query_one("#wz-start", Button).disabled = self.step != len(STEPS) - 1
        self._error("")
        self._focus_step()

    def _focus_step(self) -> None:
        """Keys go to the step shown: its first field (the Start button on the review)."""
        if STEPS[self.step] == "review":
            self.query_one("#wz-start", Button).focus()
            return
        pane = self.query_one(f"#{STEPS[self.step]}")
        fields = [w for w in pane.query("DataTable, Select, SelectionList, Input") if w.focusable]
        if fields:
            fields[0].focus()

    def _step_error(self) -> str | None:
        """Why the current step cannot be left forward, or None."""
        if STEPS[self.step] == "models":
            return self.query_one(ModelPicker).validate()
        if STEPS[self.step] == "dataset":
            return self.query_one(DatasetPicker).validate()
        if STEPS[self.step] == "settings":
            return self.query_one(RunSettingsForm).validate()
        return None

    def configs(self) -> list[tuple[ModelEntry, RunConfig]]:
        """One validated config per picked model."""
        form = self.query_one(RunSettingsForm)
        return [
            (entry, form.build(None if entry.embedded else str(entry.path)))
            for entry in self.query_one(ModelPicker).selected()
        ]

    def action_next(self) -> None:
        """Validate this step, then open the next."""
        if self.step >= len(STEPS) - 1:
            return
        error = self._step_error()
        if error:
            self._error(error)
            return
        self.step += 1
        self._show_step()
        if STEPS[self.step] == "review":
            self._start_review()

    def action_previous(self) -> None:
        """Back one step."""
        if self.step > 0:
            self.step -= 1
            self._show_step()

    def action_back_out(self) -> None:
        """Leave the wizard (nothing was stored)."""
        if self.preloaded is not None:
            self.preloaded.backend.close()
            self.preloaded = None
        self.app.pop_screen()

    def _start_review(self) -> None:
        choice = self.query_one(DatasetPicker).choice()
        first_config = self.configs()[0][1]
        key = (repr(choice), first_config.model_dump_json())
        if key != self.probe_key:
            self.probe_key = key
            self.dataset = self.probe = None
            self.run_probe(choice, first_config)
        self._draw_review()

    def _draw_review(self) -> None:
        configs = self.configs()
        table = Table(title="What will run", expand=False)
        table.add_column("model")
        stages = run_stages(configs[0][1])
        for stage in stages:
            table.add_column(stage, justify="right")
        table.add_column("estimated time", justify="right")
        note = Text()
        if self.dataset is None:
            note.append("reading the dataset, loading the first model and probing its speed …")
        for index, (entry, config) in enumerate(configs):
            if self.dataset is None:
                table.add_row(entry.label, *["…" for _ in stages], "…")
                continue
            plan = plan_run(config, self.dataset, self.probe if index == 0 else None)
            cells = [str(plan.generations.get(stage, 0)) for stage in stages]
            table.add_row(entry.label, *cells, plan.time_range())
            if index == 0:
                noun = "instance" if plan.instances == 1 else "instances"
                note.append(f"{plan.instances} {noun} of {self.dataset.name}. ")
                note.append(plan.assumptions)
                if self.probe is not None:
                    note.append(
                        f"\nprobe on {entry.path.name}, {self.probe.batch} sequence(s) at once "
                        f"as the run will decode: prompt "
                        f"{self.probe.prompt_tokens_per_second:.0f} tok/s, generation "
                        f"{self.probe.decode_tokens_per_second:.1f} tok/s. The monitor "
                        "replaces the estimate with the run's own pace once instances finish."
                    )
        if len(configs) > 1:
            note.append("\nother models: no probe (time unknown); the runs go one after another")
        note.append("\nctrl+s or Start begins; the runs list shows the runs as they go.")
        self.review_note = note.plain
        self.query_one("#review-text", Static).update(Group(table, Text(""), note))

    def action_start(self) -> None:
        """Queue one run per model and open the monitor."""
        if STEPS[self.step] != "review":
            return
        if self.dataset is None:
            self._error("the dataset is still being read (or could not be): see above")
            return
        configs = self.configs()
        jobs = [
            RunJob(entry.label, RunRequest(config=config, dataset=self.dataset))
            for entry, config in configs
        ]
        jobs[0].request.preloaded, self.preloaded = self.preloaded, None
        if self.probe is not None:
            plan = plan_run(configs[0][1], self.dataset, self.probe)
            jobs[0].estimate = plan.time_range()
        app = self.haf_app
        app.pop_screen()
        app.start_runs(jobs)

    @on(Button.Pressed, "#wz-next")
    def _next_pressed(self) -> None:
        self.action_next()

    @on(Button.Pressed, "#wz-back")
    def _back_pressed(self) -> None:
        self.action_previous()

    @on(Button.Pressed, "#wz-start")
    def _start_pressed(self) -> None:
        self.action_start()
