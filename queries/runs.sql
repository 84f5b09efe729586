-- name: runs
-- title: Runs and their progress
-- description: Every run, newest first: status, model × dataset, similarity model, planned and
--   finished instances (n_done, pct_done), instances stopped after JUSTIFY, generations stored,
--   running time and seconds per finished instance, and the error of a failed run.
-- params: none
WITH finished AS (
    SELECT run_id, count(*) AS n_done, count(stopped) AS n_stopped
    FROM instance_results
    GROUP BY run_id
),
generated AS (
    SELECT run_id, count(*) AS n_generations, sum(output_tokens) AS n_tokens
    FROM generations
    GROUP BY run_id
)
SELECT r.run_id,
       r.created_at,
       r.updated_at,
       r.status,
       r.model_file,
       r.dataset_id,
       r.similarity_model,
       r.n_planned,
       coalesce(f.n_done, 0) AS n_done,
       100 * coalesce(f.n_done, 0)::DOUBLE / nullif(r.n_planned, 0) AS pct_done,
       coalesce(f.n_stopped, 0) AS n_stopped,
       coalesce(g.n_generations, 0) AS n_generations,
       coalesce(g.n_tokens, 0)::BIGINT AS n_tokens,
       r.seconds_running,
       r.seconds_running / nullif(f.n_done, 0) AS seconds_per_instance,
       r.error
FROM runs r
LEFT JOIN finished f USING (run_id)
LEFT JOIN generated g USING (run_id)
ORDER BY r.created_at DESC, r.run_id
