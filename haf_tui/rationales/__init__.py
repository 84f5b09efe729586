"""The token-rationale method at its public path: it lives in
:mod:`haf_tui.methods.rationales.core` (``labels``: :mod:`haf_tui.methods.classify.core.labels`)."""
