-- name: instances
-- title: Instances of one run with their metrics
-- description: One row per instance the run evaluates (the first n_planned of its dataset),
--   in dataset order: the label, the
--   JUSTIFY stance and decision confidence, why it stopped (if it did), how many reasons, and
--   its instance-level SoS, DiS, UII, UEI, RS, RN (NULL: undefined); done is false for
--   instances the run has not finished yet. n_unclear counts its generations whose decision
--   is UNCLEAR (JUSTIFY stance 'unclear' included); n_contradictions counts its follow-up
--   generations that say Y = NO yet list new reasons (the rows of the contradictions query).
-- params: run_id (VARCHAR; a run id or a unique prefix)
WITH run AS (
    SELECT run_id, dataset_id, n_planned FROM runs WHERE run_id = $run_id
),
metric_values AS (
    SELECT instance_id,
           max(value) FILTER (WHERE metric = 'sos') AS sos,
           max(value) FILTER (WHERE metric = 'dis') AS dis,
           max(value) FILTER (WHERE metric = 'uii') AS uii,
           max(value) FILTER (WHERE metric = 'uei') AS uei,
           max(value) FILTER (WHERE metric = 'rs') AS rs,
           max(value) FILTER (WHERE metric = 'rn') AS rn
    FROM instance_metrics
    WHERE run_id = $run_id
    GROUP BY instance_id
),
new_reasons AS (
    SELECT instance_id, stage, sub_index
    FROM reasons
    WHERE run_id = $run_id AND stage IN ('internal', 'external', 'individual')
    GROUP BY ALL
),
flags AS (
    SELECT g.instance_id,
           count(*) FILTER (WHERE upper(g.decision) = 'UNCLEAR') AS n_unclear,
           count(n.instance_id) FILTER (WHERE g.stage <> 'justify' AND g.decision = 'NO')
               AS n_contradictions
    FROM generations g
    LEFT JOIN new_reasons n
      ON n.instance_id = g.instance_id AND n.stage = g.stage AND n.sub_index = g.sub_index
    WHERE g.run_id = $run_id
      AND g.stage IN ('justify', 'internal', 'external', 'individual')  -- HAF's stages alone
    GROUP BY g.instance_id
)
SELECT i.position,
       i.instance_id,
       i.label,
       r.instance_id IS NOT NULL AS done,
       coalesce(r.stance, g.decision) AS stance,
       g.decision_confidence AS justify_confidence,
       r.stopped,
       r.n_reasons,
       m.sos,
       m.dis,
       m.uii,
       m.uei,
       m.rs,
       m.rn,
       coalesce(f.n_unclear, 0) AS n_unclear,
       coalesce(f.n_contradictions, 0) AS n_contradictions,
       i.text
FROM run
JOIN instances i ON i.dataset_id = run.dataset_id AND i.position < run.n_planned
LEFT JOIN instance_results r ON r.run_id = run.run_id AND r.instance_id = i.instance_id
LEFT JOIN generations g
  ON g.run_id = run.run_id AND g.instance_id = i.instance_id
 AND g.stage = 'justify' AND g.sub_index = -1
LEFT JOIN metric_values m ON m.instance_id = i.instance_id
LEFT JOIN flags f ON f.instance_id = i.instance_id
ORDER BY i.position
