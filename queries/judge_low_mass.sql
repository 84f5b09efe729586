-- name: judge_low_mass
-- title: Judge — label-mass warnings: labels the answer format forced
-- description: Every (instance, criterion) of a constrained judge run whose label mass
--   Σ exp lp(l) over the criterion's allowed labels is below $mass_threshold: the model wanted
--   to answer something other than a label, so its label says little (docs/methods/judge.md#43-constrained-answers). code =
--   the chosen label's code. Lowest mass first per run.
-- params: run_ids (VARCHAR[]; default []; runs to show, empty list = all runs),
--   mass_threshold (DOUBLE; default 0.5; a label mass below it is a warning)
WITH selected AS (
    SELECT run_id, model_file, dataset_id
    FROM runs
    WHERE (len($run_ids::VARCHAR[]) = 0 OR list_contains($run_ids::VARCHAR[], run_id))
      AND list_contains(json_extract_string(config, '$.suites[*]'), 'judge')
),
masses AS (
    SELECT m.run_id, m.instance_id,
           regexp_extract(m.metric, '^judge_(.*)_mass$', 1) AS criterion,
           m.value AS mass
    FROM instance_metrics m
    WHERE m.run_id IN (SELECT run_id FROM selected)
      AND m.metric LIKE 'judge\_%\_mass' ESCAPE '\'
      AND m.value < $mass_threshold
)
SELECT s.run_id,
       s.model_file,
       s.dataset_id,
       x.instance_id,
       x.criterion,
       x.mass,
       c.value::INTEGER AS code
FROM masses x
JOIN selected s ON s.run_id = x.run_id
LEFT JOIN instance_metrics c
    ON c.run_id = x.run_id AND c.instance_id = x.instance_id
   AND c.metric = 'judge_' || x.criterion
ORDER BY s.dataset_id, s.model_file, s.run_id, x.mass, x.instance_id, x.criterion
