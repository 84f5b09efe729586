"""The comparison view's pictures: the chosen runs' metric means with their intervals and the
paired differences (:func:`statistics_parts`), one instance across runs side by side
(:func:`instance_parts`); :mod:`panel_view` draws them in a view that scrolls both ways.

The metrics are those the methods declare for the suites the chosen runs share
(:attr:`RunStatistics.metrics`): their labels, better directions and definitions."""

from __future__ import annotations

from collections.abc import Sequence

from rich import box
from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from haf_tui.methods.declare import MetricSpec
from haf_tui.reports import format_number
from haf_tui.reports.compare_report import better_of
from haf_tui.reports.comparison import (
    CONFIDENCE,
    WILCOXON_MIN_PAIRS,
    WILCOXON_TOO_FEW,
    MeanInterval,
    PairedDifference,
)
from haf_tui.store.comparison_readers import (
    REASON_METRICS,
    ComparedRun,
    InstanceAcross,
    ReasonValues,
    RunAnswer,
)
from haf_tui.store.readers import suites_text
from haf_tui.tui.compare_data import RunStatistics, letter
from haf_tui.tui.widgets.fit_columns import FitColumn
from haf_tui.vocabulary import METRIC_LABELS

CONFIDENCE_LABEL = "C(JUSTIFY)"
"""The row of the JUSTIFY decision's confidence, read with the answer; left out when a compared
metric has this label (it is that same value: one row, not two)."""
RUN_COLUMN_WIDTH = 38
"""The least width of one run's column in the side-by-side instance table: its reasons
table's #, SoS, RS and RN (5 cells each, 2 between columns: 25) and 13 for the reason (so
four runs fit 200 columns; more, or a narrower screen, scroll sideways)."""
_LABELS: dict[str, str] = {str(k): v for k, v in METRIC_LABELS.items()}


PENDING = "…"
"""What an interval, a Wilcoxon p or a "better" not computed yet shows (the mean and n beside it
are final)."""
CHOSEN, NOT_CHOSEN = "●", "○"
"""How the runs table marks a chosen run (with its letter) and one not chosen."""


RUN_COLUMNS = (
    FitColumn("", rank=0),
    FitColumn("run", min_width=10, rank=1, cut_middle=True),
    FitColumn("suites", min_width=8, rank=2),
    FitColumn("model", min_width=10, rank=3),
    FitColumn("dataset", min_width=8, rank=4),
    FitColumn("n", rank=5),
    FitColumn("status", rank=6),
    FitColumn("quant", rank=7),
    FitColumn("date", rank=8),
)
"""The runs table's columns as they give way on a narrow screen (long values cut with "…", a
run's name in its middle; then the date, the quantisation … left out)."""


def run_rows(runs: Sequence[ComparedRun], chosen: Sequence[ComparedRun]) -> list[tuple[str, ...]]:
    """The runs table's rows: mark and letter, name, suites, model, dataset, size, status,
    quantisation and date of each of ``runs`` (``chosen``: in their order, lettered A, B, …)."""
    letters = {run.run_id: letter(index) for index, run in enumerate(chosen)}
    return [
        (
            f"{CHOSEN} {letters[run.run_id]}" if run.run_id in letters else NOT_CHOSEN,
            f"{run.label} ({run.run_id})" if run.label else run.run_id,
            suites_text(run.suites),
            run.model_file.removesuffix(".gguf"),
            run.dataset_id,
            f"{run.n_done}/{run.n_planned}",
            run.status,
            run.model_quant or "?",
            f"{run.created_at:%Y-%m-%d %H:%M}",
        )
        for run in runs
    ]


def _interval(found: MeanInterval | PairedDifference, pending: bool = False) -> str:
    if pending and found.n >= 2:  # (fewer than two values: no interval to wait for)
        return PENDING
    if found.low is None or found.high is None:
        return "—"
    return f"[{format_number(found.low)}, {format_number(found.high)}]"


def _p(value: float | None, pending: bool = False) -> str:
    if pending:
        return PENDING
    if value is None:
        return "—"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def _title(text: str) -> Text:
    return Text(text, style="bold")


def run_legend(stats: Sequence[RunStatistics]) -> Table:
    """Which run each letter is: label, id, suites, model, quantisation, dataset, instances
    finished."""
    table = Table(box=None, show_header=False, pad_edge=False, padding=(0, 1))
    table.add_column(style="bold", no_wrap=True)
    table.add_column(no_wrap=True)
    for found in stats:
        run = found.run
        named = f"{run.label} ({run.run_id})" if run.label else run.run_id
        table.add_row(  # (a label is text a user typed: never read as markup)
            found.letter,
            Text(
                f"{named} · {suites_text(run.suites)} · {found.model} · "
                f"{run.model_quant or '?'} · {run.dataset_id} · {run.n_done}/{run.n_planned} · "
                f"{run.status}"
            ),
        )
    return table


