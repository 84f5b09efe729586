"""A run that stopped taking texts once it had what it asked for (``RunConfig.until_complete``,
the demo's rule): its texts become the first ``limit`` it evaluated, in its config and its
planned count, so every reader sees the run it is."""

from __future__ import annotations

import json

from haf_tui.store.db import Store


def limit_run(store: Store, run_id: str, limit: int) -> None:
    """Run ``run_id`` evaluates the dataset's first ``limit`` texts."""
    config = json.loads(store.get_run(run_id).config_json)
    config["limit"] = limit
    with store.transaction() as con:
        con.execute(
            "UPDATE runs SET config = ?, n_planned = ? WHERE run_id = ?",
            [json.dumps(config), limit, run_id],
        )
