-- name: datasets
-- title: Stored datasets with their instances, skipped rows and sample
-- description: Every stored dataset, oldest first: name, id, kind (builtin, file, paper,
--   paper-sample), source, n_instances, n_skipped (rows left out as not evaluable, see
--   skipped_rows), n_filtered (rows the paper's preprocessing left out, sampling included),
--   the sample's seed, size and population, the file encoding, and the Hub revision.
-- params: none
SELECT d.name,
       d.dataset_id,
       coalesce(d.meta ->> '$.kind', 'stored') AS kind,
       d.source,
       d.n_instances,
       (SELECT count(*) FROM skipped_rows s WHERE s.dataset_id = d.dataset_id) AS n_skipped,
       (SELECT sum(CAST(v AS BIGINT))
          FROM (SELECT unnest(json_extract(d.meta, '$.filtered.*')) AS v)) AS n_filtered,
       CAST(d.meta ->> '$.sample.seed' AS INTEGER) AS sample_seed,
       CAST(d.meta ->> '$.sample.n' AS INTEGER) AS sample_n,
       CAST(d.meta ->> '$.sample.population' AS INTEGER) AS sample_population,
       d.meta ->> '$.encoding' AS encoding,
       d.meta ->> '$.origin.revision' AS hub_revision,
       d.created_at
FROM datasets d
ORDER BY d.created_at, d.dataset_id
