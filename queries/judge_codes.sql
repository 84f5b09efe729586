-- name: judge_codes
-- title: Judge — one judge run's label codes, per instance and criterion
-- description: One row per judge_* instance metric of the judge run $judge_run: the instance,
--   the metric (judge_<criterion id>, and the run's other judge_* values) and its value (a
--   criterion's label code; NULL where no label was read). The explorer's judge view and haf
--   judge read the codes from it. docs/methods/judge.md.
-- params: judge_run (VARCHAR; the judge run's exact id)
SELECT instance_id, metric, value
FROM instance_metrics
WHERE run_id = $judge_run AND starts_with(metric, 'judge_')
ORDER BY instance_id, metric;
