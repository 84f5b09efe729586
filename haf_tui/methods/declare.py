"""What a method declares, so every face can be drawn from it: its suite, its settings, its
metrics (definition, range, better direction), its reports and named queries, the rate unit of
its stages, its metric panels and legends, its explorer list columns and its explorer node.

A method's ``method.py`` builds one :class:`Method`; :mod:`haf_tui.methods.registry` finds it
(built in, or through the ``haf_tui.methods`` entry point group). Views are data and plain
functions returning rich renderables or text: nothing here imports Textual.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Generic, Literal

from haf_tui.config import RunConfig, SettingsT
from haf_tui.methods.base import Suite
from haf_tui.reports.registry import Report, ReportResult
from haf_tui.store.method_tables import MethodMigration
from haf_tui.store.records import InstanceRecord

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

    from haf_tui.reports.charts import Histogram
    from haf_tui.store import Store

Better = Literal["higher", "lower"]
RateUnit = Literal["tokens", "texts"]
"""What a stage's progress rate counts: generated tokens, or texts scored by teacher forcing."""
StageUnits = Mapping[str, RateUnit] | Callable[[RunConfig], Mapping[str, RateUnit]]
"""The rate unit of each stage: fixed, or read from a run's config (a mode that forces replies
in one run and samples them in another)."""

StageBounds = Mapping[str, tuple[int, int | None]]
"""Per stage, the least and the most generations one instance may need (most None: no bound
is known before its answers)."""
Forecast = Callable[[InstanceRecord, RunConfig], StageBounds]
"""A method's forecast of one instance's generations before any answer (the wizard's plan)."""


@dataclass(frozen=True)
class MetricSpec:
    """One metric a method stores: ``name`` as in ``instance_metrics.metric`` (or
    ``reason_metrics.metric``), a short ``label``, a one-line ``definition``, its range, the
    better direction (None: neither) and whether it is per instance or per reason, or per run
    (a value only its reports compute, stored in neither table)."""

    name: str
    label: str
    definition: str
    value_range: str = "0–1"
    better: Better | None = "higher"
    per: Literal["instance", "reason", "run"] = "instance"
    undefined_when: str = ""

    @property
    def arrow(self) -> str:
        """↑ when higher is better, ↓ when lower is, nothing when neither."""
        return {"higher": "↑", "lower": "↓"}.get(self.better or "", "")

    def line(self) -> str:
        """The definition as one line: ``SoS (0–1, higher is better): …``."""
        better = f", {self.better} is better" if self.better else ""
        return f"{self.label} ({self.value_range}{better}): {self.definition}"


@dataclass(frozen=True)
class MarkSpec:
    """A mark a method's views draw (the ``?`` help's table of marks, the legends): the mark,
    what it means, where it appears and what a legend line says of it (default: its
    meaning). Two methods may declare one mark: their places are joined."""

    mark: str
    meaning: str
    where: str
    short: str = ""


@dataclass(frozen=True)
class RunView:
    """One run a panel shows: its id and what the run selector says of it."""

    run_id: str
    model_file: str
    dataset_id: str
    label: str


@dataclass(frozen=True)
class PanelInput:
    """What a panel draws from: the chosen runs, every report it named or reads (all runs;
    filter by ``run_id``), the width, for pooled tables the pooling mode, for a panel of
    histograms the binned values by (run id, metric), its ``histograms`` metrics' specs and
    the one shown (``metric_index``), and what its ``load`` returned (``extra``)."""

    runs: Sequence[RunView]
    reports: Mapping[str, ReportResult]
    width: int
    pooling: str = "both"
    metric_index: int = 0
    extra: Mapping[str, Any] = field(default_factory=dict)
    histograms: Mapping[tuple[str, str], Histogram] = field(default_factory=dict)
    metrics: Sequence[MetricSpec] = ()


PanelLoader = Callable[["Store", Mapping[str, ReportResult]], Mapping[str, Any]]
"""What a panel reads besides its reports, once, in the metrics screen's worker: called with
the store and the reports read (all runs); its result is the panel's ``PanelInput.extra``."""


