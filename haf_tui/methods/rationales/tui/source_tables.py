"""The rationale sources' tables of the rationale view: faithfulness, plausibility against the
annotators and complexity, one row per source (RANDOM's seeds pooled), in a fixed order."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.text import Text

from haf_tui.methods.rationales.suite.records import RationaleRecord
from haf_tui.methods.rationales.tui.data import RationaleData
from haf_tui.tui.widgets.text_layout import (
    BOLD,
    DIM,
    Column,
    line,
    prose,
    styled,
    table,
    undefined,
)

FAITHFULNESS_ORDER = (
    "prompt_predicted", "occlusion", "attention", "saliency", "input_x_gradient", "human",
    "everything", "random",
)  # fmt: skip
"""The rationale sources of the faithfulness table, in the order it shows them."""
NAMES = {
    "prompt_predicted": "prompted",
    "prompt_gold": "prompted",
    "occlusion": "occlusion",
    "input_x_gradient": "input×grad",
    "human": "human",
    "everything": "everything",
}


def rationale_rows(
    data: RationaleData, sources: Sequence[str], names: Mapping[str, str] | None = None
) -> list[tuple[str, Sequence[RationaleRecord]]]:
    out: list[tuple[str, Sequence[RationaleRecord]]] = []
    for source in sources:
        if source == "random":
            randoms = data.randoms
            if randoms:
                out.append((f"random ×{len(randoms)}", randoms))
            continue
        row = data.row(source)
        if row is not None:
            out.append(((names or NAMES).get(source, source), [row]))
    return out


PLAUSIBILITY_ORDER = ("prompt_gold", *FAITHFULNESS_ORDER[1:5], "random")
FAITHFULNESS_COLUMNS = (
    Column("n", 3, lambda r: r.size, 0, spread=False),
    Column("p(x)", 4, lambda r: r.p_full),
    Column("p−R", 4, lambda r: r.p_without),
    Column("p(R)", 4, lambda r: r.p_only),
    Column("comp", 5, lambda r: r.comp),
    Column("suff", 5, lambda r: r.suff),
    Column("flip", 4, lambda r: r.flip),
)
PLAUSIBILITY_COLUMNS = (
    Column("tok", 4, lambda r: r.token_f1),
    Column("tok∪", 4, lambda r: r.token_f1_union),
    Column("AUPRC", 5, lambda r: r.auprc),
    Column("soft", 4, lambda r: r.soft_auprc),
    Column("IoU P", 5, lambda r: r.iou_precision),
    Column("IoU R", 5, lambda r: r.iou_recall),
)
COMPLEXITY_COLUMNS = (
    Column("|R|/n", 5, lambda r: r.cpx_ratio),
    Column("H", 4, lambda r: r.cpx_entropy),
    Column("H/ln n", 6, lambda r: r.cpx_entropy_norm),
    Column("Gini", 4, lambda r: r.spr_gini),
    Column("a≤0", 3, lambda r: r.n_nonpositive, 0, spread=False),
)


def faithfulness_table(data: RationaleData) -> list[Text]:
    title = prose(("faithfulness", BOLD), f" of ŷ {data.predicted or '—'}")
    rows = rationale_rows(data, FAITHFULNESS_ORDER)
    legend = styled(line("p(x), p−R, p(R): p(ŷ | x, without R, only R)"), DIM)
    legend2 = styled(line("comp = p(x) − p−R ↑ · suff = p(x) − p(R) ↓"), DIM)
    return [title, *table(FAITHFULNESS_COLUMNS, rows), legend, legend2]


def plausibility_table(data: RationaleData) -> list[Text]:
    gold_row = data.row("prompt_gold")
    names = dict(NAMES)
    if gold_row is not None and data.gold_prompt_differs:
        names["prompt_gold"] = "prompted g"
    rows = [
        (name, group)
        for name, group in rationale_rows(data, PLAUSIBILITY_ORDER, names)
        if any(not undefined(c.value(r)) for r in group for c in PLAUSIBILITY_COLUMNS)
    ]
    if not rows:
        return []
    title = prose(("plausibility", BOLD), " against the annotators")
    legend = [styled(line("tok: token F1 vs gold, tok∪ vs UNION"), DIM)]
    if gold_row is not None:
        shown = f"prompted{' g' if data.gold_prompt_differs else ''}"
        legend.append(styled(line(f"{shown}: asked why {gold_row.label_shown or '—'}"), DIM))
    return [title, *table(PLAUSIBILITY_COLUMNS, rows), *legend]


def complexity_table(data: RationaleData) -> list[Text]:
    rows = rationale_rows(data, FAITHFULNESS_ORDER)
    if not rows:
        return []
    title = prose(("complexity", BOLD), " (of |a| for occlusion)")
    return [title, *table(COMPLEXITY_COLUMNS, rows)]
