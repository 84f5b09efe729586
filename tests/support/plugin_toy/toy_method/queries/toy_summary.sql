-- name: toy_summary
-- title: Toy method per run
-- description: Per run with the toy plug-in method: instances answered (n) and the share of
--   answers holding the settings' word (match_rate).
-- params: run_ids (VARCHAR[]; default []; runs to show, empty list = all runs)
SELECT r.model_file, r.dataset_id, r.run_id,
       count(*) AS n,
       avg(m.value) AS match_rate
FROM runs r
JOIN instance_metrics m ON m.run_id = r.run_id AND m.metric = 'toy_match'
WHERE len($run_ids) = 0 OR list_contains($run_ids, r.run_id)
GROUP BY ALL
ORDER BY r.run_id
