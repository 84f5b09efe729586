"""How the explorer reads instances: the store's small reads of several instances at once (a
read of eight costs about 1.5 reads of one), pivoted into ``instance_detail`` rows by
:func:`~haf_tui.store.instance_readers.detail_rows`, with their tokens, spans and prompts; and
a bounded cache of what was read."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from textual.message import Message

from haf_tui.config import RunConfig
from haf_tui.methods.declare import Method
from haf_tui.reports import first_with_reasons, get_query, instance_rows
from haf_tui.store import RunRecord, Store
from haf_tui.store.annotations import InstanceNote, instance_notes
from haf_tui.store.instance_readers import (
    DetailRow,
    instance_parts,
    instance_tokens,
    metric_values_of,
    run_answers,
)
from haf_tui.store.instance_readers import detail_rows as pivot_detail
from haf_tui.tui.filters import DEFAULT_SCHEMA, ListSchema
from haf_tui.tui.method_parts import AttachedReader, ExplorerPart, related_runs
from haf_tui.tui.run_cache import VALUES_CACHE, DatabaseState
from haf_tui.tui.widgets.token_view import Span, Token

GenKey = tuple[str, int]

CACHE_SIZE = 256
"""Instances kept in memory (a few kB each)."""
WITH_MISSING = 3, 1
"""The rows after and before an uncached instance read with it (a few: it is waited for); the
explorer's first instance is read with as many (:func:`opening_ids`)."""


class _OfInstance(Protocol):
    @property
    def instance_id(self) -> str: ...


_Row = TypeVar("_Row", bound=_OfInstance)
_SECOND = ThreadPoolExecutor(max_workers=1, thread_name_prefix="instance-read")


@dataclass
class InstancesLoaded(Message):
    """The run's instances (rows of the ``instances`` query, as dicts)."""

    rows: list[dict[str, Any]]
    run_id: str
    suites: tuple[str, ...] = field(default_factory=lambda: RunConfig().suites)
    """The suites the run was asked to run (its config)."""
    related: dict[str, tuple[object, ...]] = field(default_factory=dict)
    """By method: the other runs whose items its instances show (a judge run's ratings of
    its explanations; a judge run: itself), as the method's part of the explorer says."""
    schema: ListSchema = DEFAULT_SCHEMA
    """What its list shows, sorts and filters by (from its methods' declarations)."""
    reading: tuple[str, ...] = ()
    """Instances the worker that posted this reads next (their :class:`InstancesRead`
    follows): the one the list opens on and its neighbours."""


@dataclass
class InstancesRead(Message):
    """Instances read (``requested``: every id asked for, even if the read failed; ``failed``:
    what stopped the read, one line)."""

    found: list[InstanceData]
    requested: list[str]
    failed: str | None = None


@dataclass
class AnswersRead(Message):
    """The model's answers to a run's instances (instance id → its answers), for the search."""

    run_id: str
    answers: dict[str, str]


@dataclass
class PaneRead(Message):
    """What a method's pane shows of an instance, read (``data`` None: the read failed)."""

    method: str
    instance_id: str
    data: object | None


@dataclass
class InstanceData:
    """Everything the explorer shows of one instance, read once and cached."""

    instance_id: str
    detail: list[DetailRow]
    tokens: dict[GenKey, list[Token]] = field(default_factory=dict)
    spans: dict[GenKey, dict[int, Span]] = field(default_factory=dict)
    prompts: dict[GenKey, str] = field(default_factory=dict)
    attached: dict[str, tuple[object, ...]] = field(default_factory=dict)
    """By method: its items of related runs (their ``read_many``)."""
    metrics: dict[str, float | None] = field(default_factory=dict)
    """Its instance metrics (those asked for), by name."""


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


def _by_instance(rows: Iterable[_Row]) -> dict[str, list[_Row]]:
    """Rows grouped by their instance id."""
    grouped: dict[str, list[_Row]] = {}
    for row in rows:
        grouped.setdefault(row.instance_id, []).append(row)
    return grouped


def read_instances(
    store: Store,
    run_id: str,
    ids: list[str],
    attached: Mapping[str, AttachedReader] | None = None,
    shown_metrics: Sequence[str] = (),
) -> list[InstanceData]:
    """The instances ``ids`` (those found): generations, reasons, metrics, tokens, spans and
    prompts (the tokens on a second thread while this one reads the rest), each method's items
    of related runs (``attached``: its reader, by method) and their instance metrics
    ``shown_metrics``."""
    token_future = _SECOND.submit(instance_tokens, store, run_id, ids)
    parts = instance_parts(store, run_id, ids)
    generations = _by_instance(parts.generations)
    reasons = _by_instance(parts.reasons)
    metrics = _by_instance(parts.reason_metrics)
    items = {name: read(store, ids) for name, read in (attached or {}).items()}
    values = metric_values_of(store, run_id, shown_metrics, ids)
    tokens = _by_instance(token_future.result())
    found = []
    for instance_id in ids:
        if instance_id not in generations:
            continue
        own_reasons = reasons.get(instance_id, [])
        data = InstanceData(
            instance_id,
            [],
            attached={name: tuple(found.get(instance_id, ())) for name, found in items.items()},
            metrics=values.get(instance_id, {}),
        )
        for g in generations[instance_id]:
            data.prompts[(g.stage, g.sub_index)] = g.prompt_text
        for r in own_reasons:
            if r.token_first is not None:
                span = Span(r.token_first, r.token_count, r.relevance or ())
                data.spans.setdefault((r.stage, r.sub_index), {})[r.reason_index] = span
        data.detail = pivot_detail(
            generations[instance_id], own_reasons, metrics.get(instance_id, [])
        )
        for t in tokens.get(instance_id, []):
            token = Token(t.text, t.logprob, t.top_texts or (), t.top_logprobs or ())
            data.tokens.setdefault((t.stage, t.sub_index), []).append(token)
        found.append(data)
    return found


