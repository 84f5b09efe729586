"""What this machine measured: the last finished runs of some model files, their running time
and how much they did (for time estimates that come from the store, not from a guess)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from haf_tui.config import RunConfig
from haf_tui.store.db import Store

_PAST_RUNS_SQL = """
SELECT r.model_file, CAST(r.config AS VARCHAR) AS config, r.seconds_running,
       (SELECT count(*) FROM instance_results i WHERE i.run_id = r.run_id) AS n_done,
       (SELECT coalesce(sum(g.output_tokens), 0) FROM generations g
        WHERE g.run_id = r.run_id) AS n_tokens
FROM runs r
WHERE r.status = 'finished' AND r.seconds_running > 0
  AND list_contains($files::VARCHAR[], r.model_file)
ORDER BY r.created_at DESC, r.run_id
"""


@dataclass(frozen=True)
class PastRun:
    """A finished run: its model file and config, seconds it ran, instances and output tokens."""

    model_file: str
    config: RunConfig
    seconds: float
    instances: int
    output_tokens: int


def past_runs(store: Store, model_files: Sequence[str], per_model: int = 5) -> list[PastRun]:
    """The last ``per_model`` finished runs of each of ``model_files``, newest first."""
    rows = store.query(_PAST_RUNS_SQL, {"files": list(model_files)})[1]
    kept: dict[str, int] = {}
    found: list[PastRun] = []
    for model_file, config, seconds, done, tokens in rows:
        if int(done) <= 0 or kept.get(str(model_file), 0) >= per_model:
            continue
        kept[str(model_file)] = kept.get(str(model_file), 0) + 1
        found.append(
            PastRun(
                str(model_file),
                RunConfig.model_validate_json(config),
                float(seconds),
                int(done),
                int(tokens),
            )
        )
    return found