@dataclass(frozen=True)
class PanelSpec:
    """A metric panel of the metrics screen: its id, tab title, the reports whose rows it
    draws (``enter`` shows them whole), the metrics of its legend (and of ``?``), how it
    draws (None: its histograms, then each report as a table of the chosen runs' rows),
    whether the pooling rule applies (``g``), the reports it reads besides (``also_reads``),
    the instance metrics it bins into histograms (``d`` steps through them), what else it
    reads (``load``) and its tab's title on a narrow screen (``short``)."""

    key: str
    title: str
    reports: tuple[str, ...] = ()
    legend: tuple[str, ...] = ()
    draw: Callable[[PanelInput], RenderableType] | None = None
    pooled: bool = False
    also_reads: tuple[str, ...] = ()
    histograms: tuple[str, ...] = ()
    load: PanelLoader | None = None
    short: str = ""
    """The tab's title where the full titles do not all fit in one line (default: ``title``)."""

    @property
    def tab(self) -> str:
        """The short title (``short``, else ``title``)."""
        return self.short or self.title


LOW_MASS: Final = 0.5
"""A label mass below it: the model wanted to say something else than a label, so the
probability shown (its share of the label spellings) rests on little."""
LOW_MASS_SIGN: Final = "°"
"""After a probability in the explorer's list whose label mass is below :data:`LOW_MASS`."""


@dataclass(frozen=True)
class ListColumn:
    """A column of the explorer's instance list: an instance metric's value (or a value the
    ``instances`` query gives each row, e.g. HAF's stance), by ``metric``. ``shown_at``: its
    place among the columns shown always (None: shown only while the list is sorted by it);
    ``digits``: decimals (None: text, neither sorted nor filtered by); ``key``: the name a
    range or the sort says (default ``metric``), ``aliases``: other names for it; ``mass``:
    the instance metric of the label mass a probability rests on (its cell then carries
    :data:`LOW_MASS_SIGN` when that mass is below :data:`LOW_MASS`)."""

    metric: str
    label: str
    shown_at: int | None = 0
    width: int = 5
    digits: int | None = 3
    key: str = ""
    aliases: tuple[str, ...] = ()
    mass: str = ""

    @property
    def name(self) -> str:
        """What a range or the sort calls it."""
        return self.key or self.metric


@dataclass(frozen=True)
class NodeInput:
    """What a method's explorer node shows of one instance: its text, its instance metrics of
    this method and its stored generations (stage, sub-prompt, decision, output text)."""

    instance_id: str
    text: str
    metrics: Mapping[str, float | None]
    generations: Sequence[Mapping[str, Any]]


def metric_lines(node: NodeInput, specs: Sequence[MetricSpec]) -> list[str]:
    """The default node: one ``label  value`` line per declared instance metric."""
    lines = []
    for spec in specs:
        if spec.per != "instance":
            continue
        value = node.metrics.get(spec.name)
        shown = "—" if value is None else f"{value:.3f}"
        lines.append(f"{spec.label} {spec.arrow}  {shown}".replace("  ", " ", 1))
    return lines


@dataclass(frozen=True)
class MethodCommand:
    """A ``haf`` sub-command a method brings: ``add_parser`` adds it to ``haf``'s
    sub-parsers, ``run`` runs it on the database (read-only) and prints to the console;
    ``run_first``: the ``haf run`` arguments to run before it, or None (the new run's id is
    then ``args.run``)."""

    name: str
    add_parser: Callable[[argparse._SubParsersAction[argparse.ArgumentParser]], None]
    run: Callable[[argparse.Namespace, Store, Console], int]
    run_first: Callable[[argparse.Namespace], list[str] | None] | None = None


