"""The aspect-wise LLM judge of explanation quality (``docs/methods/judge.md``, the ACORN rubric):
the method, pure and public. ``criteria``: the eight criteria, their labels, codes and guideline
text; ``guidelines``: the human rating guidelines (general instruction, examples, FAQ) for the
Verbatim prompt; ``prompts``: the Default and Verbatim prompts, the six invariance variants and the
toxicity item; ``parsing``: reading a free-text answer into labels; ``scores``: label distributions,
mass and expected scores from per-label log-probabilities; ``metrics``: Krippendorff's α, Spearman
ρ, votes, the LLM as a replacing or extra rater, MAE/NMAE/bias and the change rate."""
