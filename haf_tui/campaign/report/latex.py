"""The campaign report as one standalone LaTeX document (``report.tex``): booktabs tables with
their captions, the figures' PDFs (``figures/*.pdf``), packages every TeX installation has
(geometry, booktabs, graphicx, float). Every label is escaped, every character outside ASCII
spelled in LaTeX, so ``pdflatex report.tex`` compiles it as it is."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import Final

from haf_tui.campaign.report.layout import (
    CELL_COLUMNS,
    cell_rows,
    has_groups,
    header,
    rows,
    run_table_rows,
)
from haf_tui.campaign.report.model import CampaignReport, Table

_SPECIALS: Final = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
}
_UNICODE: Final = {
    "—": "---",
    "–": "--",
    "−": "$-$",
    "×": r"$\times$",
    "·": r"$\cdot$",
    "↑": r"$\uparrow$",
    "↓": r"$\downarrow$",
    "→": r"$\rightarrow$",
    "†": r"\textdagger{}",
    "≥": r"$\geq$",
    "≤": r"$\leq$",
    "≠": r"$\neq$",
    "≈": r"$\approx$",
    "±": r"$\pm$",
    "Σ": r"$\Sigma$",
    "ρ": r"$\rho$",
    "α": r"$\alpha$",
    "ŷ": r"$\hat{y}$",
    "“": "``",
    "”": "''",
    "‘": "`",
    "’": "'",
    "…": r"\ldots{}",
}


def escape(text: str) -> str:
    """``text`` as LaTeX source: specials escaped, non-ASCII characters spelled in LaTeX (a
    letter with an accent as the plain letter, an unknown symbol as ?)."""
    out: list[str] = []
    for char in text:
        if char in _SPECIALS:
            out.append(_SPECIALS[char])
        elif char in _UNICODE:
            out.append(_UNICODE[char])
        elif char == "\n":
            out.append(" ")
        elif ord(char) < 128:
            out.append(char)
        else:
            plain = unicodedata.normalize("NFKD", char).encode("ascii", "ignore").decode()
            out.append(escape(plain) if plain else "?")
    return "".join(out)


_PREAMBLE: Final = r"""\documentclass[10pt]{article}
\usepackage[T1]{fontenc}
\usepackage[utf8]{inputenc}
\usepackage[a4paper,landscape,margin=1.5cm]{geometry}
\usepackage{booktabs}
\usepackage{graphicx}
\usepackage{float}
\setlength{\parindent}{0pt}
\setlength{\parskip}{4pt}
\newcommand{\fitwidth}[1]{\resizebox{\ifdim\width>\linewidth\linewidth\else\width\fi}{!}{#1}}
"""


def tabular(
    columns: Sequence[str], body: Sequence[Sequence[str]], left: int, breaks: Sequence[int] = ()
) -> str:
    """A booktabs tabular: the first ``left`` columns left-aligned, the others right-aligned;
    ``breaks``: the rows before which a little space separates groups (a new model)."""
    spec = "l" * left + "r" * (len(columns) - left)
    lines = [rf"\begin{{tabular}}{{{spec}}}", r"\toprule"]
    lines.append(" & ".join(escape(c) for c in columns) + r" \\")
    lines.append(r"\midrule")
    for index, row in enumerate(body):
        if index in breaks:
            lines.append(r"\addlinespace")
        lines.append(" & ".join(escape(v) for v in row) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines)


def _table(table: Table, report: CampaignReport) -> str:
    body = rows(table, report.cells)
    lines = table.lines
    breaks = [i for i in range(1, len(lines)) if lines[i].model != lines[i - 1].model]
    columns = header(table)
    left = 3 if has_groups(table) else 2
    definitions = "".join(
        rf"\par\footnotesize {escape(definition)}" for _, definition in table.definitions
    )
    return "\n".join(
        [
            r"\begin{table}[H]",
            r"\centering",
            rf"\textbf{{{escape(table.title)}}}\par",
            r"\small",
            rf"\fitwidth{{{tabular(columns, body, left, breaks)}}}",
            rf"\par\footnotesize {escape(table.caption)}{definitions}",
            r"\end{table}",
        ]
    )


_FIGURE_SIZE: Final = r"width=\linewidth,height=0.75\textheight,keepaspectratio"


def to_latex(report: CampaignReport) -> str:
    """The whole report as a standalone LaTeX document."""
    title = rf"\section*{{{escape(report.kind)} --- {escape(report.campaign)}}}"
    cells = tabular(CELL_COLUMNS, cell_rows(report), 4)
    parts = [_PREAMBLE, r"\begin{document}", title, r"\subsection*{Cells}"]
    parts.append("\n".join([r"\begin{center}\small", rf"\fitwidth{{{cells}}}", r"\end{center}"]))
    parts += [rf"{escape(note)}\par" for note in report.notes]
    for table in report.tables:
        parts.append(_table(table, report))
    for run_table in report.run_tables:
        body = tabular(run_table.columns, run_table_rows(run_table), 2)
        parts.append(
            "\n".join(
                [
                    r"\begin{table}[H]",
                    r"\centering",
                    rf"\textbf{{{escape(run_table.title)}}}\par",
                    r"\small",
                    rf"\fitwidth{{{body}}}",
                    rf"\par\footnotesize {escape(run_table.caption)}",
                    r"\end{table}",
                ]
            )
        )
    for figure in report.figures:
        parts.append(
            "\n".join(
                [
                    r"\begin{figure}[H]",
                    r"\centering",
                    rf"\textbf{{{escape(figure.title)}}}\par",
                    rf"\includegraphics[{_FIGURE_SIZE}]{{figures/{figure.slug}.pdf}}",
                    rf"\par\footnotesize {escape(figure.caption)}",
                    r"\end{figure}",
                ]
            )
        )
    parts.append(r"\end{document}")
    return "\n\n".join(parts) + "\n"
