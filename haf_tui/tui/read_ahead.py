"""Reading ahead on the runs list (issue 44 §2): once the cursor has rested on a run
(:data:`REST_SECONDS`), what the explorer lists for it and what the metrics screen shows first
(Table 1 and the runs) are read in a thread worker and kept by the database's state
(:func:`~haf_tui.tui.run_cache.database_state`), so a first opening of either finds them, as
an opening again does. Nothing is read while the database is being written (no state: nothing
would be kept), and nothing is read twice for one state (the caches' own keys)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from haf_tui.tui.run_cache import DatabaseState

if TYPE_CHECKING:
    from haf_tui.tui.store_reader import StoreReader

REST_SECONDS: Final = 0.5
"""How long the cursor rests on a run before its reads start (a key before: no read, so
moving through the list reads nothing)."""
_last_read: list[tuple[str, str, DatabaseState]] = []
"""The database, run and state read ahead last: resting there again reads nothing (not even
the run, which the caches' keys would need)."""


def read_ahead(reader: StoreReader, run_id: str) -> bool:
    """Read and keep the explorer's rows of run ``run_id`` and the metrics screen's first
    panel (thread worker); False when nothing was read (the database written in the last
    moments: nothing would be kept; or read ahead already at this state). The screens'
    modules are imported here, in the worker (the runs list starts without them)."""
    from haf_tui.config import RunConfig
    from haf_tui.tui.filters import list_schema
    from haf_tui.tui.instance_reader import run_rows
    from haf_tui.tui.metrics_data import load_metrics_data, panel_specs

    state = reader.database_state()  # (before reading, as the screens take it)
    if state is None or (str(reader.path), run_id, state) in _last_read:
        return False
    with reader.reading() as store:
        run = store.get_run(run_id)
        suites = RunConfig.model_validate_json(run.config_json).suites
        run_rows(store, run.run_id, list_schema(RunConfig(suites=suites)), state)
        first = next(iter(panel_specs()), None)
        if first is not None:
            load_metrics_data(store, [first.key], state=state)
    _last_read[:] = [(str(reader.path), run_id, state)]
    return True
