"""Token rationales of a toxicity decision (``docs/methods/rationales.md``)."""
