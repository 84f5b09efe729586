"""Token rationales of a toxicity decision (``docs/methods/rationales.md``): the method, pure and
public. ``words``: word tokens, ``norm`` and masks; ``prompts``: the prompting-based rationale
prompts and selection rules; ``parsing``: reading an answer into a mask; ``metrics``: ground
truth from annotators, plausibility, faithfulness, complexity and agreement."""
