"""The classify suite: label scores p(y | x) by teacher forcing (spec ``RATIONALES.md`` §4.1)."""

from haf_tui.suites.classify.labels import LabelScores, classify_messages, label_scores
from haf_tui.suites.classify.suite import CLASSIFY, ClassifySuite

__all__ = ["CLASSIFY", "ClassifySuite", "LabelScores", "classify_messages", "label_scores"]
