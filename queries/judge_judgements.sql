-- name: judge_judgements
-- title: Judge — the judge runs' ratings of some instances
-- description: One row per judge_* instance metric of the instances $ids in the judge runs
--   $judge_runs: run, instance, metric (judge_<criterion id>, judge_* masses and scores) and
--   value. The explorer places them under the JUSTIFY node of the run whose explanations were
--   judged. docs/methods/judge.md.
-- params: judge_runs (VARCHAR[]; default []; judge run ids), ids (VARCHAR[]; default []; instance ids)
SELECT run_id, instance_id, metric, value
FROM instance_metrics
WHERE list_contains($judge_runs::VARCHAR[], run_id)
  AND list_contains($ids::VARCHAR[], instance_id)
  AND starts_with(metric, 'judge_')
ORDER BY run_id, instance_id, metric;
