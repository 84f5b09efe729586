-- name: figure2
-- title: Figure 2 — SoS and DiS by stance × JUSTIFY decision confidence
-- description: Mean instance SoS and DiS per run, JUSTIFY stance (toxic / maybe / non-toxic) and
--   band of the JUSTIFY decision confidence C: low if C < low_edge, medium if
--   low_edge ≤ C < high_edge, high if C ≥ high_edge; 'undefined' (C is NULL) appears only when
--   such instances exist. n_instances: finished instances in the cell; sos_n / dis_n: those with
--   a defined (non-NULL) value. Every stance × low/medium/high cell is listed, empty ones with n 0.
-- params: run_ids (VARCHAR[]; default []; runs to show, empty list = all runs),
--   low_edge (DOUBLE; default 0.6; lower edge of the medium band),
--   high_edge (DOUBLE; default 0.8; lower edge of the high band)
WITH selected AS (
    SELECT run_id, model_file, dataset_id
    FROM runs
    WHERE len($run_ids::VARCHAR[]) = 0 OR list_contains($run_ids::VARCHAR[], run_id)
),
stances AS (
    SELECT * FROM (VALUES ('toxic', 1), ('maybe', 2), ('non-toxic', 3)) AS t(stance, stance_order)
),
bands AS (
    SELECT * FROM (VALUES ('low', 1), ('medium', 2), ('high', 3), ('undefined', 4))
        AS b(band, band_order)
),
instances AS (
    SELECT r.run_id, r.instance_id, r.stance,
           g.decision_confidence AS confidence,
           CASE
               WHEN g.decision_confidence IS NULL THEN 'undefined'
               WHEN g.decision_confidence < $low_edge::DOUBLE THEN 'low'
               WHEN g.decision_confidence < $high_edge::DOUBLE THEN 'medium'
               ELSE 'high'
           END AS band
    FROM instance_results r
    LEFT JOIN generations g
      ON g.run_id = r.run_id AND g.instance_id = r.instance_id
     AND g.stage = 'justify' AND g.sub_index = -1
    WHERE r.run_id IN (SELECT run_id FROM selected)
),
instance_values AS (
    SELECT i.run_id, i.instance_id, i.stance, i.band, i.confidence,
           max(m.value) FILTER (WHERE m.metric = 'sos') AS sos,
           max(m.value) FILTER (WHERE m.metric = 'dis') AS dis
    FROM instances i
    LEFT JOIN instance_metrics m
      ON m.run_id = i.run_id AND m.instance_id = i.instance_id AND m.metric IN ('sos', 'dis')
    GROUP BY ALL
),
cells AS (
    SELECT run_id, stance, band,
           count(*) AS n_instances,
           avg(confidence) AS confidence_mean,
           avg(sos) AS sos_mean,
           count(sos) AS sos_n,
           avg(dis) AS dis_mean,
           count(dis) AS dis_n
    FROM instance_values
    GROUP BY ALL
)
SELECT s.run_id,
       s.model_file,
       s.dataset_id,
       st.stance,
       b.band,
       coalesce(c.n_instances, 0) AS n_instances,
       c.confidence_mean,
       c.sos_mean,
       coalesce(c.sos_n, 0) AS sos_n,
       c.dis_mean,
       coalesce(c.dis_n, 0) AS dis_n
FROM selected s
CROSS JOIN stances st
CROSS JOIN bands b
LEFT JOIN cells c ON c.run_id = s.run_id AND c.stance = st.stance AND c.band = b.band
WHERE b.band <> 'undefined' OR c.n_instances > 0
ORDER BY s.dataset_id, s.model_file, s.run_id, st.stance_order, b.band_order
