"""How the explorer reads instances: four small queries (instead of one join of reasons and
metrics, ~20 ms alone on a large store) for several instances at once (a read of eight costs
about 1.5 reads of one), assembled into the rows the ``instance_detail`` query gives; and a
bounded cache of what was read."""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from textual.message import Message

from haf_tui.store import Store
from haf_tui.store.readers import (
    JudgeRun,
    instance_metric_values,
    instance_parts,
    instance_rationales,
    instance_tokens,
    run_instance,
    stage_answers,
)
from haf_tui.tui.judge_data import Judgement, read_judgements
from haf_tui.tui.rationale_data import RationaleData, rationale_data
from haf_tui.tui.widgets.token_view import Span, Token

GenKey = tuple[str, int]

REASON_METRICS = ("sos", "rs", "rn", "c_y", "decision_weight", "i_s", "i_n", "uii", "uei")
"""The reason-level metrics ``instance_detail`` pivots into columns."""
STAGE_ORDER = {"justify": 1, "internal": 2, "external": 3, "individual": 4}
"""The order of ``instance_detail``: HAF's stages, then the other suites' (5)."""
CACHE_SIZE = 256
"""Instances kept in memory (a few kB each)."""

_SECOND = ThreadPoolExecutor(max_workers=1, thread_name_prefix="instance-read")


@dataclass
class InstancesLoaded(Message):
    """The run's instances (rows of the ``instances`` query, as dicts)."""

    rows: list[dict[str, Any]]
    run_id: str
    suites: tuple[str, ...] = ("haf",)
    """The suites the run was asked to run (its config)."""
    judges: tuple[JudgeRun, ...] = ()
    """The judge runs whose judgements its instances show (those over its explanations; a
    judge run: itself)."""


@dataclass
class InstancesRead(Message):
    """Instances read (``requested``: every id asked for, even if the read failed)."""

    found: list[InstanceData]
    requested: list[str]


@dataclass
class RationalesRead(Message):
    """An instance's rationales read (``data`` None: the read failed)."""

    instance_id: str
    data: RationaleData | None


@dataclass
class InstanceData:
    """Everything the explorer shows of one instance, read once and cached."""

    instance_id: str
    detail: list[dict[str, Any]]
    tokens: dict[GenKey, list[Token]] = field(default_factory=dict)
    spans: dict[GenKey, dict[int, Span]] = field(default_factory=dict)
    prompts: dict[GenKey, str] = field(default_factory=dict)
    judgements: tuple[Judgement, ...] = ()


class InstanceCache(OrderedDict[str, InstanceData]):
    """The instances read last (least recently used dropped beyond ``size``)."""

    def __init__(self, size: int = CACHE_SIZE) -> None:
        super().__init__()
        self.size = size

    def get_fresh(self, instance_id: str) -> InstanceData | None:
        """The cached instance (marked as used), or None."""
        data = self.get(instance_id)
        if data is not None:
            self.move_to_end(instance_id)
        return data

    def put(self, data: InstanceData) -> None:
        """Keep ``data``; drop the oldest beyond the size."""
        self[data.instance_id] = data
        self.move_to_end(data.instance_id)
        while len(self) > self.size:
            self.popitem(last=False)


def _max(values: list[Any]) -> Any:
    """SQL's ``max``: NULLs ignored, NaN above every number."""
    found = [v for v in values if v is not None]
    if any(isinstance(v, float) and math.isnan(v) for v in found):
        return math.nan
    return max(found) if found else None


