"""What this machine measured: the last finished runs of some model files, their running time,
how much they did, and how many of their instances went past JUSTIFY (for time estimates that
come from the store, not from a guess)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from haf_tui.config import RunConfig
from haf_tui.store.db import Store
from haf_tui.vocabulary import STAGES

_PAST_RUNS_SQL = """
SELECT r.model_file, CAST(r.config AS VARCHAR) AS config, r.seconds_running,
       (SELECT count(*) FROM instance_results i WHERE i.run_id = r.run_id) AS n_done,
       (SELECT coalesce(sum(g.output_tokens), 0) FROM generations g
        WHERE g.run_id = r.run_id) AS n_tokens,
       (SELECT count(*) FROM instance_results i
        WHERE i.run_id = r.run_id AND i.stopped IS NULL) AS n_on,
       (SELECT coalesce(sum(i.n_reasons), 0) FROM instance_results i
        WHERE i.run_id = r.run_id AND i.stopped IS NULL) AS n_reasons_on,
       (SELECT count(*) FROM generations g
        WHERE g.run_id = r.run_id AND list_contains($answer_stages::VARCHAR[], g.stage))
        AS n_answers,
       (SELECT coalesce(sum(g.output_tokens), 0) FROM generations g
        WHERE g.run_id = r.run_id AND list_contains($answer_stages::VARCHAR[], g.stage))
        AS n_answer_tokens,
       (SELECT count(*) FROM generations g WHERE g.run_id = r.run_id) AS n_generations
FROM runs r
WHERE r.status = 'finished' AND r.seconds_running > 0 AND r.parent_run_id IS NULL
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
    instances_on: int = 0
    """Instances whose JUSTIFY answer let the follow-up stages run (a stance with reasons)."""
    reasons_on: int = 0
    """The reasons of those instances, all together."""
    answers: int = 0
    """HAF's generations (JUSTIFY and the follow-up stages)."""
    answer_tokens: int = 0
    """Their output tokens."""
    generations: int = 0
    """All its generations (every suite's)."""


def past_runs(store: Store, model_files: Sequence[str], per_model: int = 5) -> list[PastRun]:
    """The last ``per_model`` finished runs of each of ``model_files``, newest first."""
    stages = list(STAGES)
    rows = store.query(_PAST_RUNS_SQL, {"files": list(model_files), "answer_stages": stages})[1]
    kept: dict[str, int] = {}
    found: list[PastRun] = []
    for row in rows:
        model_file, config, seconds, done, tokens, on, reasons, answers, answer_tokens = row[:9]
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
                int(on),
                int(reasons),
                int(answers),
                int(answer_tokens),
                int(row[9]),
            )
        )
    return found
