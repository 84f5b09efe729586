"""Token rationales of a toxicity decision (spec ``RATIONALES.md``)."""
