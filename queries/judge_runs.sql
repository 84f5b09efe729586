-- name: judge_runs
-- title: Judge — the runs of a dataset, or one run, that may hold the judge suite
-- description: One row per run whose dataset is one of $datasets (the judge's datasets of a
--   run's explanations, explanations-RUN_ID and explanation-edits-RUN_ID), or whose id is
--   $judge_run: its id, status, model file, dataset, creation time and config (JSON text, which
--   says whether the run has the judge suite, its prompt wording and mode). Finished runs
--   first, then newest first. docs/methods/judge.md.
-- params: datasets (VARCHAR[]; default []; dataset ids), judge_run (VARCHAR; default ''; a run id)
SELECT run_id, status, model_file, dataset_id, created_at, CAST(config AS VARCHAR) AS config
FROM runs
WHERE list_contains($datasets::VARCHAR[], dataset_id) OR run_id = $judge_run
ORDER BY (status = 'finished') DESC, created_at DESC;
