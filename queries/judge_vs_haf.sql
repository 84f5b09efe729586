-- name: judge_vs_haf
-- title: Judge vs HAF — the judge's ratings of each explanation beside its SoS and DiS
-- description: One row per explanation a judge run rated that comes from a HAF run (datasets
--   run:RUN_ID and edits:RUN_ID; edited copies left out), joined on the instance id with the
--   source run's instance metrics. overall = the Overall label's code (1–5), overall_expected
--   = E = Σ p(l)·code(l) (constrained mode); mean = the mean normalised score over the
--   criteria with a label (Supports left out, Factual N/A left out, Unnecessary information
--   inverted; docs/methods/judge.md#2-the-eight-criteria), n_criteria of them; supports_matches = 1 when Supports names the
--   stance the explanation argued for, 0 when it names the other, NULL for maybe or no label;
--   min_mass = the lowest label mass of the instance (constrained). sos, dis: the source run's
--   instance values (NULL where undefined). Spearman ρ over these rows: haf report --report
--   judge-vs-haf-summary.
-- params: run_ids (VARCHAR[]; default []; judge runs to show, empty list = all runs)
WITH selected AS (
    SELECT run_id, model_file, dataset_id
    FROM runs
    WHERE (len($run_ids::VARCHAR[]) = 0 OR list_contains($run_ids::VARCHAR[], run_id))
      AND list_contains(json_extract_string(config, '$.suites[*]'), 'judge')
),
judged AS (
    SELECT s.run_id, s.model_file, r.instance_id, i.position,
           json_extract_string(i.extra, '$.stance') AS stance,
           json_extract_string(i.extra, '$.source_run') AS source_run
    FROM selected s
    JOIN instance_results r ON r.run_id = s.run_id
    JOIN instances i ON i.dataset_id = s.dataset_id AND i.instance_id = r.instance_id
    WHERE json_extract(i.extra, '$.judge_edit') IS NULL
      AND json_extract_string(i.extra, '$.source_run') IS NOT NULL
),
criteria AS (  -- haf_tui.judge.criteria: the codes' range of each scored criterion
    SELECT * FROM (VALUES ('overall', 1, 5, false),
                          ('well_written', 0, 1, false),
                          ('related', 0, 1, false),
                          ('factual', 0, 1, false),
                          ('new_info', 0, 3, false),
                          ('unnecessary_info', 0, 1, true),
                          ('contrastive', 0, 1, false))
        AS t(criterion, low, high, inverted)
),
judge_values AS (
    SELECT j.run_id, j.instance_id,
           any_value(m.value) FILTER (WHERE m.metric = 'judge_overall') AS overall,
           any_value(m.value) FILTER (WHERE m.metric = 'judge_overall_expected')
               AS overall_expected,
           any_value(m.value) FILTER (WHERE m.metric = 'judge_supports_matches')
               AS supports_matches,
           min(m.value) FILTER (WHERE m.metric LIKE 'judge\_%\_mass' ESCAPE '\') AS min_mass
    FROM judged j
    JOIN instance_metrics m ON m.run_id = j.run_id AND m.instance_id = j.instance_id
    GROUP BY ALL
),
normalised AS (
    SELECT j.run_id, j.instance_id,
           avg(CASE WHEN c.inverted THEN 1 - (m.value - c.low) / (c.high - c.low)
                    ELSE (m.value - c.low) / (c.high - c.low) END) AS mean,
           count(*) AS n_criteria
    FROM judged j
    JOIN instance_metrics m ON m.run_id = j.run_id AND m.instance_id = j.instance_id
    JOIN criteria c ON m.metric = 'judge_' || c.criterion
    WHERE m.value IS NOT NULL AND NOT (c.criterion = 'factual' AND m.value = -1)
    GROUP BY ALL
),
haf AS (
    SELECT j.run_id, j.instance_id,
           any_value(h.value) FILTER (WHERE h.metric = 'sos') AS sos,
           any_value(h.value) FILTER (WHERE h.metric = 'dis') AS dis
    FROM judged j
    JOIN instance_metrics h ON h.run_id = j.source_run AND h.instance_id = j.instance_id
    WHERE h.metric IN ('sos', 'dis')
    GROUP BY ALL
)
SELECT j.run_id,
       j.model_file,
       j.source_run,
       src.model_file AS judged,
       j.instance_id,
       j.stance,
       v.overall::INTEGER AS overall,
       v.overall_expected,
       n.mean,
       coalesce(n.n_criteria, 0) AS n_criteria,
       v.supports_matches::INTEGER AS supports_matches,
       v.min_mass,
       h.sos,
       h.dis
FROM judged j
LEFT JOIN runs src ON src.run_id = j.source_run
LEFT JOIN judge_values v ON v.run_id = j.run_id AND v.instance_id = j.instance_id
LEFT JOIN normalised n ON n.run_id = j.run_id AND n.instance_id = j.instance_id
LEFT JOIN haf h ON h.run_id = j.run_id AND h.instance_id = j.instance_id
ORDER BY src.model_file, j.model_file, j.run_id, j.position
