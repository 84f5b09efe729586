"""The wizard's review step: per picked model, the generations per stage as each method's plan
gives them (exact, a range, or at least), the time as a range (or "measuring…" until the run's
first instances say), with a sentence on where each estimate comes from (runs measured here,
or a short calibration decode of that model), what each method's count assumes, and, for a run
with HAF, what the embedded model does with HAF's answer format."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from haf_tui.config import RunConfig
from haf_tui.datasets import DEMO_TEXTS_ID, Dataset
from haf_tui.defaults import (
    DEMO_MAX_NEW_TOKENS,
    DEMO_MAX_TEXTS,
    DEMO_SEED,
    DEMO_UNTIL_COMPLETE,
    EMBEDDED_MODEL_NAME,
)
from haf_tui.methods.registry import methods_of, run_stages
from haf_tui.pipeline.demo import demo_said
from haf_tui.pipeline.estimate import TimeEstimate
from haf_tui.pipeline.planning import plan_run
from haf_tui.vocabulary import STAGES

EMBEDDED_FORMAT_NOTE = (
    f"{EMBEDDED_MODEL_NAME} follows HAF's answer format only sometimes: an instance whose "
    "JUSTIFY answer has no clear stance with listed reasons stops there, and its metrics show —. "
    f"The demo (its own texts in order until {DEMO_UNTIL_COMPLETE} went through every stage, at "
    f"most {DEMO_MAX_TEXTS}; greedy decoding, seed {DEMO_SEED}, {DEMO_MAX_NEW_TOKENS} tokens: "
    "make run's) was chosen so that 3 go on (docs/demo.md); with other texts or settings, "
    "often none does."
)
"""What the review says before a run of the embedded model (docs/demo.md, "The demo")."""


def _what_runs(config: RunConfig, dataset: Dataset, instances: int) -> str:
    """``8 instances of built-in sample``; the demo's texts with their stop rule: ``The
    demo's 25 texts in order until 3 go through every stage (haf run --demo's rule)``."""
    until = config.until_complete
    if until is None:
        return f"{counted(instances, 'instance')} of {dataset.name}"
    if dataset.dataset_id == DEMO_TEXTS_ID:
        said = demo_said(instances, until)
        return f"{said[0].upper()}{said[1:]} (haf run --demo's rule)"
    went = "goes" if until == 1 else "go"
    return (
        f"At most {counted(instances, 'instance')} of {dataset.name}, in order until {until} "
        f"{went} through every stage"
    )


def counted(count: int, noun: str) -> str:
    """``1 instance``, ``3 instances``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


class RunReview(Static):
    """What will run, one row per model, and how long it may take."""

    DEFAULT_CSS = """
    RunReview { height: auto; padding: 0 1; }
    """

    def show(
        self,
        runs: list[tuple[str, RunConfig]],
        dataset: Dataset | None,
        estimates: dict[int, TimeEstimate],
        errors: dict[int, str],
    ) -> str:
        """Draw the table and the note for ``runs`` (label, config); returns the note's text."""
        table = Table(title="What will run", expand=False)
        table.add_column("model")
        stages = run_stages(runs[0][1])
        for stage in stages:
            table.add_column(stage, justify="right")
        table.add_column("estimated time", justify="right")
        note = Text()
        if dataset is None:
            note.append("Reading the dataset …")
        else:
            first = runs[0][1]
            instances = plan_run(first, dataset).instances
            note.append(
                f"{_what_runs(first, dataset, instances)}. Generations per stage come from "
                "each method's plan: one figure is exact, a–b goes from the least to the "
                "most, ≥n is at least."
            )
            for method in methods_of(first):
                if method.forecast_note:
                    note.append(f"\n{method.forecast_note}")
        for index, (label, config) in enumerate(runs):
            if dataset is None:
                table.add_row(Text(label), *["…" for _ in stages], "…")
                continue
            plan = plan_run(config, dataset)
            estimate = estimates.get(index)
            time = estimate.text() if estimate is not None else "calibrating …"
            if index in errors:
                time = "unknown"
            counts = [plan.counts[s].text() if s in plan.counts else "0" for s in stages]
            table.add_row(Text(label), *counts, time)
            if index in errors:
                note.append(f"\n{label}: no estimate ({errors[index]}).")
            elif estimate is None:
                note.append(f"\n{label}: a short calibration decode is timing this model …")
            elif estimate.low is None:
                note.append(f"\n{label}: {estimate.text()} ({estimate.basis})")
            else:
                note.append(f"\n{label}: {estimate.text()}, from {estimate.basis}.")
        if len(runs) > 1:
            note.append("\nThe runs go one after another.")
        if any(config.model.path is None and STAGES[0] in run_stages(config) for _, config in runs):
            note.append(f"\n{EMBEDDED_FORMAT_NOTE}")
        note.append(
            "\nThe monitor replaces each estimate with the run's observed rate and an ETA as "
            "soon as it has one. ctrl+s or Start begins."
        )
        self.update(Group(table, Text(""), note))
        return note.plain
