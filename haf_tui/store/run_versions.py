"""What a run records of who generated it, added to when a resume runs elsewhere (issue 33
§3: a resume on other servers records them beside the ones that began the run)."""

from __future__ import annotations

import json

from haf_tui.store.db import Store


def add_run_versions(store: Store, run_id: str, entries: dict[str, str]) -> None:
    """Merge ``entries`` into run ``run_id``'s ``versions`` (an entry of the same key is
    replaced)."""
    if not entries:
        return
    versions = store.get_run(run_id).versions | entries
    with store.transaction() as con:
        con.execute("UPDATE runs SET versions = ? WHERE run_id = ?", [json.dumps(versions), run_id])
