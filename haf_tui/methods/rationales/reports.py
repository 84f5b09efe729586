"""The rationales reports: P1 Table 4 with its shares, plausibility, faithfulness and
complexity per run (over ``queries/rationale_*.sql``)."""

from __future__ import annotations

from typing import Final

from haf_tui.reports.registry import RUN_KEYS, Averaged, Report, select_columns

_RUN_KEYS: Final = RUN_KEYS
AGREEMENT_TERM: Final = (
    "agree F1",
    "token F1 of the row's rationale against the prompted one (ŷ shown) of the same k, over "
    "agree n instances; each row its own (prompted: itself, —)",
)
"""The ``rationales`` report's agreement column: not P2's alignment with the annotators."""
ALIGNMENT_TERM: Final = (
    "align F1 ×100",
    "100 · token F1 against the annotators' HARD rationale (P2's alignment), over align n",
)
"""P2's alignment column of the attribution and plausibility reports."""
_ATTRIBUTIONS: Final = (
    ("attention", "attention"),
    ("saliency", "saliency"),
    ("input×gradient", "input_x_gradient"),
)
_PLAUSIBLE: Final = (("prompted", "prompt_gold"), ("occlusion", "occlusion"), *_ATTRIBUTIONS)
"""Each row of the ``rationales`` report → the stored rationale its plausibility scores."""
_FAITHFUL: Final = (("prompted", "prompt_predicted"), ("occlusion", "occlusion"), *_ATTRIBUTIONS)
"""Each row of the ``rationales`` report → the stored rationale its faithfulness scores."""
_ALIGNED: Final = (*_PLAUSIBLE, ("random", "random"))
"""Each row of the attribution and plausibility reports → the rationale scored against the
annotators (RANDOM: each seed's mean, then the mean over seeds)."""
_FLIPPED: Final = (*_FAITHFUL, ("human", "human"), ("random", "random"),
                   ("everything", "everything"))  # fmt: skip
"""Each row of the attribution and faithfulness reports → the rationale removed."""
_COMPLEX: Final = (
    ("prompted, gold shown", "prompt_gold"), ("prompted, ŷ shown", "prompt_predicted"),
    ("occlusion", "occlusion"), *_ATTRIBUTIONS, ("human", "human"), ("random", "random"),
    ("everything", "everything"),
)  # fmt: skip
"""Each row of the complexity report → its stored rationale (RANDOM: every seed pooled)."""
_WORDS_REMOVED: Final = Averaged(
    "words removed", "size", "rationales", "rationale", _FLIPPED, seeds="each", defined_in=("flip",)
)
"""|R| where the flip is defined, each seed's mean, then the mean over seeds."""
_SCORED: Final = ("comp", "suff")
"""The ``rationales`` report's faithfulness is over the instances where both are defined."""
_SUMMARY_AVERAGES: Final = (
    Averaged(
        "agree F1",
        "rationale_alignment_f1{source}",
        by="rationale",
        sources=(
            ("occlusion", ""),
            *((row, f"_{source}") for row, source in _ATTRIBUTIONS),
        ),
    ),
    *(
        Averaged(label, column, "rationales", "rationale", _PLAUSIBLE, with_gold=True)
        for label, column in (("TOK", "token_f1"), ("AUPRC", "auprc"))
    ),
    *(
        Averaged(
            label, column, "rationales", "rationale", _FAITHFUL, scale=scale, defined_in=defined
        )
        for label, column, scale, defined in (
            ("COMP", "comp", 1.0, _SCORED),
            ("SUFF", "suff", 1.0, _SCORED),
            ("% flip", "flip", 100.0, _SCORED),
            ("CPX H", "cpx_entropy", 1.0, ()),
            ("SPR G", "spr_gini", 1.0, ()),
        )
    ),
    Averaged("instances", "rationale_has_gold", kind="count"),
    Averaged("% mass < 0.5", "rationale_label_mass", below=0.5, scale=100.0),
    Averaged("annotator IoU", "rationale_annotator_iou"),
)
"""The ``rationales`` report's columns that are means of stored per-instance rows."""

