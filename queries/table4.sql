-- name: table4
-- title: Table 4 — RS and RN split into decision confidence, decision weight and informativeness
-- description: One row per run × individual test: SUF gives RS_j = S(Y_j)·C(Y_j)·(1 − I_S),
--   NEC gives RN_j = N(Y_j)·C(Y_j)·I_N. Columns: the score, C(Y) (c_y), S(Y)/N(Y)
--   (decision_weight) and I_S/I_N (informativeness). *_pooled: mean over every JUSTIFY reason
--   (the reference's rule), *_pooled_n: non-NULL reason values; *_instance_mean: mean of the
--   instances' means of those reason values, *_instance_n: instances with a defined mean.
-- params: run_ids (VARCHAR[]; default []; runs to show, empty list = all runs)
WITH selected AS (
    SELECT run_id, model_file, dataset_id
    FROM runs
    WHERE len($run_ids::VARCHAR[]) = 0 OR list_contains($run_ids::VARCHAR[], run_id)
),
tests AS (
    SELECT * FROM (VALUES ('SUF', 'RS', 'rs', 'i_s', 1), ('NEC', 'RN', 'rn', 'i_n', 2))
        AS t(test, metric, score_name, info_name, test_order)
),
-- which test the sub-prompt of each JUSTIFY reason j ran (sub_index = j)
reason_tests AS (
    SELECT DISTINCT g.run_id, g.instance_id, g.sub_index AS reason_index, t.*
    FROM generations g
    JOIN tests t ON t.test = g.test
    WHERE g.stage = 'individual' AND g.run_id IN (SELECT run_id FROM selected)
),
reason_values AS (
    SELECT r.run_id, r.instance_id, r.test, r.reason_index,
           max(m.value) FILTER (WHERE m.metric = r.score_name) AS score,
           max(m.value) FILTER (WHERE m.metric = 'c_y') AS c_y,
           max(m.value) FILTER (WHERE m.metric = 'decision_weight') AS decision_weight,
           max(m.value) FILTER (WHERE m.metric = r.info_name) AS informativeness
    FROM reason_tests r
    JOIN reason_metrics m
      ON m.run_id = r.run_id AND m.instance_id = r.instance_id
     AND m.stage = 'justify' AND m.reason_index = r.reason_index
    GROUP BY ALL
),
instance_values AS (
    SELECT run_id, instance_id, test,
           avg(score) AS score,
           avg(c_y) AS c_y,
           avg(decision_weight) AS decision_weight,
           avg(informativeness) AS informativeness
    FROM reason_values
    GROUP BY ALL
),
pooled AS (
    SELECT run_id, test,
           avg(score) AS score, count(score) AS score_n,
           avg(c_y) AS c_y, count(c_y) AS c_y_n,
           avg(decision_weight) AS decision_weight, count(decision_weight) AS decision_weight_n,
           avg(informativeness) AS informativeness, count(informativeness) AS informativeness_n
    FROM reason_values
    GROUP BY ALL
),
per_instance AS (
    SELECT run_id, test,
           avg(score) AS score, count(score) AS score_n,
           avg(c_y) AS c_y, count(c_y) AS c_y_n,
           avg(decision_weight) AS decision_weight, count(decision_weight) AS decision_weight_n,
           avg(informativeness) AS informativeness, count(informativeness) AS informativeness_n
    FROM instance_values
    GROUP BY ALL
)
SELECT s.run_id,
       s.model_file,
       s.dataset_id,
       t.test,
       t.metric,
       p.score AS score_pooled,
       coalesce(p.score_n, 0) AS score_pooled_n,
       p.c_y AS c_y_pooled,
       coalesce(p.c_y_n, 0) AS c_y_pooled_n,
       p.decision_weight AS decision_weight_pooled,
       coalesce(p.decision_weight_n, 0) AS decision_weight_pooled_n,
       p.informativeness AS informativeness_pooled,
       coalesce(p.informativeness_n, 0) AS informativeness_pooled_n,
       i.score AS score_instance_mean,
       coalesce(i.score_n, 0) AS score_instance_n,
       i.c_y AS c_y_instance_mean,
       coalesce(i.c_y_n, 0) AS c_y_instance_n,
       i.decision_weight AS decision_weight_instance_mean,
       coalesce(i.decision_weight_n, 0) AS decision_weight_instance_n,
       i.informativeness AS informativeness_instance_mean,
       coalesce(i.informativeness_n, 0) AS informativeness_instance_n
FROM selected s
CROSS JOIN tests t
LEFT JOIN pooled p ON p.run_id = s.run_id AND p.test = t.test
LEFT JOIN per_instance i ON i.run_id = s.run_id AND i.test = t.test
ORDER BY s.dataset_id, s.model_file, s.run_id, t.test_order
