"""Reading ahead on the runs list (issue 44 §2): as the list first shows its runs, for the run
under the cursor, and then once the cursor has rested on a run (:data:`REST_SECONDS`), what
the explorer lists for it, the instances it opens on, and what the metrics screen shows first
(Table 1 and the runs) are read in a thread worker and kept by the database's state
(:func:`~haf_tui.tui.run_cache.database_state`), so a first opening of either finds them, as an
opening again does. Nothing is read while the database is being written (no state: nothing
would be kept), and nothing is read twice for one state (the caches' own keys). An explorer
opened on a run whose rows are being read ahead says so as it starts (:func:`want_rows`) and
then waits for the rows and its first instances (:func:`wait_for_rows`) rather than making the
same reads beside them."""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from haf_tui.tui.run_cache import DatabaseState

if TYPE_CHECKING:
    from haf_tui.store import StatementInterrupt, Store
    from haf_tui.tui.filters import ListSchema
    from haf_tui.tui.store_reader import StoreReader

REST_SECONDS: Final = 0.5
"""How long the cursor rests on a run before its reads start (a key before: no read, so
moving through the list reads nothing)."""
FIRST_REST_SECONDS: Final = 0.0
"""The same for the run under the cursor as the list first shows its runs (none: read at once,
before a first key)."""
_last_read: list[tuple[str, str, DatabaseState]] = []
"""The database, run and state read ahead last: resting there again reads nothing (not even
the run, which the caches' keys would need)."""


ROWS_WAIT_SECONDS: Final = 2.0
"""The most a screen waits for what is being read ahead for it (then it reads it itself)."""
_rows_under_way: dict[tuple[str, str], threading.Event] = {}
"""(database, run) → set once the explorer's rows of that run, being read ahead, are kept, and
the instances it opens on (read while the list is shown or an explorer wants them)."""
_ahead_under_way: dict[str, threading.Event] = {}
"""database → set once the read ahead on it has ended (the metrics panel kept, or not)."""
_rows_awaited: set[threading.Event] = set()
"""The reads of rows ahead (their events) an explorer wants or waited for: the instances it
opens on are then read ahead for it even once the list is no longer shown, its own reads come
next, and the metrics screen's panel is not read beside them (that slowed the explorer's first
instance from about 50 ms to 230). Marked and let go under :data:`_under_way_lock` with the
event's removal, so a mark is that read's alone (one left for the run's next read ahead kept
it from ever reading the panel)."""
_rows_reading: dict[str, tuple[threading.Event, StatementInterrupt]] = {}
"""database → the explorer's rows being read ahead now (their event), and what stops the
store's statements reading them (:func:`stop_rows_ahead`)."""
_stopped_at: dict[str, float] = {}
"""database → when a screen last stopped its read ahead (:func:`stop_rows_ahead`): a read
ahead begun before then stops, one begun after goes on."""
_panel_awaited: set[threading.Event] = set()
"""The reads ahead (their end's events) a metrics screen waits for: their panel is read even
once the runs list is no longer shown."""
_under_way_lock = threading.Lock()


def want_rows(reader: StoreReader, run_id: str) -> None:
    """Say that an explorer of run ``run_id`` is opening, before it reads what it needs first
    (it waits for the rows later, :func:`wait_for_rows`): the rows being read ahead now are
    followed by the instances it opens on, not by the metrics panel. (Thread worker.)"""
    _waited(_rows_under_way, (str(reader.path), run_id), _rows_awaited, timeout=0)


def wait_for_rows(reader: StoreReader, run_id: str, timeout: float = ROWS_WAIT_SECONDS) -> bool:
    """Wait until the explorer's rows of run ``run_id`` being read ahead now are kept (at most
    ``timeout`` s); whether none is being read now. (Thread worker.)"""
    return _waited(_rows_under_way, (str(reader.path), run_id), _rows_awaited, timeout)


def stop_rows_ahead(reader: StoreReader) -> None:
    """Stop the read ahead on this database begun before now, unless an explorer waits for
    its rows: the explorer's rows being read are interrupted, rows not begun yet are not
    read, and nothing more is read ahead (no instances, no panel). A screen that reads
    other things calls it as it starts: beside its own reads the rows only slowed them (a
    metrics screen opened as the runs list appeared waited for the rows, then the panel; a
    comparison shared the machine with them). (Thread worker.)"""
    path = str(reader.path)
    with _under_way_lock:
        _stopped_at[path] = time.monotonic()
        reading = _rows_reading.get(path)
        if reading is None or reading[0] in _rows_awaited:
            return
        reading[1].interrupt()  # (the statement running, and any next; under the lock, so an
        # explorer's want_rows comes before it or after: after, it reads the rows itself)


def _stopped(path: str, started: float, rows: threading.Event) -> bool:
    """Whether the read ahead on ``path`` begun at ``started`` is stopped (not for rows an
    explorer waits for)."""
    with _under_way_lock:
        return _stopped_at.get(path, -math.inf) >= started and rows not in _rows_awaited


def wait_for_read_ahead(reader: StoreReader, timeout: float = ROWS_WAIT_SECONDS) -> bool:
    """Wait until the read ahead under way on this database has ended, its metrics panel kept
    (at most ``timeout`` s); whether none is under way now. (The metrics screen's worker: a
    panel read beside the same panel's read ahead took the two of them twice as long.)"""
    return _waited(_ahead_under_way, str(reader.path), _panel_awaited, timeout)


def _waited(
    under_way: dict[Any, threading.Event],
    key: object,
    awaited: set[threading.Event],
    timeout: float,
) -> bool:
    """Wait for what is under way at ``key`` (marked in ``awaited`` as waited for, under the
    lock, as :func:`_ended` takes the mark) for at most ``timeout`` s; whether it has ended
    (or none was under way)."""
    with _under_way_lock:
        reading = under_way.get(key)
        if reading is not None:
            awaited.add(reading)
    return reading is None or reading.wait(timeout)