RATIONALE_REPORTS: Final[tuple[Report, ...]] = (
    Report(
        "rationales",
        "Rationales — P1 Table 4 per model × dataset × strategy, with the shares",
        "rationale_summary",
        companions=("rationale-attribution",),
        terms=(AGREEMENT_TERM,),
        averages=_SUMMARY_AVERAGES,
        counts=(
            ("IOU", "with gold"),
            ("TOK", "with gold"),
            ("TOK micro", "with gold"),
            ("COMP", "faithful n"),
            ("SUFF", "faithful n"),
            ("% flip", "faithful n"),
            ("CPX H", "CPX n"),
            ("SPR G", "CPX n"),
            ("agree F1", "agree n"),
        ),
        shape=select_columns(
            (
                *_RUN_KEYS,
                ("selection", "selection"),
                ("variant", "prompt"),
                ("rationale", "rationale"),
                ("n", "instances"),
                ("n_gold", "with gold"),
                ("iou_f1", "IOU"),
                ("token_f1", "TOK"),
                ("token_f1_micro", "TOK micro"),
                ("comp", "COMP"),
                ("suff", "SUFF"),
                ("flip_rate", "% flip"),
                ("n_faithful", "faithful n"),
                ("auprc", "AUPRC"),
                ("cpx", "CPX H"),
                ("spr", "SPR G"),
                ("cpx_n", "CPX n"),
                ("n_answers", "answers"),
                ("pct_empty", "% empty"),
                ("pct_out_of_text", "% out-of-text"),
                ("pct_not_k", "% ≠ k"),
                ("pct_low_mass", "% mass < 0.5"),
                ("pct_skipped", "% no gold"),
                ("annotator_iou", "annotator IoU"),
                ("agreement_f1", "agree F1"),
                ("agreement_n", "agree n"),
                ("n_by_label", "instances by gold label"),
                ("n_undecided", "undecided"),
                ("n_tokens_mismatch", "tokens ≠ text"),
                ("n_bad_mask", "bad-mask posts skipped"),
            )
        ),
    ),
    Report(
        "rationale-attribution",
        "Rationales — prompting vs attribution (P2 Table 2, Tables 4/5, Figure 4)",
        "rationale_attribution",
        terms=(ALIGNMENT_TERM,),
        averages=(
            *(
                Averaged(
                    label,
                    "token_f1",
                    "rationales",
                    "rationale",
                    _ALIGNED,
                    with_gold=True,
                    seeds="each",
                    kind=kind,
                    scale=100.0,
                )
                for label, kind in (("align F1 ×100", "mean"), ("± sd", "sd"))
            ),
            *(
                Averaged(
                    label,
                    "flip",
                    "rationales",
                    "rationale",
                    _FLIPPED,
                    seeds="each",
                    kind=kind,
                    scale=100.0,
                )
                for label, kind in (("% flip", "mean"), ("% flip sd", "sd"), ("seeds", "seeds"))
            ),
            _WORDS_REMOVED,
            *(
                Averaged(label, "rationale_quant_gap", kind=kind, absolute=True)
                for label, kind in (("quant gap mean", "mean"), ("quant gap max", "max"))
            ),
            *(
                Averaged(
                    label,
                    "rationale_skew_{source}",
                    by="rationale",
                    kind=kind,
                    sources=(("prompted", "prompted"), ("occlusion", "occlusion"), *_ATTRIBUTIONS),
                )
                for label, kind in (("skew", "mean"), ("skew sd", "sd"))
            ),
        ),
        counts=(
            ("align F1 ×100", "align n"),
            ("% flip", "flip n"),
            ("words removed", "flip n"),
            ("skew", "skew n"),
            ("quant gap mean", "quant gap n"),
            ("quant gap max", "quant gap n"),
        ),
        shape=select_columns(
            (
                *_RUN_KEYS,
                ("selection", "selection"),
                ("rationale", "rationale"),
                ("alignment_f1_x100", "align F1 ×100"),
                ("alignment_f1_x100_sd", "± sd"),
                ("alignment_n", "align n"),
                ("n_seeds", "seeds"),
                ("flip_rate", "% flip"),
                ("flip_rate_sd", "% flip sd"),
                ("words_removed", "words removed"),
                ("flip_n", "flip n"),
                ("skewness", "skew"),
                ("skewness_sd", "skew sd"),
                ("skewness_n", "skew n"),
                ("quant_gap_mean", "quant gap mean"),
                ("quant_gap_max", "quant gap max"),
                ("quant_gap_n", "quant gap n"),
            )
        ),
    ),
    Report(
        "rationale-plausibility",
        "Rationales — plausibility against the annotators (P1 Table 4; P2 Table 2)",
        "rationale_plausibility",
        terms=(ALIGNMENT_TERM,),
        counts=(
            ("IoU-F1", "instances"),
            ("token F1", "instances"),
            ("token F1 micro", "instances"),
            ("AUPRC", "AUPRC n"),
            ("align F1 ×100", "instances"),
        ),
        averages=tuple(
            Averaged(
                label,
                column,
                "rationales",
                "rationale",
                _ALIGNED,
                with_gold=True,
                seeds="each",
                kind=kind,
                scale=scale,
            )
            for label, column, kind, scale in (
                ("IoU P", "iou_precision", "mean", 1.0),
                ("IoU R", "iou_recall", "mean", 1.0),
                ("token F1", "token_f1", "mean", 1.0),
                ("token F1 sd", "token_f1", "sd", 1.0),
                ("token F1 UNION", "token_f1_union", "mean", 1.0),
                ("AUPRC", "auprc", "mean", 1.0),
                ("soft AUPRC", "soft_auprc", "mean", 1.0),
                ("align F1 ×100", "token_f1", "mean", 100.0),
                ("align F1 ×100 sd", "token_f1", "sd", 100.0),
                ("seeds", "source", "seeds", 1.0),
            )
        ),
        shape=select_columns(
            (
                *_RUN_KEYS,
                ("selection", "selection"),
                ("variant", "prompt"),
                ("gold", "gold"),
                ("rationale", "rationale"),
                ("n", "instances"),
                ("n_seeds", "seeds"),
                ("iou_f1", "IoU-F1"),
                ("iou_precision", "IoU P"),
                ("iou_precision_n", "IoU P n"),
                ("iou_recall", "IoU R"),
                ("iou_recall_n", "IoU R n"),
                ("token_f1", "token F1"),
                ("token_f1_sd", "token F1 sd"),
                ("token_f1_micro", "token F1 micro"),
                ("token_f1_union", "token F1 UNION"),
                ("auprc", "AUPRC"),
                ("soft_auprc", "soft AUPRC"),
                ("auprc_n", "AUPRC n"),
                ("alignment_f1_x100", "align F1 ×100"),
                ("alignment_f1_x100_sd", "align F1 ×100 sd"),
            )
        ),
    ),
    Report(
        "rationale-faithfulness",
        "Rationales — faithfulness by removal (P1 Table 4 COMP, SUFF; P2 Tables 4 and 9)",
        "rationale_faithfulness",
        counts=(("% flip", "flip n"), ("words removed", "flip n")),
        averages=(
            *(
                Averaged(
                    label,
                    column,
                    "rationales",
                    "rationale",
                    _FLIPPED,
                    seeds="each",
                    kind=kind,
                    scale=scale,
                )
                for label, column, kind, scale in (
                    ("COMP", "comp", "mean", 1.0),
                    ("SUFF", "suff", "mean", 1.0),
                    ("% flip", "flip", "mean", 100.0),
                    ("% flip sd", "flip", "sd", 100.0),
                    ("instances", "source", "count", 1.0),
                    ("seeds", "source", "seeds", 1.0),
                )
            ),
            _WORDS_REMOVED,
        ),
        shape=select_columns(
            (
                *_RUN_KEYS,
                ("selection", "selection"),
                ("variant", "prompt"),
                ("rationale", "rationale"),
                ("n", "instances"),
                ("n_seeds", "seeds"),
                ("comp", "COMP"),
                ("comp_n", "COMP n"),
                ("suff", "SUFF"),
                ("suff_n", "SUFF n"),
                ("flip_rate", "% flip"),
                ("flip_rate_sd", "% flip sd"),
                ("flip_n", "flip n"),
                ("words_removed", "words removed"),
            )
        ),
    ),
    Report(
        "rationale-complexity",
        "Rationales — complexity and sparsity of each rationale (P1 Table 4 CPX, SPR)",
        "rationale_complexity",
        shape=select_columns(
            (
                *_RUN_KEYS,
                ("selection", "selection"),
                ("variant", "prompt"),
                ("rationale", "rationale"),
                ("n", "rationales"),
                ("cpx_entropy", "CPX H"),
                ("cpx_entropy_n", "CPX H n"),
                ("cpx_entropy_norm", "CPX H/ln n"),
                ("spr_gini", "SPR G"),
                ("spr_gini_n", "SPR G n"),
                ("cpx_ratio", "CPX |R̂|/n"),
                ("spr_ratio", "SPR 1−|R̂|/n"),
                ("n_undefined", "Σv = 0"),
            )
        ),
        averages=(
            Averaged(
                "Σv = 0",
                "source",
                "rationales",
                "rationale",
                _COMPLEX,
                seeds="pooled",
                kind="count",
                where=(("cpx_entropy", None),),
            ),
            Averaged(
                "rationales",
                "source",
                "rationales",
                "rationale",
                _COMPLEX,
                seeds="pooled",
                kind="count",
            ),
            *(
                Averaged(label, column, "rationales", "rationale", _COMPLEX, seeds="pooled")
                for label, column in (
                    ("CPX H", "cpx_entropy"),
                    ("CPX H/ln n", "cpx_entropy_norm"),
                    ("SPR G", "spr_gini"),
                    ("CPX |R̂|/n", "cpx_ratio"),
                    ("SPR 1−|R̂|/n", "spr_ratio"),
                )
            ),
        ),
    ),
)
