-- name: model_comparison
-- title: Model comparison — instance means side by side
-- description: Long form, one row per metric × run: the mean of instance means (instance_mean)
--   and n, the instances with a defined value. Rows are ordered by metric (Table 1's SoS, DiS,
--   UII, UEI, RS, RN first, then DiS-dpp, Δ-PE, I_S, I_N, C(Y), decision confidences), then by
--   the run's place in run_ids (all runs: by dataset, model). run_order numbers the runs.
--   extra_metrics (with extra_labels) adds more metrics after those, in their order (the
--   compare report passes every metric of the suites the runs share); an added metric no
--   selected run has a value of is left out.
-- params: run_ids (VARCHAR[]; default []; runs to compare in this order, empty list = all runs),
--   extra_metrics (VARCHAR[]; default []; more instance metrics by stored name, after the above),
--   extra_labels (VARCHAR[]; default []; their labels in the same order, else the name)
WITH selected AS (
    SELECT run_id, model_file, dataset_id,
           row_number() OVER (
               ORDER BY coalesce(list_position($run_ids::VARCHAR[], run_id), 0),
                        dataset_id, model_file, run_id
           ) AS run_order
    FROM runs
    WHERE len($run_ids::VARCHAR[]) = 0 OR list_contains($run_ids::VARCHAR[], run_id)
),
table1_metrics AS (
    SELECT * FROM (VALUES
        ('sos', 'SoS', 1), ('dis', 'DiS', 2), ('uii', 'UII', 3), ('uei', 'UEI', 4),
        ('rs', 'RS', 5), ('rn', 'RN', 6), ('dis_dpp', 'DiS-dpp', 7),
        ('delta_pe_internal', 'Δ-PE internal', 8), ('delta_pe_external', 'Δ-PE external', 9),
        ('i_s', 'I_S', 10), ('i_n', 'I_N', 11), ('c_y', 'C(Y)', 12),
        ('decision_confidence_justify', 'C(decision) justify', 13),
        ('decision_confidence_internal', 'C(decision) internal', 14),
        ('decision_confidence_external', 'C(decision) external', 15)
    ) AS m(metric, label, metric_order)
),
means AS (
    SELECT run_id, metric, avg(value) AS instance_mean, count(value) AS n
    FROM instance_metrics
    WHERE run_id IN (SELECT run_id FROM selected)
    GROUP BY ALL
),
extra AS (
    SELECT unnest($extra_metrics::VARCHAR[]) AS metric,
           generate_subscripts($extra_metrics::VARCHAR[], 1) AS k
),
metrics AS (
    SELECT metric, label, metric_order FROM table1_metrics
    UNION ALL
    SELECT e.metric, coalesce(list_extract($extra_labels::VARCHAR[], e.k), e.metric), 100 + e.k
    FROM extra e
    WHERE e.metric NOT IN (SELECT metric FROM table1_metrics)
      AND e.metric IN (SELECT metric FROM means WHERE n > 0)
)
SELECT m.metric,
       m.label,
       s.run_order,
       s.run_id,
       s.model_file,
       s.dataset_id,
       x.instance_mean,
       coalesce(x.n, 0) AS n
FROM metrics m
CROSS JOIN selected s
LEFT JOIN means x ON x.run_id = s.run_id AND x.metric = m.metric
ORDER BY m.metric_order, s.run_order
