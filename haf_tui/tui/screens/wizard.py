"""Guided new run: models → dataset → settings → review (time estimated per model) → start.

Keyboard-first: ctrl+n / ctrl+b (or the buttons) go to the next / previous step; each step is
validated before the next opens, with the same pydantic models ``haf run`` uses, and errors
are shown in place. The models step shows first; the dataset and settings steps are mounted
after it (:mod:`~haf_tui.tui.screens.wizard_steps`). A paper dataset is looked for in the
local cache at once (ctrl+g downloads it, with progress; ctrl+g or escape cancels). escape on
a wizard with answers asks first; the answers are kept under the HAF home and offered the next
time.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Button, ContentSwitcher, Header, Static

from haf_tui.config import RunConfig
from haf_tui.datasets import Dataset
from haf_tui.pipeline.choices import (
    ModelEntry,
)
from haf_tui.pipeline.demo import DemoModelError, refuse_other_models
from haf_tui.pipeline.estimate import TimeEstimate
from haf_tui.pipeline.models import LoadedModels
from haf_tui.pipeline.runs import RunRequest
from haf_tui.store.holder import describe_holder, other_holder
from haf_tui.store.waiting import held_line
from haf_tui.tui.live import RunJob
from haf_tui.tui.screens.confirm import ConfirmScreen
from haf_tui.tui.screens.wizard_messages import (
    DatasetRead,
    ModelsFound,
    ModelTimed,
    PreviewReady,
    SourcesFound,
)
from haf_tui.tui.screens.wizard_steps import WizardSteps
from haf_tui.tui.widgets.dataset_picker import DEMO_SOURCE, DatasetPicker
from haf_tui.tui.widgets.key_footer import KeyFooter
from haf_tui.tui.widgets.model_picker import LOOKING, ModelPicker
from haf_tui.tui.widgets.run_review import RunReview
from haf_tui.tui.widgets.run_settings import RunSettingsForm
from haf_tui.tui.wizard_answers import load_answers, save_answers
from haf_tui.vocabulary import shown_text

STEPS = ("models", "dataset", "settings", "review")
STEP_TITLES = ("1 Models", "2 Dataset", "3 Settings", "4 Review")
DEMO_INSTEAD = "pick another dataset, or only the embedded model (ctrl+b to the models)"
"""What to do when the demo's texts are asked of another model (the rule: ``haf run --demo``'s)."""


class WizardScreen(WizardSteps):
    """Four steps to a new run (one run per picked model)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back_out", "Cancel"),
        Binding("ctrl+n", "next", "Next", priority=True),
        Binding("ctrl+b", "previous", "Back", priority=True),
        Binding("ctrl+s", "start", "Start", priority=True),
        Binding("ctrl+g", "download_dataset", "Download dataset", priority=True, show=False),
    ]
    DEFAULT_CSS = """
    WizardScreen #wz-steps { height: 1; padding: 0 1; }
    WizardScreen #wz-body { height: 1fr; }
    WizardScreen #wz-error { color: $error; padding: 0 1; height: auto; }
    WizardScreen #wz-error.-held { color: $warning; }
    WizardScreen #wz-nav { height: auto; align-horizontal: right; }
    WizardScreen #wz-nav Button { margin: 0 1; min-width: 10; }
    WizardScreen #review { height: 1fr; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.step = 0
        self.dataset: Dataset | None = None
        self.estimates: dict[int, TimeEstimate] = {}
        self.estimate_errors: dict[int, str] = {}
        self.preloaded: LoadedModels | None = None
        self.probe_key: object = None
        self.review_note = ""

    def compose(self) -> ComposeResult:
        """Step line, the step's pane, the error line and the buttons."""
        yield Header()
        yield Static("", id="wz-steps")
        with ContentSwitcher(initial="models", id="wz-body"):
            yield ModelPicker(id="models")  # (the dataset and settings: mounted after it)
            with VerticalScroll(id="review"):
                yield RunReview(id="review-text")
        yield Static("", id="wz-error")
        with Horizontal(id="wz-nav"):
            yield Button("◀ Back", id="wz-back")
            yield Button("Next ▶", id="wz-next", variant="primary")
            yield Button("Start", id="wz-start", variant="success", disabled=True)
        yield KeyFooter()

    def on_mount(self) -> None:
        """As the screen is shown (see ``when_shown``): offer the last answers, then scan for
        models and datasets."""
        self.sub_title = "new evaluation"
        self.when_shown(self._offer_last_and_scan)

    def _offer_last_and_scan(self) -> None:
        last, notice = load_answers()  # (a file that cannot be read: set aside, said once)
        self._say(notice)
        if last is not None:
            self.kept = last
            self.query_one(ModelPicker).restore(last.models)
        self._show_step()
        self.scan()

    # -- messages --------------------------------------------------------------------------------

    @on(ModelsFound)
    def _models_found(self, message: ModelsFound) -> None:
        self.query_one(ModelPicker).set_entries(message.entries, pick=message.pick)
        if str(self.query_one("#wz-error", Static).render()) == LOOKING:
            self._error("")  # (what it was looking for is listed: the step may go on)
        self._follow_models()
        if self.baseline is None:
            self.baseline = self.answers()

    @on(SourcesFound)
    def _sources_found(self, message: SourcesFound) -> None:
        first = self.sources is None
        self.sources, self.offload_supported = message.sources, message.offload_supported
        if "dataset" in self.mounted_steps:  # (gone to before the database was read)
            unedited = self._step_unedited("dataset")
            picker = self.query_one(DatasetPicker)
            if not unedited:
                picker.confirm_source()  # (the user's source stays: the kept one is dropped)
            picker.set_sources(message.sources)
            if unedited:
                self._rebaseline("dataset")  # (the kept source, chosen now it is listed)
        if "settings" in self.mounted_steps:
            self.query_one(RunSettingsForm).show_offload(message.offload_supported)
        if first:
            self.call_after_refresh(self.mount_later)  # (the models list drawn first)

    @on(ModelPicker.DownloadEnded)
    def _model_downloaded(self, message: ModelPicker.DownloadEnded) -> None:
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
        unedited = not self.edited()
        picker.show_preview(*message.shown())
        if unedited and self.baseline is not None:
            self.baseline = self.answers()  # (the kept mapping, shown again: not an edit)

    @on(DatasetRead)
    def _dataset_read(self, message: DatasetRead) -> None:
        if message.key != self.probe_key:
            return
        self.dataset = message.dataset
        if message.error:
            self._error(message.error)
        self._draw_review()

    @on(ModelTimed)
    def _model_timed(self, message: ModelTimed) -> None:
        if message.key != self.probe_key:
            if message.models is not None:
                message.models.backend.close()
            return
        if message.estimate is not None:
            self.estimates[message.index] = message.estimate
        if message.error:
            self.estimate_errors[message.index] = message.error
        if message.models is not None:
            if self.preloaded is not None:
                self.preloaded.backend.close()
            self.preloaded = message.models
        self._draw_review()

    # -- steps -----------------------------------------------------------------------------------

    def _error(self, text: str) -> None:
        """Say ``text`` on the error line, as text: it may hold a file's or model's name,
        never markup (a name with ``[/]`` in it would stop the wizard with a MarkupError)."""
        error = self.query_one("#wz-error", Static)
        error.update(Text(shown_text(text)))
        error.remove_class("-held")

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
            return self.query_one(DatasetPicker).validate() or self._demo_refusal()
        if STEPS[self.step] == "settings":  # (a model picked since: the review loads none)
            return self.query_one(RunSettingsForm).validate() or self._demo_refusal()
        return None

    def _demo_refusal(self) -> str | None:
        """Why the models picked cannot run the demo's texts (``haf run --demo``'s rule: the
        embedded model only), or None."""
        if "dataset" not in self.mounted_steps:
            return None  # (not gone to: its source is the kept one, checked on leaving it)
        if self.query_one(DatasetPicker).source() != DEMO_SOURCE:
            return None
        picked = self.query_one(ModelPicker).selected()
        others = [entry.path.name for entry in picked if not entry.embedded]
        try:
            refuse_other_models("the demo source", others, DEMO_INSTEAD)
        except DemoModelError as exc:
            return str(exc)
        return None

    def configs(self) -> list[tuple[ModelEntry, RunConfig]]:
        """One validated config per picked model."""
        form = self.query_one(RunSettingsForm)
        stop = self.query_one(DatasetPicker).stop_rule()  # (the demo's: haf run --demo's)
        return [
            (entry, form.build(None if entry.embedded else str(entry.path), **stop))
            for entry in self.query_one(ModelPicker).selected()
        ]

    async def action_next(self) -> None:
        """Validate this step, then open the next (mounted the first time)."""
        if self.step >= len(STEPS) - 1:
            return
        error = self._step_error()
        if error:
            self._error(error)
            return
        if STEPS[self.step] == "models":
            self._follow_models()
        if STEPS[self.step] == "dataset":
            self.query_one(DatasetPicker).confirm_source()  # (the source gone on with stays)
        await self._mount_step(STEPS[self.step + 1])
        self.step += 1
        self._show_step()
        if STEPS[self.step] == "review":
            self._start_review()

    def action_previous(self) -> None:
        """Back one step."""
        if self.step > 0:
            self.step -= 1
            self._show_step()

    def action_download_dataset(self) -> None:
        """Download the paper dataset chosen (not cached, the Hub reachable), or cancel."""
        if STEPS[self.step] == "dataset":
            self.query_one(DatasetPicker).toggle_download()

    def action_back_out(self) -> None:
        """Cancel a dataset download; else leave, asking first when answers were edited (they
        are kept for the next time either way)."""
        if "dataset" in self.mounted_steps and self.query_one(DatasetPicker).cancel_download():
            return
        if not self.edited():
            self._leave(True)
            return
        self.app.push_screen(
            ConfirmScreen(
                "Leave the new evaluation?",
                "Nothing is run or stored; your answers are kept and offered the next time (n).",
                yes="leave",
                no="stay",
            ),
            self._leave,
        )

    def keep_on_quit(self) -> None:
        """The app quits: keep edited answers for the next time."""
        if self.edited():
            self._say(save_answers(self.answers()))

    def _say(self, notice: str | None) -> None:
        if notice:
            self.app.notify(notice, severity="warning", timeout=12)

    def _leave(self, leave: bool | None) -> None:
        if not leave:
            return
        if self.edited():
            self._say(save_answers(self.answers()))
        if self.preloaded is not None:
            self.preloaded.backend.close()
            self.preloaded = None
        self.app.pop_screen()

    def _start_review(self) -> None:
        try:
            choice = self.query_one(DatasetPicker).choice()
        except ValueError as exc:  # (its step was left valid: said, and the step shown again)
            self.step = STEPS.index("dataset")
            self._show_step()
            self._error(str(exc))
            return
        runs = [(entry.path.name, config) for entry, config in self.configs()]
        key = (repr(choice), tuple((name, c.model_dump_json()) for name, c in runs))
        if key != self.probe_key:
            self.probe_key = key
            self.dataset = None
            self.estimates, self.estimate_errors = {}, {}
            self.run_probe(key, choice, runs)
        self._draw_review()

    def _draw_review(self) -> None:
        runs = [(entry.label, config) for entry, config in self.configs()]
        review = self.query_one(RunReview)
        self.review_note = review.show(runs, self.dataset, self.estimates, self.estimate_errors)
        self._say_held()

    def _say_held(self) -> None:
        """On the review: another process writing the database is said before Start (the
        run then waits for it, queued, and starts by itself)."""
        note = other_holder(self.reader.path)
        if note is None:
            return
        line = held_line(self.reader.path, describe_holder(self.reader.path, note.pid))
        error = self.query_one("#wz-error", Static)  # (as text: a command is never markup)
        error.update(
            Text(shown_text(f"{line}: Start queues the run; it starts once the file frees"))
        )
        error.add_class("-held")

    def action_start(self) -> None:
        """Queue one run per model and open the monitor (the answers are kept)."""
        if STEPS[self.step] != "review":
            return
        if self.dataset is None:
            self._error("the dataset is still being read (or could not be): see above")
            return
        refused = self._demo_refusal()  # (a model picked since: a download ended on the review)
        if refused:
            self._error(refused)
            return
        self._say(save_answers(self.answers()))
        configs = self.configs()
        jobs = [
            RunJob(entry.label, RunRequest(config=config, dataset=self.dataset))
            for entry, config in configs
        ]
        for index, job in enumerate(jobs):
            estimate = self.estimates.get(index)
            if estimate is not None and estimate.low is not None:
                job.estimate = estimate.text()
        jobs[0].request.preloaded, self.preloaded = self.preloaded, None
        app = self.haf_app
        app.pop_screen()
        app.start_runs(jobs)

    @on(Button.Pressed, "#wz-next")
    async def _next_pressed(self) -> None:
        await self.action_next()

    @on(Button.Pressed, "#wz-back")
    def _back_pressed(self) -> None:
        self.action_previous()

    @on(Button.Pressed, "#wz-start")
    def _start_pressed(self) -> None:
        self.action_start()
