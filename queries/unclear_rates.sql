-- name: unclear_rates
-- title: UNCLEAR decisions per stage and instances stopped after JUSTIFY
-- description: Two kinds of row per run. kind 'unclear decision': per stage (and test for
--   individual prompts), n generations whose decision is UNCLEAR (stance 'unclear' for JUSTIFY)
--   out of of_n generations of that stage. kind 'stopped': per reason an instance stopped after
--   JUSTIFY (detail, e.g. 'unclear stance', 'no reasons'), n instances out of of_n finished ones.
--   pct = 100·n/of_n.
-- params: run_ids (VARCHAR[]; default []; runs to show, empty list = all runs)
WITH selected AS (
    SELECT run_id, model_file, dataset_id
    FROM runs
    WHERE len($run_ids::VARCHAR[]) = 0 OR list_contains($run_ids::VARCHAR[], run_id)
),
unclear AS (
    SELECT run_id,
           'unclear decision' AS kind,
           1 AS kind_order,
           stage,
           CASE stage WHEN 'justify' THEN 1 WHEN 'internal' THEN 2 WHEN 'external' THEN 3
                      ELSE 4 END AS stage_order,
           test AS detail,
           count(*) FILTER (WHERE upper(decision) = 'UNCLEAR') AS n,
           count(*) AS of_n
    FROM generations
    WHERE run_id IN (SELECT run_id FROM selected)
      AND stage IN ('justify', 'internal', 'external', 'individual')  -- HAF's stages alone
    GROUP BY ALL
),
finished AS (
    SELECT run_id, count(*) AS of_n
    FROM instance_results
    WHERE run_id IN (SELECT run_id FROM selected)
    GROUP BY run_id
),
stopped AS (
    SELECT r.run_id,
           'stopped' AS kind,
           2 AS kind_order,
           'justify' AS stage,
           1 AS stage_order,
           r.stopped AS detail,
           count(*) AS n,
           any_value(f.of_n) AS of_n
    FROM instance_results r
    JOIN finished f USING (run_id)
    WHERE r.stopped IS NOT NULL
    GROUP BY ALL
),
combined AS (
    SELECT * FROM unclear
    UNION ALL BY NAME
    SELECT * FROM stopped
)
SELECT s.run_id,
       s.model_file,
       s.dataset_id,
       c.kind,
       c.stage,
       c.detail,
       c.n,
       c.of_n,
       100 * c.n::DOUBLE / nullif(c.of_n, 0) AS pct
FROM selected s
JOIN combined c USING (run_id)
ORDER BY s.dataset_id, s.model_file, s.run_id, c.kind_order, c.stage_order, c.detail
