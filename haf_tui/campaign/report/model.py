"""What a campaign report holds before it is written in any format: its cells (model ×
dataset → run), tables of means with bootstrap intervals, and figures (SVG and PDF)."""

from __future__ import annotations

from dataclasses import dataclass, field

from haf_tui.reports.comparison import CONFIDENCE, N_RESAMPLES, SEED, MeanInterval
from haf_tui.vocabulary import HafError

CI_METHOD = (
    f"{CONFIDENCE:.0%} percentile bootstrap interval over instances "
    f"({N_RESAMPLES} resamples, seed {SEED}; scipy.stats.bootstrap)"
)
"""How every interval of the report is made, as its captions say it."""
UNFINISHED_MARK = "†"
"""Marks a cell whose run has not finished: its numbers are over its finished instances."""


class CampaignReportError(HafError):
    """A campaign report cannot be written as asked (one line)."""


@dataclass(frozen=True)
class Cell:
    """One cell of the campaign's grid: a model on a dataset, and the run that holds it;
    ``finished`` False when the run has not finished (``n_done`` of ``n_planned``)."""

    model: str
    dataset: str
    run_id: str
    finished: bool = True
    n_done: int = 0
    n_planned: int = 0

    @property
    def name(self) -> str:
        """``model × dataset`` as a caption names the cell."""
        return f"{self.model} × {self.dataset}"


@dataclass(frozen=True)
class Line:
    """One line of a table: a model, a group within the table (a stage, a test; "" when the
    table has none), a metric label with its better direction, and each dataset's estimate
    (a dataset the model has no cell for: missing)."""

    model: str
    group: str
    metric: str
    arrow: str
    estimates: dict[str, MeanInterval]


@dataclass(frozen=True)
class Table:
    """A table laid out models × datasets: ``slug`` names its files, ``caption`` says what the
    numbers are; ``definitions``: (label, one-line definition) of its metrics; ``lacking``:
    the cells that lack the suite (left out); ``values``: every instance value behind it,
    (cell, group, metric label) → values, for the distribution figures."""

    slug: str
    title: str
    caption: str
    datasets: list[str]
    lines: list[Line]
    definitions: list[tuple[str, str]] = field(default_factory=list)
    lacking: list[Cell] = field(default_factory=list)
    values: dict[tuple[Cell, str, str], list[float]] = field(default_factory=dict)
    group_label: str = ""


@dataclass(frozen=True)
class RunTable:
    """A method's own report over the campaign's runs, as the method shapes it (one or more
    rows per cell, run-level numbers, no interval): its columns after model and dataset, and
    the rows (values as stored: the CSV keeps them exact)."""

    slug: str
    title: str
    caption: str
    columns: list[str]
    rows: list[tuple[object, ...]]


@dataclass(frozen=True)
class Figure:
    """A figure drawn once: its file stem, title, caption, and the SVG (self-contained) and
    PDF it was saved as."""

    slug: str
    title: str
    caption: str
    svg: str
    pdf: bytes


@dataclass(frozen=True)
class CampaignReport:
    """The whole report: the campaign's name, its cells, tables, figures and notes; ``kind``
    heads it ("Campaign report"; ``haf report --format html`` of runs: "Run report")."""

    campaign: str
    cells: list[Cell]
    tables: list[Table]
    figures: list[Figure]
    notes: list[str]
    run_tables: list[RunTable] = field(default_factory=list)
    csv_extra: dict[str, tuple[list[str], list[tuple[object, ...]]]] = field(default_factory=dict)
    kind: str = "Campaign report"

    @property
    def unfinished(self) -> list[Cell]:
        """The cells whose run has not finished."""
        return [cell for cell in self.cells if not cell.finished]
