"""The classify suite: label scores p(y | x) by teacher forcing (spec ``RATIONALES.md`` §4.1;
the method is :mod:`haf_tui.rationales.labels`)."""

from haf_tui.suites.classify.suite import CLASSIFY, ClassifySuite

__all__ = ["CLASSIFY", "ClassifySuite"]
