"""The new-run wizard's later steps, mounted after its first: the dataset and settings steps
(about 200 widgets, most of them the settings form's) are mounted once the models are listed
and drawn, in the event loop between keys, or at once when gone to before (styling every
step's widgets before the first frame made the wizard take a second to open on a loaded
machine); the settings step is then laid out and drawn off screen, so that its first showing
is not its first drawing. Until a step is mounted its answers are the kept ones; once mounted
it is filled as it would have been at the opening, so that an unedited step is no edit.

Once the later steps are mounted, what the wizard holds (its ~200 widgets, and what the app's
warm-up imported meanwhile) is frozen out of the garbage collector's full passes until it
closes (``HafApp.freeze_after_load``, as the explorer and the SQL screen do after their
reads): a full pass over those ~130,000 objects took 70-85 ms of the settings step's first
showing, half of that key."""

from __future__ import annotations

import asyncio
from typing import Any

from textual import work
from textual.widget import Widget
from textual.widgets import ContentSwitcher

from haf_tui.tui.screens.wizard_reading import WizardReading
from haf_tui.tui.widgets.dataset_picker import DatasetPicker
from haf_tui.tui.widgets.model_picker import ModelPicker
from haf_tui.tui.widgets.run_settings import RunSettingsForm
from haf_tui.tui.wizard_answers import DatasetAnswers, WizardAnswers

LAZY_STEPS = ("dataset", "settings")
"""The steps mounted after the first (the review is small: it is mounted with the models)."""


class WizardSteps(WizardReading):
    """The wizard's answers, whichever of its steps are mounted (the wizard screen's base)."""

    def __init__(self) -> None:
        super().__init__()
        self.baseline: WizardAnswers | None = None
        """The answers the wizard opened with, once the models are listed (a step mounted
        later: as it was filled)."""
        self.kept = WizardAnswers()
        """The last answers (else the defaults): what a step not mounted yet holds."""
        self.sources: list[tuple[str, str]] | None = None
        self.offload_supported: bool | None = None
        self.mounted_steps: set[str] = set()
        """The later steps mounted and filled (their widgets hold their answers)."""
        self.step_mounts: dict[str, asyncio.Event] = {}
        """The later steps whose mounting began (set once it ended)."""

    def answers(self) -> WizardAnswers:
        """What the steps hold now (a step not mounted yet: the answers it would be filled
        with)."""
        dataset: DatasetAnswers | dict[str, Any] = self.kept.dataset
        settings = self.kept.settings
        if "dataset" in self.mounted_steps:
            dataset = self.query_one(DatasetPicker).answers()
        if "settings" in self.mounted_steps:
            settings = self.query_one(RunSettingsForm).answers()
        return WizardAnswers(
            models=self.query_one(ModelPicker).chosen_paths(), dataset=dataset, settings=settings
        )

    async def _mount_step(self, step: str) -> None:
        """Mount a lazy step (once: a second caller waits for the first)."""
        if step not in LAZY_STEPS:
            return
        mounting = self.step_mounts.get(step)
        if mounting is not None:
            await mounting.wait()
            return
        mounting = self.step_mounts[step] = asyncio.Event()
        try:
            await self._mount_and_fill(step)
        finally:
            mounting.set()

    async def _mount_and_fill(self, step: str) -> None:
        """Mount a lazy step and fill it as the wizard would have at its opening: the kept
        answers, the sources and offload found, the seed and answer length of the models it
        opened with (the baseline then takes the step as shown, so that an unedited step is
        no edit); then it follows the models picked now."""
        widget: DatasetPicker | RunSettingsForm = (
            DatasetPicker(id=step) if step == "dataset" else RunSettingsForm(id=step)
        )
        widget.display = False  # (until the switcher shows it)
        await self.query_one(ContentSwitcher).mount(widget)
        if isinstance(widget, DatasetPicker):
            widget.restore(self.kept.dataset.model_dump())
            if self.sources is not None:
                widget.set_sources(self.sources)
        else:
            widget.restore(self.kept.settings)
            if self.offload_supported is not None:
                widget.show_offload(self.offload_supported)
            if self.baseline is not None:
                widget.follow_models(self._embedded_only(self.baseline.models))
        self.mounted_steps.add(step)
        self._rebaseline(step)
        if step == "settings":
            self._lay_out_hidden(widget)
        if step == "settings":
            self._follow_models()

    def _lay_out_hidden(self, pane: Widget) -> None:
        """Lay out and draw a hidden step off screen at the size it will be shown at (the
        screen's layout skips a hidden widget): its first showing then starts from widgets
        that have their sizes and drawn lines (the settings step's took 150-300 ms at 200×60,
        most of it the first drawing of its ~150 widgets). Textual's own compositor, as the
        screen uses it; the screen lays the step out again when it is shown."""
        size = self.query_one(ContentSwitcher).content_region.size
        if not size:
            return
        try:  # (Textual's private API: a speed-up only, never a failure of the wizard)
            from textual._compositor import Compositor

            compositor = Compositor()
            compositor.reflow(pane, size)
            for widget, where in compositor.layers:
                widget._size_updated(where.region.size, where.virtual_size, where.container_size)
            compositor.render_update(full=True)
        except (ImportError, AttributeError, TypeError, ValueError):
            return  # (another Textual: the step is laid out when shown, as any other)

    def _step_unedited(self, step: str) -> bool:
        """Whether ``step``'s answers are those it opened with."""
        baseline = self.baseline
        return baseline is not None and getattr(self.answers(), step) == getattr(baseline, step)

    def _rebaseline(self, step: str) -> None:
        """``step`` as it is now counts as unedited."""
        if self.baseline is not None:
            shown = getattr(self.answers(), step)
            self.baseline = self.baseline.model_copy(update={step: shown})

    def edited(self) -> bool:
        """Whether the answers differ from those the wizard opened with."""
        return self.baseline is not None and self.answers() != self.baseline

    @work(exclusive=True, exit_on_error=False, group="wizard-steps")
    async def mount_later(self) -> None:
        """The later steps, mounted once the models are listed and drawn and the datasets
        read (in the event loop, one widget at a time between keys; a step gone to before is
        mounted then); then what they hold is left out of the collector's full passes."""
        for step in LAZY_STEPS:
            await self._mount_step(step)
        self.haf_app.freeze_after_load(self)

    def _follow_models(self) -> None:
        """The embedded model alone starts from the demo's seed and answer length (the
        settings step, once mounted: it follows the models when it is)."""
        if "settings" in self.mounted_steps:
            picked = self.query_one(ModelPicker).chosen_paths()
            self.query_one(RunSettingsForm).follow_models(self._embedded_only(picked))

    def _embedded_only(self, paths: list[str]) -> bool:
        """Whether the models at ``paths`` are the embedded model alone."""
        entries = {str(entry.path): entry for entry in self.query_one(ModelPicker).entries}
        picked = [entries[path] for path in paths if path in entries]
        return bool(picked) and all(entry.embedded for entry in picked)
