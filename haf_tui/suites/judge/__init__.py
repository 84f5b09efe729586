"""The judge suite: an 8-criterion LLM judge of explanation quality (spec ``JUDGE.md``; the
method is :mod:`haf_tui.judge`)."""

from haf_tui.suites.judge.suite import JUDGE, JudgeSuite

__all__ = ["JUDGE", "JudgeSuite"]
