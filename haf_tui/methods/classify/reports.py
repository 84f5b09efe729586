"""classify's report: p(y | x), ŷ and the label mass per run (``queries/classification.sql``)."""

from __future__ import annotations

from typing import Final

from haf_tui.reports.registry import RUN_KEYS, Averaged, Report, select_columns

_RUN_KEYS: Final = RUN_KEYS

CLASSIFY_REPORTS: Final[tuple[Report, ...]] = (
    Report(
        "classification",
        "Label scores (classify suite) — p(y | x), ŷ and the label mass",
        "classification",
        shape=select_columns(
            (
                *_RUN_KEYS,
                ("n", "instances"),
                ("pct_toxic", "% ŷ toxic"),
                ("mean_p_toxic", "mean p(toxic)"),
                ("pct_low_mass", "% mass < 0.5"),
                ("n_gold", "gold"),
                ("pct_correct", "% correct"),
                ("n_stance", "stances"),
                ("pct_agree_stance", "% agree"),
            )
        ),
        terms=(("gold", "the instances with a gold label, which % correct is over"),),
        averages=(
            Averaged("% ŷ toxic", "classify_toxic", scale=100.0),
            Averaged("mean p(toxic)", "classify_p_toxic"),
            Averaged("% mass < 0.5", "classify_label_mass", below=0.5, scale=100.0),
            Averaged("% correct", "classify_toxic", agrees_with="gold", scale=100.0),
            Averaged("% agree", "classify_toxic", agrees_with="stance", scale=100.0),
        ),
        counts=(
            ("% ŷ toxic", "instances"),
            ("mean p(toxic)", "instances"),
            ("% mass < 0.5", "instances"),
            ("% correct", "gold"),
            ("% agree", "stances"),
        ),
    ),
)