@dataclass(frozen=True)
class Method(Generic[SettingsT]):
    """Everything one method declares. ``suite``: how it runs; ``settings``: its pydantic
    model (each field's description, range and choices become a ``haf run`` flag and a wizard
    field; stored under ``RunConfig.settings[name]``); ``flag_prefix``: its flags' prefix
    (``--<prefix>-<field>``; a field may name its own flag with ``json_schema_extra={"flag":
    "--x"}``); ``metrics``; ``reports`` (registered when the method loads) and
    ``summary_reports`` (what ``haf report`` shows for a run holding it), ``suggested_reports``
    (what ``haf report`` names for its numbers, the first then its details); ``queries_dir``: a
    folder of ``NAME.sql`` named queries it adds; ``units``: the rate unit of each stage
    (default tokens; a callable of the run's config when it depends on a setting: see
    :meth:`unit`); ``panels``, ``list_columns`` and ``node``: its views; ``migrations``: its
    own tables (``<name>_…``), numbered from 1, applied by the store when a file lacks them;
    ``view``: the workbench's own explorer view it uses, by kind (empty: the node of
    :meth:`node_lines`); ``posts``: which posts of a paper dataset it wants (``paper``: the
    HAF paper's selection, ``every_post``: every post of the split; None: either);
    ``commands``: ``haf`` sub-commands of its own; ``n_parallel``: the sequences its runs
    decode together unless the user says (``--parallel``), when it wants more than a run's
    default (forced scorings of near-identical texts share more of their prompts); a run takes
    it when all its methods ask for more (the fewest); ``forecast``: the least and most
    generations per stage of one instance before any answer, where its plan's first tasks do
    not say them (None: :meth:`InstancePlan.planned` once known, else the first tasks, the
    plan's open stages unbounded), and ``forecast_note``: what that count assumes, in one
    sentence for the wizard's review; ``workbench``: its own part of the workbench,
    ``"package.module:NAME"`` (an :class:`~haf_tui.tui.method_parts.ExplorerPart`: its explorer
    node, the pane its node opens and what that pane reads), imported only when the workbench
    asks (:func:`~haf_tui.methods.declared_parts.workbench_of`; empty: none); ``dataset_formats``:
    the dataset files it reads itself, each ``"package.module:NAME"`` (a
    :class:`~haf_tui.datasets.formats.DatasetFormat`: the judge's ACORN), imported when a
    dataset is read (:func:`~haf_tui.methods.registry.dataset_formats`), which ``haf run
    --dataset NAME --file PATH`` and ``haf datasets import`` read; ``run_datasets``: the
    datasets it makes of a stored run's answers, each ``"package.module:NAME"`` (a
    :class:`~haf_tui.datasets.formats.RunDataset`: the judge's ``run:ID``, a run's
    explanations), read by ``haf run --dataset PREFIX:RUN_ID``; ``help``: what its other
    numbers mean, Markdown for the ``?`` help's "Other numbers"; ``marks``: the marks its
    views draw; ``needs``: what a run of it needs of its dataset, one clause for the error of a
    run whose suites ask nothing of an instance; ``legacy_settings``: where its settings were in a
    config stored before methods were packages (store schema < 8), old top-level key → field
    (None: the whole settings table), lifted under ``settings.<name>`` when such a config is
    read."""

    name: str
    title: str
    description: str
    suite: Suite
    settings: type[SettingsT] | None = None
    flag_prefix: str = ""
    default: bool = False
    metrics: tuple[MetricSpec, ...] = ()
    reports: tuple[Report, ...] = ()
    summary_reports: tuple[str, ...] = ()
    suggested_reports: tuple[str, ...] = ()
    queries_dir: Path | None = None
    units: StageUnits = field(default_factory=dict)
    panels: tuple[PanelSpec, ...] = ()
    list_columns: tuple[ListColumn, ...] = ()
    node: Callable[[NodeInput], list[str]] | None = None
    migrations: tuple[MethodMigration, ...] = ()
    view: str = ""
    posts: Literal["paper", "every_post"] | None = None
    commands: tuple[MethodCommand, ...] = ()
    n_parallel: int | None = None
    forecast: Forecast | None = None
    forecast_note: str = ""
    workbench: str = ""
    dataset_formats: tuple[str, ...] = ()
    run_datasets: tuple[str, ...] = ()
    help: str = ""
    marks: tuple[MarkSpec, ...] = ()
    needs: str = ""
    legacy_settings: Mapping[str, str | None] = field(default_factory=dict)

    def settings_of(self, config: RunConfig) -> SettingsT:
        """This method's settings in ``config`` (its defaults where the config has none)."""
        if self.settings is None:
            raise TypeError(f"the {self.name} method has no settings")
        return config.settings_for(self.name, self.settings)

    def unit(self, stage: str, config: RunConfig | None = None) -> RateUnit:
        """What the progress rate of ``stage`` counts in a run with ``config`` (None: the
        default settings)."""
        units = self.units(config or RunConfig()) if callable(self.units) else self.units
        return units.get(stage, "tokens")

    def node_lines(self, node: NodeInput) -> list[str]:
        """The explorer node of one instance: the method's own, else its metrics."""
        if self.node is not None:
            return self.node(node)
        return metric_lines(node, self.metrics)
