"""The LLM-judge method at its public path: it lives in :mod:`haf_tui.methods.judge.core`."""