def compared(stats: Sequence[RunStatistics]) -> tuple[MetricSpec, ...]:
    """The metrics the chosen runs compare (the same for each run)."""
    return stats[0].metrics if stats else ()


def metrics_legend(metrics: Sequence[MetricSpec]) -> Text:
    """The compared metrics with their better direction, and what ``better`` says, in one
    line that wraps."""
    arrows = " ".join(f"{spec.label}{spec.arrow}" for spec in metrics)
    return Text(
        f"{arrows} (↑ higher is better, ↓ lower, neither: no direction) · better: the run the "
        "direction favours where the Δ interval leaves out 0 (=: it holds 0)"
    )


def metric_definitions(metrics: Sequence[MetricSpec]) -> str:
    """The compared metrics' definitions as Markdown (the ``?`` help shows it here)."""
    lines = ["## The compared metrics", ""]
    lines += [f"- {spec.line()}" for spec in metrics] or ["- none: the chosen runs share none"]
    return "\n".join(lines)


def means_table(stats: Sequence[RunStatistics]) -> Table:
    """One row per metric: each run's mean over instances, its interval and n."""
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("metric", style="bold", no_wrap=True)
    percent = round(CONFIDENCE * 100)
    for found in stats:
        table.add_column(found.letter, justify="right", no_wrap=True)
        table.add_column(f"{percent} % CI", justify="right", no_wrap=True)
        table.add_column("n", justify="right", no_wrap=True)
    for spec in compared(stats):
        cells = []
        for found in stats:
            mean = found.means[spec.name]
            pending = spec.name in found.pending
            cells += [format_number(mean.mean), _interval(mean, pending), str(mean.n)]
        table.add_row(spec.label, *cells)
    return table


def _better(spec: MetricSpec, diff: PairedDifference, first: str, second: str) -> str:
    """The letter of the run the metric's better direction favours when the interval leaves
    out 0, ``=`` when it holds 0, nothing when the metric has no direction or no interval."""
    found = better_of(spec.better, diff)
    return {"this": second, "first": first, "neither": "="}.get(found or "", "")


def paired_parts(reference: RunStatistics, found: RunStatistics) -> list[RenderableType]:
    """``found − reference`` per metric on the instances both define it (or why not), and
    which finished instances only one of the two has (every id listed)."""
    title = f"paired {found.letter} − {reference.letter}"
    if found.pairing:
        return [_title(title), Text(f"{PENDING} computing: reading the instances", "italic")]
    if found.paired is None or found.overlap is None:
        return [
            Text(
                f"{title}: not paired ({found.letter} is on {found.run.dataset_id}, "
                f"{reference.letter} on {reference.run.dataset_id})",
                style="italic",
            )
        ]
    percent = round(CONFIDENCE * 100)
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("metric", style="bold", no_wrap=True)
    for heading in ("Δ mean", f"{percent} % CI", "Wilcoxon p", "n pairs"):
        table.add_column(heading, justify="right", no_wrap=True)
    table.add_column(f"only {reference.letter}", justify="right", no_wrap=True)
    table.add_column(f"only {found.letter}", justify="right", no_wrap=True)
    table.add_column("better", justify="right", no_wrap=True)
    for spec in compared([found]):
        diff = found.paired[spec.name]
        pending = spec.name in found.pending_paired
        tested = pending and diff.n >= WILCOXON_MIN_PAIRS  # (else no test to wait for)
        better = _better(spec, diff, reference.letter, found.letter)
        if pending and spec.better and diff.n >= 2:
            better = PENDING
        table.add_row(
            spec.label, format_number(diff.mean), _interval(diff, pending),
            _p(diff.p_value, tested), str(diff.n), str(len(diff.only_first)),
            str(len(diff.only_second)), better,
        )  # fmt: skip
    split = found.overlap
    counts = Text(
        f"only {reference.letter} / only {found.letter}: instances where only that run defines "
        f"the metric · finished instances: {len(split.both)} in both, only {reference.letter} "
        f"{len(split.only_first)}, only {found.letter} {len(split.only_second)}"
    )
    parts: list[RenderableType] = [
        _title(f"{title} (same instances, {percent} % paired bootstrap CI, Wilcoxon signed-rank)"),
        table,
        counts,
    ]
    if any(0 < found.paired[spec.name].n < WILCOXON_MIN_PAIRS for spec in compared([found])):
        parts.append(Text(f"Wilcoxon p {WILCOXON_TOO_FEW}", style="dim"))
    for name, ids in ((reference.letter, split.only_first), (found.letter, split.only_second)):
        if ids:
            parts.append(Text(f"only {name}: {', '.join(ids)}", style="dim"))
    return parts


