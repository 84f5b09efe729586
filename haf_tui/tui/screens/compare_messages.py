"""The comparison view's messages: what its thread workers post (the runs, their values, the
statistics and one instance drawn) for its handlers to show, and what the runs' worker hands
the statistics' worker (:class:`FirstFound`)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message
from textual.strip import Strip

from haf_tui.store.comparison_readers import DefinedValues
from haf_tui.tui.compare_data import CompareData, RunStatistics


@dataclass(frozen=True)
class FirstFound:
    """What the runs' worker found of the runs first chosen (``run_ids``), for the statistics'
    worker: their kept statistics, else (None) their defined values (None: not read); what
    failed in their look-up (the statistics' worker raises it)."""

    run_ids: tuple[str, ...]
    kept: list[RunStatistics] | None
    defined: DefinedValues | None
    failed: Exception | None = None


@dataclass
class RunsListed(Message):
    """The runs and their versions (no instance values yet)."""

    data: CompareData


@dataclass
class CompareLoaded(Message):
    """The runs and their instance values."""

    data: CompareData


@dataclass
class StatisticsDrawn(Message):
    """The statistics of the chosen runs, drawn at a width."""

    key: tuple[tuple[str, ...], int]
    stats: list[RunStatistics]
    lines: list[Strip]


@dataclass
class InstanceDrawn(Message):
    """One instance across the chosen runs, drawn at a width."""

    key: tuple[tuple[str, ...], str, int]
    lines: list[Strip]
