-- name: table4_instances
-- title: Table 4 per instance — each finished instance's RS / RN and their parts
-- description: The values behind Table 4's instance-mean rule, one row per run × finished
--   instance × test ('RS (SUF)', 'RN (NEC)') that has individual tests: the instance's mean
--   over its JUSTIFY reasons of the score, C(Y) (c_y), S(Y)/N(Y) (decision_weight) and
--   I_S/I_N (informativeness); NULL where no reason of the instance defines it. The means add
--   the reasons in their order, so the same store gives the same bits.
-- params: run_ids (VARCHAR[]; default []; runs to show, empty list = all runs)
WITH tests AS (
    SELECT * FROM (VALUES ('SUF', 'RS', 'rs', 'i_s'), ('NEC', 'RN', 'rn', 'i_n'))
        AS t(test, metric, score_name, info_name)
),
reason_tests AS (
    SELECT DISTINCT g.run_id, g.instance_id, g.sub_index AS reason_index, t.*
    FROM generations g
    JOIN tests t ON t.test = g.test
    JOIN instance_results f ON f.run_id = g.run_id AND f.instance_id = g.instance_id
    WHERE g.stage = 'individual'
      AND (len($run_ids::VARCHAR[]) = 0 OR list_contains($run_ids::VARCHAR[], g.run_id))
),
reason_values AS (
    SELECT r.run_id, r.instance_id, r.metric, r.test, r.reason_index,
           max(m.value) FILTER (WHERE m.metric = r.score_name) AS score,
           max(m.value) FILTER (WHERE m.metric = 'c_y') AS c_y,
           max(m.value) FILTER (WHERE m.metric = 'decision_weight') AS decision_weight,
           max(m.value) FILTER (WHERE m.metric = r.info_name) AS informativeness
    FROM reason_tests r
    JOIN reason_metrics m
      ON m.run_id = r.run_id AND m.instance_id = r.instance_id
     AND m.stage = 'justify' AND m.reason_index = r.reason_index
    GROUP BY ALL
)
SELECT run_id,
       instance_id,
       metric || ' (' || test || ')' AS test,
       avg(score ORDER BY reason_index) AS score,
       avg(c_y ORDER BY reason_index) AS c_y,
       avg(decision_weight ORDER BY reason_index) AS decision_weight,
       avg(informativeness ORDER BY reason_index) AS informativeness
FROM reason_values
GROUP BY ALL
ORDER BY run_id, instance_id, test DESC
