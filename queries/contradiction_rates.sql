-- name: contradiction_rates
-- title: Contradiction rates per stage
-- description: Per run and follow-up stage (and test for individual prompts): n_no generations
--   with Y = NO (the reasons suffice), n_contradictions of them still listing new reasons,
--   pct_of_no = 100·n_contradictions/n_no and pct_of_all = 100·n_contradictions/n_generations.
-- params: run_ids (VARCHAR[]; default []; runs to show, empty list = all runs)
WITH selected AS (
    SELECT run_id, model_file, dataset_id
    FROM runs
    WHERE len($run_ids::VARCHAR[]) = 0 OR list_contains($run_ids::VARCHAR[], run_id)
),
with_reasons AS (
    SELECT DISTINCT run_id, instance_id, stage, sub_index
    FROM reasons
    WHERE stage IN ('internal', 'external', 'individual')  -- HAF's follow-ups alone
      AND run_id IN (SELECT run_id FROM selected)
),
rates AS (
    SELECT g.run_id, g.stage, g.test,
           count(*) AS n_generations,
           count(*) FILTER (WHERE g.decision = 'NO') AS n_no,
           count(*) FILTER (WHERE g.decision = 'NO' AND w.run_id IS NOT NULL)
               AS n_contradictions
    FROM generations g
    LEFT JOIN with_reasons w
      ON w.run_id = g.run_id AND w.instance_id = g.instance_id
     AND w.stage = g.stage AND w.sub_index = g.sub_index
    WHERE g.stage IN ('internal', 'external', 'individual')
      AND g.run_id IN (SELECT run_id FROM selected)
    GROUP BY ALL
)
SELECT s.run_id,
       s.model_file,
       s.dataset_id,
       r.stage,
       r.test,
       r.n_generations,
       r.n_no,
       r.n_contradictions,
       100 * r.n_contradictions::DOUBLE / nullif(r.n_no, 0) AS pct_of_no,
       100 * r.n_contradictions::DOUBLE / nullif(r.n_generations, 0) AS pct_of_all
FROM selected s
JOIN rates r USING (run_id)
ORDER BY s.dataset_id, s.model_file, s.run_id,
         CASE r.stage WHEN 'internal' THEN 1 WHEN 'external' THEN 2 ELSE 3 END, r.test
