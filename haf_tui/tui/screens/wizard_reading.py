"""What the new-run wizard (:class:`~haf_tui.tui.screens.wizard.WizardScreen`) reads in the
background, in thread workers that only post messages: the GGUF files (:class:`ModelsFound`,
first: the first step shows them), then the stored datasets and whether llama.cpp offloads to
a GPU (:class:`SourcesFound`, for the later steps), a dataset file's first rows
(:class:`PreviewReady`), and for the review the dataset read and each model's time estimated
(:class:`DatasetRead`, :class:`ModelTimed`: from the store's finished runs of its file, else a
short calibration decode)."""

from __future__ import annotations

from textual import work
from textual.worker import get_current_worker

from haf_tui.config import RunConfig
from haf_tui.pipeline.choices import (
    dataset_sources,
    discover_models,
    gpu_offload_supported,
    preview_file,
)
from haf_tui.pipeline.estimate import estimate_time
from haf_tui.pipeline.models import LoadedModels, load_models
from haf_tui.pipeline.planning import probe_speed
from haf_tui.pipeline.runs import DatasetChoice, resolve_dataset
from haf_tui.store.paces import past_runs
from haf_tui.tui.screens.base import HafScreen
from haf_tui.tui.screens.wizard_messages import (
    DatasetRead,
    ModelsFound,
    ModelTimed,
    PreviewReady,
    SourcesFound,
)
from haf_tui.vocabulary import first_line


class WizardReading(HafScreen[None]):
    """The wizard's background reads (the wizard screen's base)."""

    @work(thread=True, exclusive=True, exit_on_error=False, group="wizard-scan")
    def scan(self, pick: str | None = None) -> None:
        """GGUF files (metadata only), then the datasets stored in the database."""
        self.post_message(ModelsFound(discover_models(), pick))
        with self.reader.reading_if_exists() as store:
            sources = dataset_sources(store)  # (no database yet: the paper datasets)
        self.post_message(SourcesFound(sources, gpu_offload_supported()))

    @work(thread=True, exclusive=True, exit_on_error=False, group="wizard-preview")
    def read_preview(self, path: str) -> None:
        """A dataset file's first rows."""
        try:
            preview = preview_file(path)
        except Exception as exc:  # one line for the user, whatever the reader raised
            self.post_message(PreviewReady([], [], {}, "", first_line(exc)))
            return
        self.post_message(PreviewReady.of(preview))

    @work(thread=True, exclusive=True, exit_on_error=False, group="wizard-probe")
    def run_probe(
        self, key: object, choice: DatasetChoice, runs: list[tuple[str, RunConfig]]
    ) -> None:
        """Read the dataset, then time every model: from the store's finished runs of its file,
        else a short calibration decode (the first model stays loaded for the run)."""
        try:
            with self.reader.reading_if_exists() as store:
                suites = runs[0][1].suites if runs else ()  # (a paper dataset's posts)
                dataset = resolve_dataset(choice, store, suites=suites)
                past = past_runs(store, [name for name, _ in runs]) if store is not None else []
        except Exception as exc:
            self.post_message(DatasetRead(key, None, first_line(exc)))
            return
        self.post_message(DatasetRead(key, dataset))
        for index, (model_file, config) in enumerate(runs):
            if get_current_worker().is_cancelled:
                return
            estimate = estimate_time(config, dataset, model_file, past)
            if estimate.low is not None:  # measured on this machine: nothing to load
                self.post_message(ModelTimed(key, index, estimate))
                continue
            try:  # a short calibration decode of this model
                models = load_models(config)
            except Exception as exc:
                self.post_message(ModelTimed(key, index, None, None, first_line(exc)))
                continue
            try:
                probe = probe_speed(models, config, dataset)
                estimate = estimate_time(config, dataset, model_file, past, probe)
            except Exception as exc:  # (the model that failed its decode is freed now)
                models.backend.close()
                self.post_message(ModelTimed(key, index, None, None, first_line(exc)))
                continue
            kept: LoadedModels | None = models  # (the first stays loaded: its run reuses it)
            if index > 0 or get_current_worker().is_cancelled:  # (a cancelled probe's model
                models.backend.close()  # would reach no screen: freed now)
                kept = None
            self.post_message(ModelTimed(key, index, estimate, kept))