def statistics_parts(stats: Sequence[RunStatistics]) -> list[RenderableType]:
    """The legend, the means, and each run's paired table against the first (the reference)."""
    if not stats:
        return [Text("no runs chosen: space picks runs, a picks all", style="italic")]
    percent = round(CONFIDENCE * 100)
    parts: list[RenderableType] = [run_legend(stats)]
    if len(stats) > 1:
        first = stats[0].letter
        parts.append(
            Text(f"{first}: the reference, the first run chosen; each Δ is a run − {first}", "dim")
        )
    parts.append(Text(""))
    if not compared(stats):
        parts.append(
            Text("no metric to compare: the chosen runs share no suite with values", "italic")
        )
        return parts
    parts += [
        _title(f"mean over instances ({percent} % bootstrap CI; n: instances defined)"),
        means_table(stats),
    ]
    if any(found.computing for found in stats):
        parts.append(Text(f"{PENDING} computing: the means and n are final", style="italic"))
    for found in stats[1:]:
        parts += [*paired_parts(stats[0], found), Text("")]
    if len(stats) == 1:
        parts.append(Text("pick a second run (space) for the paired differences", style="dim"))
    parts.append(Text.assemble(metrics_legend(compared(stats)), (" · ? definitions", "dim")))
    return parts


def _reasons(reasons: Sequence[ReasonValues]) -> RenderableType:
    if not reasons:
        return Text("no reasons", style="dim")
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, expand=True)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("reason", ratio=1)
    for metric in REASON_METRICS:
        table.add_column(_LABELS[metric], justify="right", no_wrap=True)
    for reason in reasons:
        table.add_row(
            str(reason.index + 1),
            Text(reason.text),
            *(format_number(reason.values.get(m)) for m in REASON_METRICS),
        )
    return table


def instance_parts(
    instance: InstanceAcross, stats: Sequence[RunStatistics], width: int, position: str = ""
) -> list[RenderableType]:
    """One instance across runs: its text, then a column per run (at least
    :data:`RUN_COLUMN_WIDTH` wide) with the stance, why it stopped, the instance metrics and
    the reasons with their SoS, RS and RN."""
    letters = {found.run.run_id: found for found in stats}
    head = Text()
    head.append(instance.instance_id, style="bold")
    if instance.label is not None:
        head.append(f" · gold {instance.label}")
    if position:
        head.append(f" · {position}", style="dim")
    if not instance.answers:
        return [head, Text("no run chosen", style="dim")]
    label_width = 11
    n_runs = len(instance.answers)  # (each column: 2 cells of padding and 1 of rule)
    column = max(RUN_COLUMN_WIDTH, (width - label_width - 3 * n_runs - 1) // n_runs)
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("", style="bold", no_wrap=True, width=label_width)
    for answer in instance.answers:
        found = letters.get(answer.run_id)
        name = f"{found.letter} · {found.model}" if found else answer.run_id
        table.add_column(name, width=column, no_wrap=False)
    answers = instance.answers
    table.add_row("stance", *(_stance(a, letters) for a in answers))
    labels = {spec.label for spec in compared(stats)}
    if CONFIDENCE_LABEL not in labels and any(a.confidence is not None for a in answers):
        table.add_row(CONFIDENCE_LABEL, *(format_number(a.confidence) for a in answers))
    for spec in compared(stats):
        table.add_row(spec.label, *(format_number(a.metrics.get(spec.name)) for a in answers))
    table.add_row("reasons", *(_reasons(a.reasons) for a in answers))
    text = Text(instance.text or "(text not stored)", style="italic")
    return [head, text, Text(""), table]


def _stance(answer: RunAnswer, letters: dict[str, RunStatistics]) -> Text:
    """The run's stance, why it stopped; for an instance the run lacks, which: one not in its
    dataset, or one it has not finished."""
    if not answer.in_dataset:
        found = letters.get(answer.run_id)
        dataset = f" ({found.run.dataset_id})" if found else ""
        return Text(f"not in this run's dataset{dataset}", style="dim")
    if not answer.finished:
        return Text("not finished in this run", style="dim")
    shown = Text(answer.stance or "—")
    if answer.stopped:
        shown.append(f" (stopped: {answer.stopped})", style="dim")
    return shown
