-- name: table1
-- title: Table 1 — HAF metrics per model × dataset
-- description: One row per run (a model × dataset cell of the paper's Table 1): SoS, DiS, UII,
--   UEI, RS and RN under both pooling rules. *_pooled is the reference's rule: the mean of every
--   reason-level value pooled across instances, *_pooled_n how many values it pooled (DiS is
--   instance-level, so dis_pooled is the mean of instance values). *_instance_mean is the mean of
--   instance means, *_instance_n how many instances the metric was defined on (non-NULL).
--   n_instances counts finished instances, n_stopped those stopped after JUSTIFY.
-- params: run_ids (VARCHAR[]; default []; runs to show, empty list = all runs)
WITH selected AS (
    SELECT run_id, model_file, dataset_id, similarity_model
    FROM runs
    WHERE len($run_ids::VARCHAR[]) = 0 OR list_contains($run_ids::VARCHAR[], run_id)
),
finished AS (
    SELECT run_id,
           count(*) AS n_instances,
           count(stopped) AS n_stopped
    FROM instance_results
    GROUP BY run_id
),
pooled AS (
    SELECT run_id,
           avg(value) FILTER (WHERE metric = 'sos') AS sos,
           count(value) FILTER (WHERE metric = 'sos') AS sos_n,
           avg(value) FILTER (WHERE metric = 'uii') AS uii,
           count(value) FILTER (WHERE metric = 'uii') AS uii_n,
           avg(value) FILTER (WHERE metric = 'uei') AS uei,
           count(value) FILTER (WHERE metric = 'uei') AS uei_n,
           avg(value) FILTER (WHERE metric = 'rs') AS rs,
           count(value) FILTER (WHERE metric = 'rs') AS rs_n,
           avg(value) FILTER (WHERE metric = 'rn') AS rn,
           count(value) FILTER (WHERE metric = 'rn') AS rn_n
    FROM reason_metrics
    WHERE run_id IN (SELECT run_id FROM selected)
    GROUP BY run_id
),
per_instance AS (
    SELECT run_id,
           avg(value) FILTER (WHERE metric = 'sos') AS sos,
           count(value) FILTER (WHERE metric = 'sos') AS sos_n,
           avg(value) FILTER (WHERE metric = 'dis') AS dis,
           count(value) FILTER (WHERE metric = 'dis') AS dis_n,
           avg(value) FILTER (WHERE metric = 'uii') AS uii,
           count(value) FILTER (WHERE metric = 'uii') AS uii_n,
           avg(value) FILTER (WHERE metric = 'uei') AS uei,
           count(value) FILTER (WHERE metric = 'uei') AS uei_n,
           avg(value) FILTER (WHERE metric = 'rs') AS rs,
           count(value) FILTER (WHERE metric = 'rs') AS rs_n,
           avg(value) FILTER (WHERE metric = 'rn') AS rn,
           count(value) FILTER (WHERE metric = 'rn') AS rn_n
    FROM instance_metrics
    WHERE run_id IN (SELECT run_id FROM selected)
    GROUP BY run_id
)
SELECT s.run_id,
       s.model_file,
       s.dataset_id,
       s.similarity_model,
       coalesce(f.n_instances, 0) AS n_instances,
       coalesce(f.n_stopped, 0) AS n_stopped,
       p.sos AS sos_pooled,
       coalesce(p.sos_n, 0) AS sos_pooled_n,
       i.sos AS sos_instance_mean,
       coalesce(i.sos_n, 0) AS sos_instance_n,
       i.dis AS dis_pooled,
       coalesce(i.dis_n, 0) AS dis_pooled_n,
       i.dis AS dis_instance_mean,
       coalesce(i.dis_n, 0) AS dis_instance_n,
       p.uii AS uii_pooled,
       coalesce(p.uii_n, 0) AS uii_pooled_n,
       i.uii AS uii_instance_mean,
       coalesce(i.uii_n, 0) AS uii_instance_n,
       p.uei AS uei_pooled,
       coalesce(p.uei_n, 0) AS uei_pooled_n,
       i.uei AS uei_instance_mean,
       coalesce(i.uei_n, 0) AS uei_instance_n,
       p.rs AS rs_pooled,
       coalesce(p.rs_n, 0) AS rs_pooled_n,
       i.rs AS rs_instance_mean,
       coalesce(i.rs_n, 0) AS rs_instance_n,
       p.rn AS rn_pooled,
       coalesce(p.rn_n, 0) AS rn_pooled_n,
       i.rn AS rn_instance_mean,
       coalesce(i.rn_n, 0) AS rn_instance_n
FROM selected s
LEFT JOIN finished f USING (run_id)
LEFT JOIN pooled p USING (run_id)
LEFT JOIN per_instance i USING (run_id)
ORDER BY s.dataset_id, s.model_file, s.run_id
