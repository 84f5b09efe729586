"""The campaign report's figures, drawn with matplotlib (Agg, no display; imported only when a
report is written): HAF's Figure 2 per model across datasets, and each table's per-instance
distributions (box plots per cell). Each is saved as SVG (text as text, ids made unique, no
external reference) and PDF."""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from typing import Any

from haf_tui.campaign.report.model import CI_METHOD, Cell, Figure, Table
from haf_tui.reports.query_running import run_named
from haf_tui.store import Store

FIGURE2_QUERY = "figure2"
"""HAF's named query behind Figure 2 (SoS and DiS by stance × JUSTIFY confidence band)."""
_STANCES = ("toxic", "maybe", "non-toxic")
_BANDS = ("low", "medium", "high")
_MAX_PANELS = 12
"""At most this many metrics' panels in one distribution figure (the rest are left out)."""


def _pyplot() -> Any:
    """matplotlib's pyplot on the Agg backend, with settings that make the SVG reproducible
    and self-contained."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    from matplotlib import pyplot

    matplotlib.rcParams.update(
        {
            "svg.fonttype": "none",
            "text.usetex": False,  # (labels are the user's text: never TeX, never mathtext)
            "text.parse_math": False,
            "svg.hashsalt": "haf-campaign",
            "pdf.fonttype": 42,
            "font.size": 9,
            "axes.spines.top": False,
            "axes.spines.right": False,
        }
    )
    return pyplot


def _clean_svg(text: str, slug: str) -> str:
    """The SVG as one ``<svg>`` element: no XML declaration, DOCTYPE or metadata, its ids
    prefixed with ``slug`` (several figures inline in one HTML page must not share one)."""
    text = re.sub(r"<\?xml[^>]*\?>\s*", "", text)
    text = re.sub(r"<!DOCTYPE[^>]*>\s*", "", text)
    text = re.sub(r"<metadata>.*?</metadata>\s*", "", text, flags=re.DOTALL)
    ids = set(re.findall(r'\bid="([^"]+)"', text))
    for found in sorted(ids, key=len, reverse=True):
        new = f"{slug}-{found}"
        text = text.replace(f'id="{found}"', f'id="{new}"')
        text = text.replace(f"url(#{found})", f"url(#{new})")
        text = text.replace(f'href="#{found}"', f'href="#{new}"')
    return text.strip() + "\n"


def _saved(pyplot: Any, figure: Any, slug: str, title: str, caption: str) -> Figure:
    svg, pdf = io.StringIO(), io.BytesIO()
    figure.savefig(svg, format="svg", metadata={"Date": None, "Creator": None})
    figure.savefig(pdf, format="pdf", metadata={"CreationDate": None, "Creator": None})
    pyplot.close(figure)
    return Figure(slug, title, caption, _clean_svg(svg.getvalue(), slug), pdf.getvalue())


def _figure2_rows(store: Store, cells: Sequence[Cell]) -> dict[str, dict[tuple[str, str], Any]]:
    """Run id → (stance, band) → (SoS mean, SoS n, DiS mean, DiS n)."""
    columns, rows = run_named(store, FIGURE2_QUERY, {"run_ids": [c.run_id for c in cells]})
    at = {name: columns.index(name) for name in columns}
    found: dict[str, dict[tuple[str, str], Any]] = {}
    for row in rows:
        key = (str(row[at["stance"]]), str(row[at["band"]]))
        found.setdefault(str(row[at["run_id"]]), {})[key] = (
            row[at["sos_mean"]],
            row[at["sos_n"]],
            row[at["dis_mean"]],
            row[at["dis_n"]],
        )
    return found


def figure2(store: Store, cells: Sequence[Cell]) -> list[Figure]:
    """Figure 2 for each model: mean SoS and DiS per stance × JUSTIFY confidence band, one bar
    per dataset (none when no cell has a value)."""
    found = _figure2_rows(store, cells)
    pyplot = _pyplot()
    figures: list[Figure] = []
    groups = [(stance, band) for stance in _STANCES for band in _BANDS]
    for number, model in enumerate(dict.fromkeys(c.model for c in cells), start=1):
        of_model = [c for c in cells if c.model == model and found.get(c.run_id)]
        if not of_model:
            continue
        figure, axes = pyplot.subplots(1, 2, figsize=(9.5, 3.4), sharey=True)
        width = 0.8 / len(of_model)
        for panel, (axis, name, at) in enumerate(zip(axes, ("SoS", "DiS"), (0, 2), strict=True)):
            for k, cell in enumerate(of_model):
                values = [found[cell.run_id].get(g, (None, 0, None, 0))[at] for g in groups]
                heights = [float("nan") if v is None else float(v) for v in values]
                xs = [i + (k - (len(of_model) - 1) / 2) * width for i in range(len(groups))]
                axis.bar(xs, heights, width, label=cell.dataset if panel == 0 else None)
            axis.set_xticks(range(len(groups)), [band for _, band in groups], fontsize=7)
            for at_stance, stance in enumerate(_STANCES):
                middle = at_stance * len(_BANDS) + (len(_BANDS) - 1) / 2
                axis.text(middle, -0.16, stance, ha="center", fontsize=8,
                          transform=axis.get_xaxis_transform())  # fmt: skip
            axis.set_title(f"{name} by stance × JUSTIFY confidence")
            axis.set_ylim(0, 1)
        axes[0].set_ylabel("mean over instances")
        figure.legend(loc="upper right", fontsize=7, frameon=False)
        figure.suptitle(f"Figure 2 — {model}", fontsize=10)
        figure.tight_layout(rect=(0, 0.03, 0.9, 1))
        caption = (
            f"Figure 2 for {model}: mean instance SoS and DiS per JUSTIFY stance and band of the "
            "JUSTIFY decision confidence C (low < 0.6 ≤ medium < 0.8 ≤ high), one bar per "
            "dataset; finished instances; an empty cell has no bar (n per bar: "
            "tables/figure2.csv)."
        )
        figures.append(_saved(pyplot, figure, f"figure2-{number}", f"Figure 2 — {model}", caption))
    return figures


def figure2_csv(store: Store, cells: Sequence[Cell]) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Figure 2's numbers per cell, for ``tables/figure2.csv``."""
    found = _figure2_rows(store, cells)
    columns = ["model", "dataset", "run_id", "stance", "band", "sos_mean", "sos_n"]
    columns += ["dis_mean", "dis_n"]
    rows = [
        (c.model, c.dataset, c.run_id, stance, band, *values)
        for c in cells
        for (stance, band), values in found.get(c.run_id, {}).items()
    ]
    return columns, rows


