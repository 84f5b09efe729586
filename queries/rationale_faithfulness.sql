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
--   of them; NULL with one seed). Adaptive RANDOM (instances with different numbers of seeds,
--   random_tolerance): comp, suff, flip_rate and words_removed weigh each instance alike (a
--   row 1/n_i of its instance's n_i seeds), *_sd and n_seeds are over the seeds every
--   instance has. selection = the strategy with its k or ratio; variant = the
--   prompt (normal, short). docs/methods/rationales.md#62-faithfulness, docs/methods/rationales.md#65-reports.
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
                          ('attention', 'attention', 3), ('saliency', 'saliency', 4),
                          ('input_x_gradient', 'input×gradient', 5),
                          ('human', 'human', 6), ('random', 'random', 7),
                          ('everything', 'everything', 8)) AS t(source, rationale, rationale_order)
),
random_seeds AS (  -- RANDOM masks per instance: all alike, or adaptive (each its own)
    SELECT run_id, instance_id, count(*) AS n_i
    FROM rationales
    WHERE source = 'random' AND run_id IN (SELECT run_id FROM selected)
    GROUP BY ALL
),
common AS (  -- the seeds every instance has, and whether instances differ (adaptive)
    SELECT run_id, min(n_i) AS common_seeds, min(n_i) < max(n_i) AS adaptive
    FROM random_seeds
    GROUP BY run_id
),
weighted AS (  -- adaptive RANDOM: each instance's seeds weigh 1/n_i together
    SELECT r.run_id,
           sum(r.comp / w.n_i) / sum(1.0 / w.n_i) FILTER (WHERE r.comp IS NOT NULL) AS comp,
           sum(r.suff / w.n_i) / sum(1.0 / w.n_i) FILTER (WHERE r.suff IS NOT NULL) AS suff,
           100 * sum(r.flip / w.n_i) / sum(1.0 / w.n_i) FILTER (WHERE r.flip IS NOT NULL)
               AS flip_rate,
           sum(r.size / w.n_i) FILTER (WHERE r.flip IS NOT NULL)
               / sum(1.0 / w.n_i) FILTER (WHERE r.flip IS NOT NULL) AS words_removed
    FROM rationales r
    JOIN random_seeds w USING (run_id, instance_id)
    WHERE r.source = 'random'
    GROUP BY r.run_id
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
    LEFT JOIN common USING (run_id)
    WHERE source IN (SELECT source FROM kinds) AND run_id IN (SELECT run_id FROM selected)
          AND (source <> 'random' OR seed < common_seeds)
    GROUP BY run_id, source, seed
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
       CASE WHEN f.source = 'random' AND any_value(c.adaptive) THEN any_value(wt.comp)
            ELSE avg(f.comp) END AS comp,
       stddev_samp(f.comp) AS comp_sd,
       max(f.comp_n) AS comp_n,
       CASE WHEN f.source = 'random' AND any_value(c.adaptive) THEN any_value(wt.suff)
            ELSE avg(f.suff) END AS suff,
       stddev_samp(f.suff) AS suff_sd,
       max(f.suff_n) AS suff_n,
       CASE WHEN f.source = 'random' AND any_value(c.adaptive) THEN any_value(wt.flip_rate)
            ELSE avg(f.flip_rate) END AS flip_rate,
       stddev_samp(f.flip_rate) AS flip_rate_sd,
       max(f.flip_n) AS flip_n,
       CASE WHEN f.source = 'random' AND any_value(c.adaptive) THEN any_value(wt.words_removed)
            ELSE avg(f.words_removed) END AS words_removed
FROM per_seed f
JOIN selected s USING (run_id)
JOIN kinds k USING (source)
LEFT JOIN common c USING (run_id)
LEFT JOIN weighted wt USING (run_id)
GROUP BY s.run_id, s.model_file, s.dataset_id, s.strategy, s.variant, s.k, s.ratio,
         k.rationale, f.source, k.rationale_order
ORDER BY s.dataset_id, s.model_file, s.run_id, k.rationale_order