def detail_rows(
    generations: list[tuple[Any, ...]],
    reasons: list[tuple[Any, ...]],
    metrics: list[tuple[Any, ...]],
) -> list[dict[str, Any]]:
    """The rows of ``instance_detail`` (one per reason of every generation, a generation
    without reasons once; stage order, then sub_index and reason_index) from the rows of
    :func:`~haf_tui.store.readers.instance_parts`."""
    by_generation: dict[GenKey, list[tuple[Any, ...]]] = {}
    for reason in reasons:
        by_generation.setdefault((reason[0], reason[1]), []).append(reason)
    values: dict[tuple[str, int, int], dict[str, list[Any]]] = {}
    for stage, sub, index, metric, value in metrics:
        if metric in REASON_METRICS:
            values.setdefault((stage, sub, index), {}).setdefault(metric, []).append(value)
    rows: list[dict[str, Any]] = []
    ordered = sorted(generations, key=lambda g: (STAGE_ORDER.get(g[0], 5), g[1]))
    for stage, sub, test, decision, confidence, sentence, finish, n_tokens, _ in ordered:
        base = {
            "stage": stage,
            "sub_index": sub,
            "test": test,
            "decision": decision,
            "decision_confidence": confidence,
            "decision_sentence": sentence,
            "finish_reason": finish,
            "output_tokens": n_tokens,
        }
        own = sorted(by_generation.get((stage, sub), []), key=lambda r: r[2])
        for _, _, index, text, reason_confidence, count, _, _ in own or [(None,) * 8]:
            found = values.get((stage, sub, index), {}) if index is not None else {}
            rows.append(
                base
                | {
                    "reason_index": index,
                    "reason_text": text,
                    "reason_confidence": reason_confidence,
                    "reason_tokens": count,
                }
                | {name: _max(found.get(name, [])) for name in REASON_METRICS}
            )
    return rows


Rows = list[tuple[Any, ...]]


def _by_instance(rows: Rows) -> dict[str, Rows]:
    """Rows grouped by their first column (the instance id), without it."""
    grouped: dict[str, Rows] = {}
    for row in rows:
        grouped.setdefault(str(row[0]), []).append(row[1:])
    return grouped


def read_instances(
    store: Store, run_id: str, ids: list[str], judges: Sequence[JudgeRun] = ()
) -> list[InstanceData]:
    """The instances ``ids`` (those found): generations, reasons, metrics, tokens, spans and
    prompts (the tokens on a second thread while this one reads the rest), and their
    judgements by ``judges``."""
    token_future = _SECOND.submit(instance_tokens, store, run_id, ids)
    parts = instance_parts(store, run_id, ids)
    generations = _by_instance(parts.generations)
    reasons = _by_instance(parts.reasons)
    metrics = _by_instance(parts.reason_metrics)
    judgements = read_judgements(store, judges, ids)
    tokens = _by_instance(token_future.result())
    found = []
    for instance_id in ids:
        if instance_id not in generations:
            continue
        own_reasons = reasons.get(instance_id, [])
        data = InstanceData(instance_id, [], judgements=judgements.get(instance_id, ()))
        for stage, sub, *_, prompt in generations[instance_id]:
            data.prompts[(stage, sub)] = prompt
        for stage, sub, index, _, _, count, first, relevance in own_reasons:
            if first is not None:
                span = Span(first, count, relevance or ())
                data.spans.setdefault((stage, sub), {})[index] = span
        data.detail = detail_rows(
            generations[instance_id], own_reasons, metrics.get(instance_id, [])
        )
        for stage, sub, text, logprob, top_texts, top_logprobs in tokens.get(instance_id, []):
            token = Token(text, logprob, top_texts or (), top_logprobs or ())
            data.tokens.setdefault((stage, sub), []).append(token)
        found.append(data)
    return found


def read_rationales(store: Store, run_id: str, instance_id: str) -> RationaleData:
    """An instance's rationales (the rationales suite) with its word tokens, its annotators'
    gold and its ``rationale_*`` metrics (none when the run's dataset lacks the instance)."""
    instance = run_instance(store, run_id, instance_id)
    if instance is None:
        return RationaleData(instance_id, ())
    return rationale_data(
        instance_id,
        instance.text,
        instance.extra,
        instance_rationales(store, run_id, instance_id),
        instance_metric_values(store, run_id, instance_id, "rationale_"),
        stage_answers(store, run_id, instance_id, "rationale_prompt"),
    )