def opening_ids(
    rows: Sequence[Mapping[str, Any]], around: tuple[int, int] = WITH_MISSING
) -> tuple[str, ...]:
    """The instance the explorer opens on with every filter off (the first with reasons, in
    dataset order) and the rows read with it (``around``: how many after and before it, as a
    key's read of an uncached one); none when no instance went on after JUSTIFY."""
    first = first_with_reasons(rows)
    if first is None:
        return ()
    at = next(i for i, row in enumerate(rows) if str(row["instance_id"]) == first)
    after, before = around
    near = [*rows[at + 1 : at + 1 + after], *rows[max(at - before, 0) : at][::-1]]
    return (first, *(str(row["instance_id"]) for row in near))


def run_rows(
    store: Store, run_id: str, schema: ListSchema, state: DatabaseState | None
) -> list[dict[str, Any]]:
    """A run's instances as the explorer lists them: the ``instances`` query's rows with the
    metrics ``schema``'s columns show that the query has not. As read before from the database
    in the same ``state`` (:func:`~haf_tui.tui.run_cache.database_state`; copies: the explorer
    adds to its rows), else read (and kept unless ``state`` is None)."""
    wanted = schema.row_metrics()

    def read() -> list[dict[str, Any]]:
        rows = instance_rows(store, run_id)
        missing = [m for m in wanted if not rows or m not in rows[0]]
        values = metric_values_of(store, run_id, missing)
        for row in rows:
            row.update(dict.fromkeys(missing) | values.get(str(row["instance_id"]), {}))
        return rows

    if state is None:
        return read()
    key = ("explorer rows", state, run_id, wanted, get_query("instances").sql)
    return [dict(row) for row in VALUES_CACHE.computed_once(key, read)]


def kept_answers(store: Store, run_id: str, state: DatabaseState | None) -> dict[str, str]:
    """The model's answers to a run's instances (what the search reads), kept as
    :func:`run_rows` keeps the rows."""
    if state is None:
        return run_answers(store, run_id)
    key = ("explorer answers", state, run_id)
    return VALUES_CACHE.computed_once(key, lambda: run_answers(store, run_id))


RunContext = tuple[RunRecord, dict[str, InstanceNote], dict[str, tuple[object, ...]]]
"""A run (its id resolved), its instances' stored notes, and its related runs by method."""


def kept_run_context(
    store: Store,
    run_id: str,
    parts: Mapping[str, ExplorerPart],
    state: DatabaseState | None,
) -> RunContext:
    """The run ``run_id`` names (a unique prefix is enough), its instances' stored notes and
    the runs related to it (:func:`~haf_tui.tui.method_parts.related_runs` of ``parts``), as
    read before from the database in the same ``state`` (the runs list reads them ahead), else
    read (and kept unless ``state`` is None): the explorer's first reads, each a statement
    whose wait for the interpreter, while the main thread draws the new screen, cost more than
    the statement. Any write (a note too) changes the state. Copies of the dicts (the explorer
    adds the notes still pending to them)."""

    def read() -> RunContext:
        run = store.get_run(run_id)
        suites = RunConfig.model_validate_json(run.config_json).suites
        notes = instance_notes(store, run.run_id)
        return run, notes, related_runs(store, run.run_id, suites, parts)

    if state is None:
        return read()
    key = ("explorer run", state, run_id, tuple(parts))
    run, notes, related = VALUES_CACHE.computed_once(key, read)
    return run, dict(notes), dict(related)


def metric_names(methods: Iterable[Method[Any]]) -> list[str]:
    """The instance metrics of ``methods`` (those an instance read brings)."""
    return [spec.name for method in methods for spec in method.metrics]


def kept_opening(
    store: Store,
    run_id: str,
    ids: tuple[str, ...],
    attached: Mapping[str, AttachedReader],
    shown_metrics: Sequence[str],
    state: DatabaseState | None,
) -> list[InstanceData]:
    """The instances the explorer opens on (:func:`opening_ids`), as :func:`read_instances`
    reads them, kept as :func:`run_rows` keeps the rows: read ahead on the runs list, an explorer
    opened then shows them unread (shared, not copied: nothing changes an instance once read).
    The related runs and metrics follow from the run in that ``state``; the key holds only the
    ids."""

    def read() -> list[InstanceData]:
        return read_instances(store, run_id, list(ids), attached, shown_metrics)

    if state is None:
        return read()
    return VALUES_CACHE.computed_once(("explorer opening", state, run_id, ids), read)
