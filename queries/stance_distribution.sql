-- name: stance_distribution
-- title: Stance distribution
-- description: Per run: how many finished instances got each JUSTIFY stance (toxic / maybe /
--   non-toxic / unclear, then any other value found) and their share (%) of the run's finished
--   instances (n_finished). Stances no instance got are listed with n 0.
-- params: run_ids (VARCHAR[]; default []; runs to show, empty list = all runs)
WITH selected AS (
    SELECT run_id, model_file, dataset_id
    FROM runs
    WHERE len($run_ids::VARCHAR[]) = 0 OR list_contains($run_ids::VARCHAR[], run_id)
),
known AS (
    SELECT * FROM (VALUES ('toxic', 1), ('maybe', 2), ('non-toxic', 3), ('unclear', 4))
        AS k(stance, stance_order)
),
counts AS (
    SELECT run_id, stance, count(*) AS n
    FROM instance_results
    WHERE run_id IN (SELECT run_id FROM selected)
    GROUP BY ALL
),
stances AS (
    SELECT stance, stance_order FROM known
    UNION
    SELECT DISTINCT stance, 99 FROM counts WHERE stance NOT IN (SELECT stance FROM known)
),
totals AS (
    SELECT run_id, sum(n) AS n_finished FROM counts GROUP BY run_id
)
SELECT s.run_id,
       s.model_file,
       s.dataset_id,
       st.stance,
       coalesce(c.n, 0) AS n,
       coalesce(t.n_finished, 0)::BIGINT AS n_finished,
       100 * coalesce(c.n, 0)::DOUBLE / nullif(t.n_finished, 0) AS pct
FROM selected s
CROSS JOIN stances st
LEFT JOIN counts c ON c.run_id = s.run_id AND c.stance = st.stance
LEFT JOIN totals t ON t.run_id = s.run_id
ORDER BY s.dataset_id, s.model_file, s.run_id, st.stance_order, st.stance