def distributions(table: Table, number: int) -> Figure | None:
    """Box plots of a table's per-instance values: one panel per metric (and group), one box
    per cell (None when the table has no values)."""
    panels: list[tuple[str, list[tuple[str, list[float]]]]] = []
    cells = list(dict.fromkeys(key[0] for key in table.values))
    for line in table.lines:
        name = f"{line.group} · {line.metric}" if line.group else line.metric
        if any(title == name for title, _ in panels):
            continue
        boxes = [
            (f"{c.model}\n{c.dataset}", table.values.get((c, line.group, line.metric), []))
            for c in cells
        ]
        if any(values for _, values in boxes):
            panels.append((name, boxes))
    panels = panels[:_MAX_PANELS]
    distinct = {value for values in table.values.values() for value in values}
    if not panels or len(distinct) <= 2:  # (a share: each instance 0 or 100; no spread to draw)
        return None
    pyplot = _pyplot()
    columns = min(3, len(panels))
    rows = (len(panels) + columns - 1) // columns
    figure, axes = pyplot.subplots(
        rows, columns, figsize=(3.4 * columns, 2.6 * rows), squeeze=False
    )
    for axis, (name, boxes) in zip(axes.flat, panels, strict=False):
        data = [values or [float("nan")] for _, values in boxes]
        axis.boxplot(data, showmeans=True, widths=0.6)
        axis.set_xticks(range(1, len(boxes) + 1), [label for label, _ in boxes], fontsize=6)
        axis.set_title(name, fontsize=8)
    for axis in list(axes.flat)[len(panels) :]:
        axis.set_visible(False)
    figure.suptitle(f"Distributions — {table.title}", fontsize=9)
    figure.tight_layout()
    caption = (
        f"Per-instance values behind “{table.title}”: one box per cell (median, quartiles, "
        "whiskers at 1.5 IQR, triangle: the mean the table reports with its interval, "
        f"{CI_METHOD}); finished instances with a defined value."
    )
    title = f"Distributions: {table.title}"
    return _saved(pyplot, figure, f"dist-{number}-{table.slug}", title, caption)
