"""The campaign report's "sensitivity to g" table: for every cell re-scored with other
similarity models (``haf rescore``, a grid's ``similarity = [...]``), each of HAF's six
metrics' mean under each g with its bootstrap interval, and the paired difference from the
cell's own g over the same instances, with its interval and Wilcoxon's p."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from haf_tui.campaign.report.model import CI_METHOD, Cell, RunTable
from haf_tui.reports.comparison import WILCOXON_TOO_FEW, mean_interval, paired_difference
from haf_tui.store import Store
from haf_tui.store.comparison_readers import HAF_METRICS, run_metric_values
from haf_tui.store.derived_runs import children_of
from haf_tui.vocabulary import METRIC_LABELS

_LABELS: Final[dict[str, str]] = {str(k): v for k, v in METRIC_LABELS.items()}
COLUMNS: Final = [
    "model", "dataset", "metric", "g", "run", "mean", "CI low", "CI high", "n",
    "Δ vs first g", "Δ CI low", "Δ CI high", "Wilcoxon p", "n pairs",
]  # fmt: skip


def sensitivity_table(store: Store, cells: Sequence[Cell]) -> RunTable | None:
    """The table, or None when no cell was re-scored."""
    rows: list[tuple[object, ...]] = []
    for cell in cells:
        derived = [d for d in children_of(store, cell.run_id) if d.status == "finished"]
        if not derived:
            continue
        own_g = store.get_run(cell.run_id).similarity_model
        runs = [(cell.run_id, own_g), *((d.run_id, d.similarity_model) for d in derived)]
        values = run_metric_values(store, [run for run, _ in runs], HAF_METRICS)
        for metric in HAF_METRICS:
            first = {i: v.get(metric) for i, v in values[cell.run_id].items()}
            if not any(value is not None for value in first.values()):
                continue
            for run_id, g in runs:
                of_run = {i: v.get(metric) for i, v in values[run_id].items()}
                mean = mean_interval(of_run)
                row: list[object] = [cell.model, cell.dataset, _LABELS[metric], g, run_id,
                                     mean.mean, mean.low, mean.high, mean.n]  # fmt: skip
                if run_id == cell.run_id:
                    row += [None] * 5
                else:
                    d = paired_difference(first, of_run)
                    row += [d.mean, d.low, d.high, d.p_value, d.n]
                rows.append(tuple(row))
    if not rows:
        return None
    caption = (
        "Each cell's HAF metrics under each similarity model g: the run as generated (first "
        "g) and re-scored from the same stored answers and tokens with each other g. Mean "
        f"over instances with its {CI_METHOD}; Δ: the paired difference from the first g over "
        "the instances both define, with its paired bootstrap interval and Wilcoxon's "
        f"signed-rank p ({WILCOXON_TOO_FEW})."
    )
    return RunTable("sensitivity-to-g", "Sensitivity to g", caption, list(COLUMNS), rows)
