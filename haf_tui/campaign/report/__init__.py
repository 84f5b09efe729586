"""A campaign's paper report: HAF's Tables 1, 2 and 4 and every suite's per-instance metrics
across models × datasets (means with bootstrap intervals and n), Figure 2 and the metric
distributions, as Markdown, CSV, LaTeX and one self-contained HTML file.

Everything is read and drawn first, then each file is written to a temporary file renamed
into place; a file that exists is replaced only with ``force`` (else one line naming it)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from haf_tui.campaign.report.model import CampaignReport, CampaignReportError, Figure
from haf_tui.campaign.report.sensitivity import sensitivity_table
from haf_tui.campaign.report.tables import campaign_cells, campaign_tables
from haf_tui.store import Store
from haf_tui.store.comparison_readers import run_suites
from haf_tui.store.safe_files import TargetExistsError, atomic_target, check_target

FORMATS: Final = ("markdown", "latex", "csv", "html")
"""The formats a campaign report is written in."""
_HAF: Final = "haf"
"""The suite whose runs have Figure 2 (its ``figure2`` named query)."""

__all__ = [
    "FORMATS",
    "CampaignReport",
    "CampaignReportError",
    "build_campaign_report",
    "report_files",
    "write_campaign_report",
]


def build_campaign_report(
    store: Store,
    campaign: str,
    cells: Sequence[tuple[str, str, str]],
    *,
    kind: str = "Campaign report",
) -> CampaignReport:
    """Read and draw the whole report (tables, figures) of the cells (model, dataset, run);
    ``kind`` heads it."""
    from haf_tui.campaign.report import figures

    found = campaign_cells(store, cells)
    tables, reports, notes = campaign_tables(store, found, runs=kind != "Campaign report")
    sensitivity = sensitivity_table(store, found)  # (cells re-scored with other g's)
    if sensitivity is not None:
        reports.append(sensitivity)
    drawn: list[Figure] = []
    extra = {}
    suites = run_suites(store, [cell.run_id for cell in found])
    with_haf = [cell for cell in found if _HAF in suites.get(cell.run_id, ())]
    if with_haf:
        drawn += figures.figure2(store, with_haf)
        extra["figure2"] = figures.figure2_csv(store, with_haf)
    for number, table in enumerate(tables, start=1):
        figure = figures.distributions(table, number)
        if figure is not None:
            drawn.append(figure)
    return CampaignReport(campaign, found, tables, drawn, notes, reports, extra, kind)


def report_files(report: CampaignReport, formats: Sequence[str]) -> dict[str, bytes]:
    """Relative path → content of every file the report writes in ``formats`` (the figures
    always)."""
    from haf_tui.campaign.report.html import to_html
    from haf_tui.campaign.report.latex import to_latex
    from haf_tui.campaign.report.text_formats import to_csv_files, to_markdown

    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise CampaignReportError(
            f"unknown report format {unknown[0]!r} (known: {', '.join(FORMATS)})"
        )
    files: dict[str, bytes] = {}
    if "markdown" in formats:
        files["report.md"] = to_markdown(report).encode()
    if "csv" in formats:
        for name, text in to_csv_files(report).items():
            files[f"tables/{name}"] = text.encode()
    if "latex" in formats:
        files["report.tex"] = to_latex(report).encode()
    if "html" in formats:
        files["report.html"] = to_html(report).encode()
    for figure in report.figures:
        files[f"figures/{figure.slug}.svg"] = figure.svg.encode()
        files[f"figures/{figure.slug}.pdf"] = figure.pdf
    return files


def write_campaign_report(
    store: Store,
    campaign: str,
    cells: Sequence[tuple[str, str, str]],
    formats: Sequence[str],
    out_dir: Path,
    *,
    force: bool = False,
    kind: str = "Campaign report",
) -> list[Path]:
    """Write the campaign's report into ``out_dir`` (see the module); returns the paths
    written. CampaignReportError (one line) for an unknown format, a run the store lacks, a
    folder in it that links outside it, or an existing file without ``force`` (nothing is
    written then; a symlink is replaced, its target never written), or a file that cannot be
    written (each file is whole or absent; the line says how many were written before it).
    ``kind`` heads the report ("Campaign report")."""
    if not formats:
        raise CampaignReportError("no report format asked for")
    report = build_campaign_report(store, campaign, cells, kind=kind)
    files = report_files(report, formats)
    out = Path(out_dir).expanduser()
    inside = Path(os.path.realpath(out))
    targets: list[Path] = []
    for name in files:
        try:
            target = check_target(out / name, [store.path], overwrite=force)
        except TargetExistsError:
            raise CampaignReportError(
                f"{out / name} exists: not replaced without --force"
            ) from None
        if not target.parent.is_relative_to(inside):  # (a folder inside it is a link out)
            folder = (out / name).parent
            raise CampaignReportError(
                f"{folder} is a link to {target.parent}, outside {out}: not followed; "
                "remove it or give another --out"
            )
        targets.append(target)
    written: list[Path] = []
    for target, content in zip(targets, files.values(), strict=True):
        try:
            with atomic_target(target) as temporary:
                temporary.write_bytes(content)
        except OSError as exc:  # (a file where a folder goes, no permission, a full disk)
            done = f"; {len(written)} of {len(files)} files were written" if written else ""
            raise CampaignReportError(
                f"cannot write {target}: {exc.strerror or exc}{done}"
            ) from exc
        written.append(target)
    return [out / name for name in files]
