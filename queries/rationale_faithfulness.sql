-- name: rationale_faithfulness
-- title: Rationales — faithfulness by removal (P1 Table 4 COMP, SUFF; P2 Tables 4 and 9)
-- description: Per run with the rationales suite (model × dataset × strategy) and rationale:
--   prompted (the prompt_predicted rows: ŷ shown), occlusion, and the baselines human (HARD),
--   random (RANDOM of Top-Var size, one row per seed) and everything (all input words).
--   n = instances with that rationale (for random: per seed; human and random only exist on
--   instances with a gold rationale); comp = mean p(ŷ | x) − p(ŷ | x without R), suff = mean
--   p(ŷ | x) − p(ŷ | only R) (everything: 0 by definition), flip_rate = 100 · mean flip
--   (argmax without R ≠ ŷ), each over the instances where it is defined (*_n of them; an
--   unscored text leaves it NULL); words_removed = mean |R| where flip is defined
--   (P2 Table 9; R = ∅ removes nothing and flips nothing). Random: every column is the mean over
--   seeds of the per-seed dataset value, *_sd the sample standard deviation over seeds (n_seeds
--   of them; NULL with one seed). selection = the strategy with its k or ratio; variant = the
--   prompt (normal, short). RATIONALES.md §6.2, §6.5.
-- params: run_ids (VARCHAR[]; default []; runs to show, empty list = all runs)
WITH selected AS (
    SELECT run_id, model_file, dataset_id,
           json_extract_string(config, '$.settings.rationales.variant') AS variant,
           json_extract_string(config, '$.settings.rationales.strategy') AS strategy,
           TRY_CAST(json_extract(config, '$.settings.rationales.k') AS INTEGER) AS k,
           TRY_CAST(json_extract(config, '$.settings.rationales.ratio') AS DOUBLE) AS ratio
    FROM runs
    WHERE len($run_ids::VARCHAR[]) = 0 OR list_contains($run_ids::VARCHAR[], run_id)
),
kinds AS (
    SELECT * FROM (VALUES ('prompt_predicted', 'prompted', 1), ('occlusion', 'occlusion', 2),
                          ('human', 'human', 3), ('random', 'random', 4),
                          ('everything', 'everything', 5)) AS t(source, rationale, rationale_order)
),
per_seed AS (
    SELECT run_id, source, seed,
           count(*) AS n,
           avg(comp) AS comp,
           count(comp) AS comp_n,
           avg(suff) AS suff,
           count(suff) AS suff_n,
           100 * avg(flip) AS flip_rate,
           count(flip) AS flip_n,
           avg(size) FILTER (WHERE flip IS NOT NULL) AS words_removed
    FROM rationales
    WHERE source IN (SELECT source FROM kinds) AND run_id IN (SELECT run_id FROM selected)
    GROUP BY ALL
)
SELECT s.run_id,
       s.model_file,
       s.dataset_id,
       s.strategy,
       s.variant,
       s.strategy || CASE s.strategy WHEN 'top_k' THEN ' k=' || s.k
                                     WHEN 'top_ratio' THEN ' ' || round(100 * s.ratio, 1) || '%'
                                     ELSE '' END AS selection,
       k.rationale,
       f.source,
       count(*) AS n_seeds,
       max(f.n) AS n,
       avg(f.comp) AS comp,
       stddev_samp(f.comp) AS comp_sd,
       max(f.comp_n) AS comp_n,
       avg(f.suff) AS suff,
       stddev_samp(f.suff) AS suff_sd,
       max(f.suff_n) AS suff_n,
       avg(f.flip_rate) AS flip_rate,
       stddev_samp(f.flip_rate) AS flip_rate_sd,
       max(f.flip_n) AS flip_n,
       avg(f.words_removed) AS words_removed
FROM per_seed f
JOIN selected s USING (run_id)
JOIN kinds k USING (source)
GROUP BY s.run_id, s.model_file, s.dataset_id, s.strategy, s.variant, s.k, s.ratio,
         k.rationale, f.source, k.rationale_order
ORDER BY s.dataset_id, s.model_file, s.run_id, k.rationale_order
