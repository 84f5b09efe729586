"""The rationales suite: token rationales of a toxicity decision (spec ``RATIONALES.md``; the
method is :mod:`haf_tui.rationales`)."""

from haf_tui.suites.rationales.suite import RATIONALES, RationalesSuite

__all__ = ["RATIONALES", "RationalesSuite"]