def _ended(under_way: dict[Any, threading.Event], key: object, event: threading.Event) -> bool:
    """What ``event`` stood for has ended (done or failed): those waiting for it go on;
    whether a screen waited for it (one that looks later finds it no longer under way)."""
    with _under_way_lock:
        if under_way.get(key) is event:
            del under_way[key]
        awaited = event in _rows_awaited
        _rows_awaited.discard(event)
        _panel_awaited.discard(event)
    event.set()
    return awaited


def read_ahead(
    reader: StoreReader, run_id: str, on_list: Callable[[], bool] = lambda: True
) -> bool:
    """Read and keep the explorer's rows of run ``run_id``, the instances it opens on, and the
    metrics screen's first panel (thread worker); False when nothing was read (the database
    written in the last moments: nothing would be kept; or read ahead already at this state;
    or stopped, :func:`stop_rows_ahead`, by the time its rows were in: rows read to their
    end are kept all the same).
    The instances are read only while ``on_list()`` (the runs list still shown) or for an
    explorer that wants them, the panel only while ``on_list()`` or for a metrics screen
    waiting for it: beside another screen's first reads it only slowed them (a comparison
    opened as the list appeared showed its data in 293–496 ms with it, 202–318 ms without,
    four pairs). The screens' modules are imported here, in the worker (the runs list starts
    without them)."""
    from haf_tui.config import RunConfig
    from haf_tui.tui.filters import list_schema
    from haf_tui.tui.metrics_data import load_metrics_data, panel_specs

    started = time.monotonic()
    state = reader.database_state()  # (before reading, as the screens take it)
    path = str(reader.path)
    if state is None or (path, run_id, state) in _last_read:
        return False
    key, rows_kept, ended = (path, run_id), threading.Event(), threading.Event()
    with _under_way_lock:
        _rows_under_way[key] = rows_kept
        _ahead_under_way[path] = ended
    try:
        try:
            with reader.reading() as store:
                run = store.get_run(run_id)
                suites = RunConfig.model_validate_json(run.config_json).suites
                schema = list_schema(RunConfig(suites=suites))
                read = (path, started, rows_kept)
                rows = _rows_unless_stopped(store, run.run_id, schema, state, read)
                if rows is None:
                    return False  # (stopped: read again when the cursor next rests here)
                with _under_way_lock:
                    wanted = on_list() or rows_kept in _rows_awaited
                if wanted:  # (an explorer opened meanwhile waits for these too)
                    _read_opening(store, run.run_id, suites, rows, state)
        finally:  # (kept or failed: an explorer waiting reads them, or says why)
            awaited = _ended(_rows_under_way, key, rows_kept)
        first = next(iter(panel_specs()), None)
        with _under_way_lock:
            wanted = on_list() or ended in _panel_awaited
        if _stopped(path, started, rows_kept):
            return True  # (rows kept, no panel: the next rest here reads it)
        if first is not None and not awaited and wanted:
            with reader.reading() as store:
                load_metrics_data(store, [first.key], state=state)
    finally:
        _ended(_ahead_under_way, path, ended)
    _last_read[:] = [(path, run_id, state)]
    return True


def _rows_unless_stopped(
    store: Store,
    run_id: str,
    schema: ListSchema,
    state: DatabaseState,
    read: tuple[str, float, threading.Event],
) -> list[dict[str, Any]] | None:
    """The explorer's rows of ``run_id`` (:func:`run_rows`, kept) for the read ahead ``read``
    (its database, when it began, its rows' event), read where :func:`stop_rows_ahead` can
    interrupt them; None once stopped."""
    from haf_tui.tui.instance_reader import run_rows

    path, started, event = read
    with _under_way_lock:
        _rows_reading[path] = (event, store.interruptible())
    try:
        if _stopped(path, started, event):
            return None
        rows = run_rows(store, run_id, schema, state)
    except Exception:
        if _stopped(path, started, event):
            return None  # (DuckDB's interruption: nothing kept)
        raise
    finally:
        with _under_way_lock:
            if _rows_reading.get(path, (None,))[0] is event:
                del _rows_reading[path]
        store.interruption = None  # (what follows the rows is not stopped mid-statement)
    return None if _stopped(path, started, event) else rows


def _read_opening(
    store: Store,
    run_id: str,
    suites: tuple[str, ...],
    rows: list[dict[str, Any]],
    state: DatabaseState,
) -> None:
    """Read and keep the instances the explorer opens on in ``rows`` (its first with reasons
    and its neighbours), as the explorer reads them: with the items of the runs related to it
    and the instance metrics of its methods. A read that fails, however (a database error
    the store passes on, a method's part), is left to the explorer, which reads them again and
    says why; the read ahead goes on to the metrics panel, and the runs list says nothing of a
    read no one asked for."""
    from haf_tui.config import RunConfig
    from haf_tui.methods.registry import methods, methods_of
    from haf_tui.tui.instance_reader import (
        kept_opening,
        kept_run_context,
        metric_names,
        opening_ids,
    )
    from haf_tui.tui.method_parts import attached_readers, explorer_parts

    ids = opening_ids(rows)
    if not ids:
        return
    parts, _ = explorer_parts(methods().values())  # (a part that failed: said by the explorer)
    with contextlib.suppress(Exception):  # (not kept: the explorer reads them, or says why)
        _, _, related = kept_run_context(store, run_id, parts, state)  # (the explorer's too)
        attached = attached_readers(parts, related)
        shown = metric_names(methods_of(RunConfig(suites=suites)))
        kept_opening(store, run_id, ids, attached, shown, state)
