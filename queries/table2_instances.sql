-- name: table2_instances
-- title: Table 2 per instance — each finished instance's UPHOLD-REASON decisions
-- description: The values behind Table 2, one row per run × finished instance × stage
--   (internal, external) that has the stage's generation: no_pct is 100 when the decision is
--   Y = NO (no additional reason required), else 0 (UNCLEAR and MAYBE count as not NO), so
--   their mean is Table 2's % NO and a bootstrap over instances gives its interval.
-- params: run_ids (VARCHAR[]; default []; runs to show, empty list = all runs)
SELECT g.run_id,
       g.instance_id,
       g.stage,
       CASE WHEN g.decision = 'NO' THEN 100.0 ELSE 0.0 END AS no_pct
FROM generations g
JOIN instance_results f ON f.run_id = g.run_id AND f.instance_id = g.instance_id
WHERE g.stage IN ('internal', 'external')
  AND (len($run_ids::VARCHAR[]) = 0 OR list_contains($run_ids::VARCHAR[], g.run_id))
ORDER BY g.run_id, g.instance_id, g.stage DESC
