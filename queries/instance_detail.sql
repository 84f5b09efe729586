-- name: instance_detail
-- title: One instance — every generation with its decision, confidence and reasons
-- description: One row per parsed reason of every generation of one instance (a generation with
--   no reasons gives one row with reason_index NULL), in stage order justify, internal, external,
--   individual, then other suites' stages (classify: one row per forced spelling, decision its
--   label, decision_confidence its probability). decision is the JUSTIFY stance or the
--   follow-up Y; reason_confidence is the
--   reason's TokenSAR confidence. Reason-level metrics: sos, rs / rn, c_y, decision_weight,
--   i_s / i_n on JUSTIFY reasons (j = reason_index), uii / uei on internal / external reasons.
-- params: run_id (VARCHAR; a run id or a unique prefix), instance_id (VARCHAR)
WITH metric_values AS (
    SELECT stage, sub_index, reason_index,
           max(value) FILTER (WHERE metric = 'sos') AS sos,
           max(value) FILTER (WHERE metric = 'rs') AS rs,
           max(value) FILTER (WHERE metric = 'rn') AS rn,
           max(value) FILTER (WHERE metric = 'c_y') AS c_y,
           max(value) FILTER (WHERE metric = 'decision_weight') AS decision_weight,
           max(value) FILTER (WHERE metric = 'i_s') AS i_s,
           max(value) FILTER (WHERE metric = 'i_n') AS i_n,
           max(value) FILTER (WHERE metric = 'uii') AS uii,
           max(value) FILTER (WHERE metric = 'uei') AS uei
    FROM reason_metrics
    WHERE run_id = $run_id AND instance_id = $instance_id
    GROUP BY ALL
)
SELECT g.stage,
       g.sub_index,
       g.test,
       g.decision,
       g.decision_confidence,
       g.decision_sentence,
       g.finish_reason,
       g.output_tokens,
       r.reason_index,
       r.text AS reason_text,
       r.confidence AS reason_confidence,
       r.token_count AS reason_tokens,
       m.sos,
       m.rs,
       m.rn,
       m.c_y,
       m.decision_weight,
       m.i_s,
       m.i_n,
       m.uii,
       m.uei
FROM generations g
LEFT JOIN reasons r
  ON r.run_id = g.run_id AND r.instance_id = g.instance_id
 AND r.stage = g.stage AND r.sub_index = g.sub_index
LEFT JOIN metric_values m
  ON m.stage = g.stage AND m.sub_index = g.sub_index AND m.reason_index = r.reason_index
WHERE g.run_id = $run_id AND g.instance_id = $instance_id
ORDER BY CASE g.stage WHEN 'justify' THEN 1 WHEN 'internal' THEN 2 WHEN 'external' THEN 3
                      WHEN 'individual' THEN 4 ELSE 5 END,
         g.sub_index, r.reason_index NULLS FIRST
