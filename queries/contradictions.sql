-- name: contradictions
-- title: Contradictions — "the reasons suffice" (Y = NO) yet new reasons listed
-- description: Every internal / external / individual generation whose decision is Y = NO (no
--   additional reason required) but whose output still lists new reasons; n_new_reasons counts
--   them, first_reason shows the first. Per-run shares are in contradiction_rates.
-- params: run_ids (VARCHAR[]; default []; runs to show, empty list = all runs)
WITH selected AS (
    SELECT run_id, model_file, dataset_id
    FROM runs
    WHERE len($run_ids::VARCHAR[]) = 0 OR list_contains($run_ids::VARCHAR[], run_id)
),
new_reasons AS (
    SELECT run_id, instance_id, stage, sub_index,
           count(*) AS n_new_reasons,
           arg_min(text, reason_index) AS first_reason
    FROM reasons
    WHERE stage IN ('internal', 'external', 'individual')  -- HAF's follow-ups alone
      AND run_id IN (SELECT run_id FROM selected)
    GROUP BY ALL
)
SELECT s.run_id,
       s.model_file,
       s.dataset_id,
       g.instance_id,
       g.stage,
       g.sub_index,
       g.test,
       g.decision,
       g.decision_confidence,
       g.decision_sentence,
       n.n_new_reasons,
       n.first_reason
FROM selected s
JOIN generations g USING (run_id)
JOIN new_reasons n
  ON n.run_id = g.run_id AND n.instance_id = g.instance_id
 AND n.stage = g.stage AND n.sub_index = g.sub_index
LEFT JOIN instances i ON i.dataset_id = s.dataset_id AND i.instance_id = g.instance_id
WHERE g.stage IN ('internal', 'external', 'individual') AND g.decision = 'NO'
ORDER BY s.dataset_id, s.model_file, s.run_id, i.position, g.instance_id,
         CASE g.stage WHEN 'internal' THEN 1 WHEN 'external' THEN 2 ELSE 3 END, g.sub_index
