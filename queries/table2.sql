-- name: table2
-- title: Table 2 — instances whose UPHOLD-REASON decision says the reasons suffice
-- description: Per run: the share (%) of instances whose internal / external decision is
--   Y = NO (no additional reason required). *_n counts instances with that stage's generation
--   (UNCLEAR and MAYBE decisions stay in the denominator); *_no how many said NO.
-- params: run_ids (VARCHAR[]; default []; runs to show, empty list = all runs)
WITH selected AS (
    SELECT run_id, model_file, dataset_id
    FROM runs
    WHERE len($run_ids::VARCHAR[]) = 0 OR list_contains($run_ids::VARCHAR[], run_id)
),
decisions AS (
    SELECT run_id,
           count(*) FILTER (WHERE stage = 'internal') AS internal_n,
           count(*) FILTER (WHERE stage = 'internal' AND decision = 'NO') AS internal_no,
           count(*) FILTER (WHERE stage = 'external') AS external_n,
           count(*) FILTER (WHERE stage = 'external' AND decision = 'NO') AS external_no
    FROM generations
    WHERE stage IN ('internal', 'external') AND run_id IN (SELECT run_id FROM selected)
    GROUP BY run_id
)
SELECT s.run_id,
       s.model_file,
       s.dataset_id,
       100 * d.internal_no::DOUBLE / nullif(d.internal_n, 0) AS internal_sufficient_pct,
       coalesce(d.internal_no, 0) AS internal_no,
       coalesce(d.internal_n, 0) AS internal_n,
       100 * d.external_no::DOUBLE / nullif(d.external_n, 0) AS external_sufficient_pct,
       coalesce(d.external_no, 0) AS external_no,
       coalesce(d.external_n, 0) AS external_n
FROM selected s
LEFT JOIN decisions d USING (run_id)
ORDER BY s.dataset_id, s.model_file, s.run_id
