"""What the judge's numbers and marks mean, for the ``?`` help and the legends."""

from __future__ import annotations

from typing import Final

from haf_tui.methods.declare import MarkSpec

JUDGE_HELP: Final = """\
Judge (`docs/methods/judge.md`, metrics key `8`; `haf report --report judge`, `judge-vs-haf`;
`haf judge sensitivity`, `haf judge meta`): an LLM rates each explanation on ACORN's eight criteria;
a label's code is its place on the criterion's scale (Overall 1–5, New information 0–3, no 0 /
yes 1, Factual N/A −1, Supports a 0 / b 1 / none −1).

- **label**: the criterion's answer; constrained mode: the most probable label of its slot.
- **p(label)**: the label's probability renormalised over the criterion's allowed labels,
  from their teacher-forced logprobs (constrained mode).
- **mass**: Σ exp lp over the allowed labels: how much the model wanted to answer with a label
  at all; **label-mass warning**: mass < 0.5 (the format forced an answer; trust it less).
- **E**: expected score Σ p(l)·code(l), for Overall, New information and the yes/no criteria
  (there E = p(yes)); Supports and Factual are nominal: no E.
- **≠ stance**: Supports names the other answer than the stance the explanation argued for
  (toxic → a, non-toxic → b): the explanation does not reflect the decision.
- **normalised mean**: mean over instances of (code − min)/(max − min), 0–1, high is good;
  Unnecessary information inverted (1 − x), Factual N/A left out; n = instances with a label.
- **mismatch rate**: % of the explanations with a toxic / non-toxic stance whose Supports is
  ≠ stance (maybe stances counted apart).
- **% failed** (free mode): answers where a criterion's line gave no readable label (left out
  of that criterion's mean).
- **sensitivity cell**: % of (original, edited) explanation pairs whose label for the
  criterion changed; ◆ marks the criterion the edit targets (should change: high is good),
  elsewhere it should stay (low is good).
- **ρ**: Spearman's rank correlation (Pearson's r of average ranks; −1…1) over the n pairs
  with both values: judge Overall or normalised mean against SoS / DiS; in the meta tables
  the judge against the human majority vote. **α**: Krippendorff's agreement of the raters
  (Table 4.1, with the LLM replacing one); **MAE / NMAE / bias**: Table 4.5.
"""
"""What the ``?`` help says of its numbers."""

JUDGE_MARKS: Final = (
    MarkSpec(
        "low",
        "label mass below 0.5: the format forced the answer",
        "judge view, panel 8",
        "mass < 0.5",
    ),
    MarkSpec(
        "≠ stance",
        "Supports names the other answer than the stance",
        "judge view, panel 8",
        "Supports disagrees",
    ),
    MarkSpec(
        "◆",
        "the criterion the edit targets (should change: high is good)",
        "panel 8",
        "edit's target",
    ),
)
"""The marks its view and panel draw."""
