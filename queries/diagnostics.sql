-- name: diagnostics
-- title: Parse diagnostics per stage
-- description: Per run, stage and diagnostic kind (e.g. 'no decision sentence', 'no reasons',
--   'reason without tokens', 'truncated'): n diagnostics, n_instances they touch, and one
--   example (instance and detail).
-- params: run_ids (VARCHAR[]; default []; runs to show, empty list = all runs)
WITH selected AS (
    SELECT run_id, model_file, dataset_id
    FROM runs
    WHERE len($run_ids::VARCHAR[]) = 0 OR list_contains($run_ids::VARCHAR[], run_id)
)
SELECT s.run_id,
       s.model_file,
       s.dataset_id,
       d.stage,
       d.kind,
       count(*) AS n,
       count(DISTINCT d.instance_id) AS n_instances,
       min(d.instance_id) AS example_instance,
       arg_min(d.detail, d.instance_id) AS example_detail
FROM selected s
JOIN parse_diagnostics d USING (run_id)
GROUP BY s.run_id, s.model_file, s.dataset_id, d.stage, d.kind
ORDER BY s.dataset_id, s.model_file, s.run_id,
         CASE d.stage WHEN 'justify' THEN 1 WHEN 'internal' THEN 2 WHEN 'external' THEN 3
                      ELSE 4 END, d.kind
